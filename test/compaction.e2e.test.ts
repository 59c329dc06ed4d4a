// End-to-end compaction (CTX-1): the built CLI against the local OpenAI server, a session driven
// past its context window, and a server that refuses a request as too long once.

import { createRequire } from "node:module"
import { join } from "node:path"
import { decodeRunEvent, isTerminalType, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type { CliSandbox } from "./support/cli.js"
import type { OpenAiTestServer, RecordedRequest, Reply } from "./support/openaiServer.js"
import { useWorld } from "./support/world.js"

const SUMMARY_MARK = "You write the working summary of a conversation"

const parseJsonl = (stdout: string): ReadonlyArray<KnownRunEvent> =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line, index) => {
      const decoded = decodeRunEvent(JSON.parse(line))
      if (Either.isLeft(decoded) || decoded.right._tag !== "Known")
        throw new Error(`line ${index + 1} is not a KnownRunEvent: ${line}`)
      return decoded.right.event
    })

const ofType = <K extends KnownRunEvent["type"]>(events: ReadonlyArray<KnownRunEvent>, type: K) =>
  events.filter((event): event is Extract<KnownRunEvent, { type: K }> => event.type === type)

/** One terminal event, last; every compaction_started ends before anything else starts or the run ends. */
const assertWellFormed = (events: ReadonlyArray<KnownRunEvent>) => {
  const terminals = events.filter((event) => isTerminalType(event.type))
  assert.strictEqual(terminals.length, 1)
  assert.strictEqual(events.at(-1), terminals[0])
  let open = false
  for (const event of events) {
    if (event.type === "compaction_started") {
      assert.isFalse(open)
      open = true
    } else if (event.type === "compaction_completed" || event.type === "compaction_failed") {
      assert.isTrue(open)
      open = false
    }
  }
  assert.isFalse(open)
}

const isSummaryRequest = (request: RecordedRequest) =>
  request.body.messages?.some((m) => m.role === "system" && String(m.content).startsWith(SUMMARY_MARK)) === true

const chat = (server: OpenAiTestServer) => server.requests.filter((r) => r.path.endsWith("/chat/completions"))

const sentText = (request: RecordedRequest) => JSON.stringify(request.body.messages)

interface BareDb {
  prepare(sql: string): { all(): Array<Record<string, unknown>> }
  close(): void
}
const Sqlite = createRequire(import.meta.url)("better-sqlite3") as new (
  filename: string,
  options?: { readonly readonly?: boolean }
) => BareDb
const rows = (sandbox: CliSandbox, sql: string) => {
  const db = new Sqlite(join(sandbox.home, "state", "alisio.db"), { readonly: true })
  try {
    return db.prepare(sql).all()
  } finally {
    db.close()
  }
}

