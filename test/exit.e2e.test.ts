// End-to-end: a command that used SQLite ends with its own exit code, never with a crash in the
// SQLite driver at exit (better-sqlite3 12 built against Node 24.19+ aborted every such process,
// exit 134, until the runtime kept its native objects alive: internal/sqliteDriver.ts).

import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"

describe("alisio exits cleanly after using SQLite (end to end)", () => {
  let server: OpenAiTestServer | undefined
  const sandboxes: Array<CliSandbox> = []
  afterEach(async () => {
    await server?.close()
    for (const sandbox of sandboxes.splice(0)) sandbox.cleanup()
  })

  it("ST-1 a new state home (migrations, then a run with the memory plugin) and a listing exit 0", async () => {
    server = await startOpenAiServer({ replyFor: () => ({ kind: "text", text: "done" }) })
    for (let i = 0; i < 2; i++) {
      const sandbox = makeSandbox(server.baseURL)
      sandboxes.push(sandbox)
      const listed = await sandbox.run(["sessions", "list"])
      assert.deepStrictEqual([listed.code, listed.signal], [0, null], listed.stderr)
      const ran = await sandbox.run(["run", "-m", "openai/test-model", "hello"])
      assert.deepStrictEqual([ran.code, ran.signal], [0, null], ran.stderr)
      assert.notInclude(ran.stderr, "Assertion failed")
    }
  })
})
