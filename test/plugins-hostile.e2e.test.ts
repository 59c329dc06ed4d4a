// End-to-end: a buggy external plugin never breaks the CLI's output (PL-6).

import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"

/** A single-file plugin that prints at import, in setup and in its tool. */
const noisyPlugin = `import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

console.log("printed at import")

export default definePlugin({
  id: "noisy",
  version: "1.0.0",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    process.stdout.write("printed in setup\\n")
    yield* api.tools.register(defineTool({
      name: "shout",
      description: "Shouts",
      effect: "read",
      input: Schema.Struct({}),
      run: () => Effect.sync(() => {
        console.log("printed by the tool")
        return textResult("shouted")
      })
    }))
  })
})
`

describe("hostile plugins (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let sandbox: CliSandbox | undefined
  afterEach(async () => {
    await server?.close()
    sandbox?.cleanup()
  })

  it("PL-6 what a plugin prints goes to stderr: `run --json` stdout stays JSONL, `run` stdout is the answer", async () => {
    server = await startOpenAiServer({
      replyFor: (_request, index) =>
        index % 2 === 0
          ? { kind: "tool", id: `call_${index}`, name: "p_acd6beff7c_shout", args: {} }
          : { kind: "text", text: "fine" }
    })
    sandbox = makeSandbox(server.baseURL)
    const plugin = join(sandbox.home, "..", "noisy.mjs")
    writeFileSync(plugin, noisyPlugin)
    const json = await sandbox.run(["run", "--json", "--plugin", plugin, "-m", "openai/test-model", "hi"])
    assert.strictEqual(json.code, 0, json.stderr)
    const lines = json.stdout.split("\n").filter((line) => line !== "")
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line)
    assert.include(json.stdout, '"shouted"')
    for (const printed of ["printed at import", "printed in setup", "printed by the tool"]) {
      assert.include(json.stderr, printed)
    }
    const text = await sandbox.run(["run", "--plugin", plugin, "-m", "openai/test-model", "hi"])
    assert.strictEqual(text.code, 0, text.stderr)
    assert.strictEqual(text.stdout, "fine\n")
  }, 60_000)
})
