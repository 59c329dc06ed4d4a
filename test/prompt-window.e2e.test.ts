// A prompt larger than the model's context window (CTX-1, CLI-1, ST-1), end to end: the built CLI
// against a local server that refuses over-long requests as llama.cpp and vLLM do, naming its window.

import { createRequire } from "node:module"
import { join } from "node:path"
import { decodeRunEvent, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type { CliSandbox } from "./support/cli.js"
import type { OpenAiTestServer, RecordedRequest, Reply } from "./support/openaiServer.js"
import { useWorld } from "./support/world.js"

const WINDOW = 8_192
/** About 50 000 tokens: more than an argument may hold, so it comes on stdin. */
const HUGE = `${"word ".repeat(40_000)}the end`

const parseJsonl = (stdout: string): ReadonlyArray<KnownRunEvent> =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const decoded = decodeRunEvent(JSON.parse(line))
      if (Either.isLeft(decoded) || decoded.right._tag !== "Known") throw new Error(`not a run event: ${line}`)
      return decoded.right.event
    })

interface BareDb {
  prepare(sql: string): { get(): Record<string, unknown> }
  close(): void
}
const Sqlite = createRequire(import.meta.url)("better-sqlite3") as new (
  filename: string,
  options?: { readonly readonly?: boolean }
) => BareDb
const count = (sandbox: CliSandbox, table: string): number => {
  const db = new Sqlite(join(sandbox.home, "state", "alisio.db"), { readonly: true })
  try {
    return Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get().n)
  } finally {
    db.close()
  }
}

const chat = (server: OpenAiTestServer) => server.requests.filter((r) => r.path.endsWith("/chat/completions"))
const tokensOf = (request: RecordedRequest) => Math.ceil(JSON.stringify(request.body).length / 4)

/** Refuses a request past `WINDOW` tokens, as a llama.cpp or vLLM server does. */
const refusing = {
  replyFor: (request: RecordedRequest): Reply =>
    tokensOf(request) > WINDOW
      ? {
          kind: "error",
          status: 400,
          message: `This model's maximum context length is ${WINDOW} tokens. However, your messages resulted in ${tokensOf(request)} tokens.`
        }
      : { kind: "text", text: "a short answer" }
}

describe("alisio run: a prompt larger than the context window (end to end)", () => {
  const world = useWorld()

  it("CTX-1 CLI-1 a prompt the server refuses ends its run saying so, the session goes on, and the next too large a prompt is refused up front with nothing stored", async () => {
    const { server, sandbox } = await world(refusing)
    const first = await sandbox.run(["run", "--json", "-m", "openai/test-model", "-"], { input: HUGE })
    assert.strictEqual(first.code, 1, first.stderr)
    const events = parseJsonl(first.stdout)
    const failed = events.at(-1)
    assert.strictEqual(failed?.type, "run_failed")
    if (failed?.type !== "run_failed") return
    assert.strictEqual(failed.data.code, "context_exhausted")
    assert.match(failed.data.error, /^Your prompt is about 50 \d{3} tokens, more than test-model can take/)
    assert.include(failed.data.error, "8 192 tokens (as the provider named it)")
    assert.include(failed.data.error, "left out of its later requests")
    const sessionId = failed.sessionId

    // The next run of the session is not stuck: the prompt is a note of its size in the request.
    const second = await sandbox.run(["run", "--json", "-m", "openai/test-model", "-s", sessionId, "a short question"])
    assert.strictEqual(second.code, 0, second.stderr)
    assert.strictEqual(parseJsonl(second.stdout).at(-1)?.type, "run_completed")
    const sent = JSON.stringify(chat(server).at(-1)!.body.messages)
    assert.notInclude(sent, "word word")
    assert.include(sent, "was left out here")
    assert.include(sent, "a short question")

    // The stored prompt stays whole for sessions show.
    const shown = await sandbox.run(["sessions", "show", sessionId])
    assert.strictEqual(shown.code, 0, shown.stderr)
    assert.include(shown.stdout, "word word word")

    // The window is known now: another prompt as large is refused before anything is stored.
    const requests = chat(server).length
    const messages = count(sandbox, "messages")
    const runs = count(sandbox, "runs")
    const third = await sandbox.run(["run", "-m", "openai/test-model", "-s", sessionId, "-"], { input: HUGE })
    assert.strictEqual(third.code, 2, third.stderr)
    assert.strictEqual(third.stdout, "")
    assert.match(
      third.stderr,
      /^alisio: the prompt is about 50 \d{3} tokens, more than test-model can take: its context window is 8 192 tokens \(as the provider named it\).*nothing was stored: send a shorter prompt, put the text in a file in the workspace and ask the model to read it, or use a model with a larger context window\n$/
    )
    assert.deepStrictEqual(
      [chat(server).length, count(sandbox, "messages"), count(sandbox, "runs")],
      [requests, messages, runs]
    )
  }, 60_000)

  it("CLI-1 with --max-context-tokens a prompt too large for it is refused in one line: no session, no request", async () => {
    const { server, sandbox } = await world(refusing)
    const result = await sandbox.run(["run", "-m", "openai/test-model", "--max-context-tokens", "12000", "-"], {
      input: HUGE
    })
    assert.strictEqual(result.code, 2, result.stderr)
    assert.strictEqual(result.stderr.split("\n").filter((line) => line !== "").length, 1, result.stderr)
    assert.include(result.stderr, "its context window is 12 000 tokens (limits.maxContextTokens)")
    assert.include(result.stderr, "raise --max-context-tokens")
    assert.strictEqual(chat(server).length, 0)
    assert.deepStrictEqual([count(sandbox, "sessions"), count(sandbox, "messages")], [0, 0])
  }, 60_000)
})
