// End-to-end: `plugins list` shows the warnings `run` shows of the builtin plugins' configuration (CLI-1).

import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"

describe("plugins list (end to end)", () => {
  let sandbox: CliSandbox | undefined
  afterEach(() => sandbox?.cleanup())

  it("CLI-1: `plugins list` prints an unknown key of builtinPlugins.memory as one stderr warning, as `run` does", async () => {
    sandbox = makeSandbox("http://127.0.0.1:9/v1")
    mkdirSync(sandbox.home, { recursive: true })
    const file = join(sandbox.home, "config.yaml")
    writeFileSync(file, "builtinPlugins:\n  memory:\n    bogus: 1\n")
    const expected = `alisio: warning: [memory] ${file}: unknown key builtinPlugins.memory.bogus is ignored`

    const listed = await sandbox.run(["plugins", "list"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.include(listed.stdout, "memory 0.1.0  (builtin)  loaded")
    assert.deepStrictEqual(
      listed.stderr.split("\n").filter((line) => line !== ""),
      [expected]
    )

    const json = await sandbox.run(["plugins", "list", "--json"])
    assert.strictEqual(json.code, 0, json.stderr)
    assert.isArray((JSON.parse(json.stdout) as { plugins: ReadonlyArray<unknown> }).plugins)
    assert.deepStrictEqual(
      json.stderr.split("\n").filter((line) => line !== ""),
      [expected]
    )

    const run = await sandbox.run(["run", "-m", "openai/test-model", "hi"])
    assert.include(run.stderr.split("\n"), expected, "the same line as `run`")
  })
})
