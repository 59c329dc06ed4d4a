// End-to-end: the state home is private (ST-6) — new files 0600 in 0700 folders, and what an
// older Alisio left readable by others is narrowed, which the CLI says once on stderr.

import { chmodSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"

const mode = (path: string) => statSync(path).mode & 0o777
const notice = "was readable by other users; made it private"

describe("alisio state permissions (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let sandbox: CliSandbox | undefined
  afterEach(async () => {
    await server?.close()
    sandbox?.cleanup()
  })

  it("ST-6 state left readable by others is made private, and the CLI says so once", async () => {
    server = await startOpenAiServer({
      replies: [1, 2, 3].map((n) => ({ kind: "text", text: `answer ${n}` }) as const)
    })
    sandbox = makeSandbox(server.baseURL)
    const state = join(sandbox.home, "state")
    const run = () => sandbox!.run(["run", "-m", "openai/test-model", "hello"])

    const fresh = await run()
    assert.strictEqual(fresh.code, 0, fresh.stderr)
    assert.notInclude(fresh.stderr, notice)
    assert.deepStrictEqual([state, join(state, "alisio.db")].map(mode), [0o700, 0o600])

    // As an older Alisio (or a loose umask) left them; older versions also remembered a model here.
    chmodSync(state, 0o755)
    chmodSync(join(state, "alisio.db"), 0o644)
    writeFileSync(join(state, "active-model.json"), '{"provider":"openai","model":"test-model"}\n', { mode: 0o644 })
    chmodSync(join(state, "active-model.json"), 0o644)
    const narrowed = await run()
    assert.strictEqual(narrowed.code, 0, narrowed.stderr)
    const lines = narrowed.stderr.split("\n").filter((line) => line.includes(notice))
    assert.strictEqual(lines.length, 1, narrowed.stderr)
    assert.include(lines[0], `alisio: the state in ${state}`)
    assert.include(lines[0], ". (was 0755)")
    assert.include(lines[0], "alisio.db (was 0644)")
    assert.include(lines[0], "active-model.json (was 0644)")
    assert.deepStrictEqual(
      [state, join(state, "alisio.db"), join(state, "active-model.json")].map(mode),
      [0o700, 0o600, 0o600]
    )

    const again = await run()
    assert.strictEqual(again.code, 0, again.stderr)
    assert.notInclude(again.stderr, notice)
  })
})