describe("alisio run: compaction (end to end)", () => {
  const world = useWorld()

  const runIn =
    (sandbox: CliSandbox) =>
    async (prompt: string, ...more: ReadonlyArray<string>) => {
      const result = await sandbox.run(["run", "--json", "-m", "openai/test-model", ...more, prompt])
      assert.strictEqual(result.code, 0, result.stderr)
      const events = parseJsonl(result.stdout)
      assertWellFormed(events)
      assert.strictEqual(events.at(-1)?.type, "run_completed", result.stdout.slice(-2_000))
      return events
    }

  it("CTX-1 a session driven past its window keeps completing runs, with the compaction events in --json and marked in sessions show and export", async () => {
    let summaries = 0
    const { server, sandbox } = await world({
      replyFor: (request): Reply =>
        isSummaryRequest(request)
          ? { kind: "text", text: `Summary ${++summaries}: the person asked for long reports; each was written.` }
          : { kind: "text", text: `Report: ${"lorem ipsum dolor sit amet ".repeat(160)}`, chunks: 4 }
    })
    const run = runIn(sandbox)
    const first = await run("write report 0")
    const sessionId = first[0]!.sessionId
    // The window follows what the system prompt and the tools of this build take: five times that,
    // and room for a few of the ~1 100-token reports.
    const fixed = chat(server)[0]!.body
    const fixedTokens = Math.ceil(
      (JSON.stringify(fixed.tools ?? []).length +
        String(fixed.messages?.find((m) => m.role === "system")?.content ?? "").length) /
        4
    )
    const window = 5 * fixedTokens + 6_000
    const all: Array<KnownRunEvent> = [...first]
    for (let i = 1; i <= 10; i++) {
      all.push(...(await run(`write report ${i}`, "-s", sessionId, "--max-context-tokens", String(window))))
    }
    const completed = ofType(all, "compaction_completed")
    assert.isAtLeast(completed.length, 2)
    assert.strictEqual(ofType(all, "compaction_failed").length, 0)
    for (const started of ofType(all, "compaction_started")) {
      assert.deepStrictEqual(
        [started.data.reason, started.data.contextWindow, started.data.source],
        ["threshold", window, "user"]
      )
      assert.isAbove(started.data.tokens, started.data.threshold)
    }
    for (const event of completed) assert.isBelow(event.data.tokensAfter, event.data.tokensBefore)
    // Every turn's request fits the window; after the first compaction each opens with the summary.
    const requests = chat(server)
    const firstSummary = requests.findIndex(isSummaryRequest)
    assert.isAbove(firstSummary, 0)
    for (const request of requests.slice(firstSummary + 1)) {
      assert.isAtMost(Math.ceil(JSON.stringify(request.body.messages).length / 4) + fixedTokens, window)
      if (!isSummaryRequest(request)) assert.include(sentText(request), "[Earlier conversation, compacted]")
    }
    assert.strictEqual(requests.filter(isSummaryRequest).length, completed.length)
    // Stored: every message, and the compactions marking the older ones.
    assert.deepStrictEqual(rows(sandbox, "SELECT count(*) AS n FROM messages"), [{ n: 22 }])
    const stored = rows(sandbox, "SELECT last_position, messages_compacted FROM compactions ORDER BY created_at")
    assert.strictEqual(stored.length, completed.length)
    assert.strictEqual(stored.at(-1)!.messages_compacted, completed.at(-1)!.data.messagesCompacted)
    // `sessions show` and the Markdown export say where each summary took over.
    const shown = await sandbox.run(["sessions", "show", sessionId])
    const marks = shown.stdout.split("\n").filter((line) => line.startsWith("  ⋯ compacted: "))
    assert.strictEqual(marks.length, completed.length, shown.stdout)
    assert.match(
      marks.at(-1)!,
      /^ {2}⋯ compacted: \d+ messages up to here are sent as a summary \(about [\d.]+k → [\d.]+k tokens a request\)$/
    )
    const exported = await sandbox.run(["sessions", "export", sessionId, "--format", "md"])
    assert.strictEqual(
      exported.stdout.split("\n").filter((line) => line.startsWith("> compacted: ")).length,
      completed.length
    )
  }, 120_000)

  it("CTX-1 a window a server named in a refusal is kept for later runs: they compact at its threshold, never refused again", async () => {
    let window: number | undefined
    let fixedTokens = 0
    let refusals = 0
    const { server, sandbox } = await world({
      replyFor: (request): Reply => {
        if (isSummaryRequest(request)) return { kind: "text", text: "Summary: the person asked for long reports." }
        const tokens = Math.ceil(JSON.stringify(request.body.messages).length / 4) + fixedTokens
        if (window !== undefined && tokens > window) {
          refusals++
          return {
            kind: "error",
            status: 400,
            message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens.`
          }
        }
        return { kind: "text", text: `Report: ${"lorem ipsum dolor sit amet ".repeat(600)}`, chunks: 4 }
      }
    })
    const run = runIn(sandbox)
    const first = await run("write report 0")
    const sessionId = first[0]!.sessionId
    // A server like llama.cpp's, counting the request alone: the system prompt and the tools of this
    // build twice over, and room for three of the ~4 000-token reports.
    const fixed = chat(server)[0]!.body
    fixedTokens = Math.ceil(JSON.stringify(fixed.tools ?? []).length / 4)
    window = 2 * (fixedTokens + Math.ceil(JSON.stringify(fixed.messages).length / 4)) + 12_000
    const all: Array<KnownRunEvent> = []
    for (let i = 1; i <= 8; i++) all.push(...(await run(`write report ${i}`, "-s", sessionId)))
    const started = ofType(all, "compaction_started")
    assert.isAtLeast(started.length, 2)
    assert.strictEqual(refusals, 1)
    assert.deepStrictEqual(
      started.map((event) => [event.data.reason, event.data.contextWindow, event.data.source]),
      [
        ["context_length_exceeded", window, "provider"],
        ...started.slice(1).map(() => ["threshold", window, "provider"])
      ]
    )
  }, 120_000)

  it("CTX-1 a server answering 'context length exceeded' once leads to a compaction and a completed run", async () => {
    let refused = false
    const { server, sandbox } = await world({
      replyFor: (request, index): Reply => {
        if (isSummaryRequest(request)) return { kind: "text", text: "The person asked for two long reports." }
        if (index >= 2 && !refused) {
          refused = true
          return {
            kind: "error",
            status: 400,
            message:
              "This model's maximum context length is 100000 tokens. However, your messages resulted in 100750 tokens. Please reduce the length of the messages."
          }
        }
        return { kind: "text", text: `Report: ${"lorem ipsum dolor sit amet ".repeat(200)}` }
      }
    })
    const run = runIn(sandbox)
    const first = await run("write report 0")
    const sessionId = first[0]!.sessionId
    await run("write report 1", "-s", sessionId)
    const events = await run("write report 2", "-s", sessionId)
    const started = ofType(events, "compaction_started")
    assert.strictEqual(started.length, 1)
    assert.deepStrictEqual(
      [started[0]!.data.reason, started[0]!.data.contextWindow, started[0]!.data.source],
      ["context_length_exceeded", 100_000, "provider"]
    )
    assert.strictEqual(ofType(events, "compaction_completed").length, 1)
    assert.strictEqual(ofType(events, "run_completed")[0]!.data.turns, 1)
    const requests = chat(server)
    // The refused request, the summary, the same turn again: now with the summary.
    assert.strictEqual(requests.length, 5)
    assert.isTrue(isSummaryRequest(requests[3]!))
    assert.include(sentText(requests[4]!), "The person asked for two long reports.")
    assert.include(sentText(requests[4]!), "write report 2")
    assert.notInclude(sentText(requests[4]!), "write report 0")
  }, 60_000)

  it("CTX-1 in text mode a compaction is one line on stderr, the answer alone on stdout", async () => {
    let refused = false
    const { sandbox } = await world({
      replyFor: (request, index): Reply => {
        if (isSummaryRequest(request)) return { kind: "text", text: "The person asked for long reports." }
        if (index >= 2 && !refused) {
          refused = true
          return {
            kind: "error",
            status: 400,
            message:
              "This model's maximum context length is 100000 tokens. However, your messages resulted in 100750 tokens. Please reduce the length of the messages."
          }
        }
        return { kind: "text", text: `Report: ${"lorem ipsum dolor sit amet ".repeat(200)}` }
      }
    })
    const run = runIn(sandbox)
    const sessionId = (await run("write report 0"))[0]!.sessionId
    await run("write report 1", "-s", sessionId)
    const text = await sandbox.run(["run", "-m", "openai/test-model", "-s", sessionId, "write report 2"])
    assert.strictEqual(text.code, 0, text.stderr)
    assert.match(text.stderr, /↻ compacted the history: \d+ older messages summarised, about \d+ → \d+ tokens/)
    assert.notInclude(text.stdout, "compacted")
    assert.include(text.stdout, "Report: lorem ipsum dolor sit amet")
  }, 120_000)
})
