// End-to-end: the built `alisio` with hostile tool calls: a regular expression that backtracks for
// ever (TL-6), secrets in the environment (TL-8), a provider that echoes the key (TL-8).

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { decodeRunEvent, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { makeSandbox } from "./support/cli.js"
import type { Reply } from "./support/openaiServer.js"
import { useWorld } from "./support/world.js"

const parseJsonl = (stdout: string): ReadonlyArray<KnownRunEvent> =>
  stdout
    .trim()
    .split("\n")
    .flatMap((line) => {
      const decoded = decodeRunEvent(JSON.parse(line))
      return Either.isRight(decoded) && decoded.right._tag === "Known" ? [decoded.right.event] : []
    })

const completedResults = (events: ReadonlyArray<KnownRunEvent>): ReadonlyArray<string> =>
  events.flatMap((event) => (event.type === "tool_call_completed" ? [event.data.result] : []))

/** Every file below `dir`, as text (the database and its WAL included). */
const allBytes = (dir: string): string =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString("latin1"))
    .join("\n")

describe("hostile tool calls (end to end)", () => {
  const world = useWorld()
  const setup = async (replies: ReadonlyArray<Reply>) => (await world({ replies })).sandbox

  it("TL-6 grep runs on its search thread in the bundled CLI", async () => {
    const cli = await setup([
      { kind: "tool", id: "call_1", name: "grep", args: { pattern: "ne+dle" } },
      { kind: "text", text: "found it" }
    ])
    writeFileSync(join(cli.workspace, "hay.txt"), "hay\nneedle\n")
    const result = await cli.run(["run", "--json", "-m", "openai/test-model", "find the needle"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(completedResults(parseJsonl(result.stdout)), ["hay.txt:2: needle"])
  })

  it("TL-6 a catastrophic regular expression cannot hang a run: --timeout ends it run_failed timeout", async () => {
    const cli = await setup([
      { kind: "tool", id: "call_1", name: "grep", args: { pattern: "^(a+)+$" } },
      { kind: "text", text: "never reached" }
    ])
    writeFileSync(join(cli.workspace, "evil.txt"), `${"a".repeat(35)}!\n`)
    const result = await cli.run(["run", "--json", "--timeout", "3s", "-m", "openai/test-model", "search"])
    assert.strictEqual(result.code, 1, result.stderr)
    const last = parseJsonl(result.stdout).at(-1)
    assert.strictEqual(last?.type, "run_failed")
    assert.strictEqual(last?.type === "run_failed" ? last.data.code : undefined, "timeout")
  })

  it("TL-8 bash's environment holds no provider key and nothing named like a secret", async () => {
    const cli = await setup([
      { kind: "tool", id: "call_1", name: "bash", args: { command: "env" } },
      { kind: "text", text: "listed" }
    ])
    mkdirSync(cli.home, { recursive: true })
    writeFileSync(
      join(cli.home, "config.yaml"),
      [
        "providers:",
        "  acme: { baseURL: 'http://127.0.0.1:9/v1', apiKeyEnv: ACME_AUTH }",
        "shell:",
        "  environment:",
        "    set: { FROM_CONFIG: 'yes' }"
      ].join("\n")
    )
    const result = await cli.run(["run", "--json", "--yes", "-m", "openai/test-model", "show the environment"], {
      env: {
        OPENAI_API_KEY: "sk-e2e-0123456789abcdefghij",
        ACME_AUTH: "acme-credential-0123456789",
        GITHUB_TOKEN: "ghp_e2e_token",
        DB_PASSWORD: "e2e-password",
        VISIBLE_SETTING: "shown"
      }
    })
    assert.strictEqual(result.code, 0, result.stderr)
    const [env] = completedResults(parseJsonl(result.stdout))
    assert.include(env, "VISIBLE_SETTING=shown")
    assert.include(env, "FROM_CONFIG=yes")
    for (const secret of ["sk-e2e", "acme-credential", "ghp_e2e", "e2e-password", "OPENAI_API_KEY", "ACME_AUTH"]) {
      assert.notInclude(env, secret)
    }
  })

  it("TL-8 a 401 that echoes the key: neither stderr, stdout nor the stored run_failed holds the key", async () => {
    const key = "sk-e2e-echoed-0123456789abcdef"
    const echoing = createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        if (req.url?.endsWith("/models") === true) {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ object: "list", data: [{ id: "test-model", object: "model" }] }))
          return
        }
        const sent = String(req.headers.authorization ?? "").replace(/^Bearer /, "")
        res.writeHead(401, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${sent}.`, code: "invalid_api_key" } }))
      })
    })
    await new Promise<void>((resolve) => echoing.listen(0, "127.0.0.1", resolve))
    const { port } = echoing.address() as AddressInfo
    const sandbox = makeSandbox(`http://127.0.0.1:${port}/v1`)
    try {
      const result = await sandbox.run(["run", "--json", "-m", "openai/test-model", "hello"], {
        env: { OPENAI_API_KEY: key }
      })
      assert.strictEqual(result.code, 1, result.stderr)
      const failed = parseJsonl(result.stdout).at(-1)
      assert.strictEqual(failed?.type, "run_failed")
      assert.include(failed?.type === "run_failed" ? failed.data.error : "", "Incorrect API key provided: [redacted]")
      assert.notInclude(result.stdout, key)
      assert.notInclude(result.stderr, key)
      const replay = await sandbox.run(["sessions", "events", failed!.sessionId, "--json"], {
        env: { OPENAI_API_KEY: key }
      })
      assert.include(replay.stdout, "[redacted]")
      assert.notInclude(replay.stdout, key)
      assert.notInclude(allBytes(join(sandbox.home, "state")), key)
    } finally {
      echoing.closeAllConnections()
      await new Promise<void>((resolve) => echoing.close(() => resolve()))
      sandbox.cleanup()
    }
  })
})
