// A process killed with SIGKILL in the middle of a compaction (CTX-1): the database opens, the
// session resumes, and it holds either the old history or the whole compaction, never half of one.

import { join } from "node:path"
import type { SessionId } from "@alisio/domain/Ids"
import type { ModelRequest } from "@alisio/domain/LanguageModel"
import * as Fake from "@alisio/providers/FakeProvider"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as AgentRuntime from "../src/AgentRuntime.js"
import * as Interaction from "../src/Interaction.js"
import { Runner } from "../src/Runner.js"
import * as SessionStore from "../src/SessionStore.js"
import { completeSummary } from "./fixtures/compactionText.js"
import { spawnFixture, tempDir } from "./fixtures/storeTesting.js"
import { rawQuery } from "./helpers/sessionStore.js"

const texts = (request: ModelRequest): ReadonlyArray<string> =>
  request.messages.flatMap((message) =>
    message.role === "system" ? [message.content] : message.content.flatMap((p) => (p._tag === "text" ? [p.text] : []))
  )

/** Runs `compactionChild.ts` until `until` is reported, then kills it with SIGKILL. */
const killAt = (filename: string, mode: "during" | "after", until: string) =>
  Effect.gen(function* () {
    const child = yield* spawnFixture("compactionChild.ts", [filename, mode])
    const { sessionId } = (yield* child.nextLine) as { sessionId: SessionId }
    for (;;) {
      const line = (yield* child.nextLine) as Record<string, unknown>
      if (line[until] === true) break
    }
    // Let part of a slow summary arrive first.
    if (mode === "during") yield* Effect.sleep("300 millis")
    yield* child.kill9
    return sessionId
  })

/** Opens the file as the next Alisio would, reconciles the dead run, and resumes the session. */
const resume = (filename: string, sessionId: SessionId) =>
  Effect.gen(function* () {
    assert.deepStrictEqual(yield* rawQuery(filename, "PRAGMA integrity_check"), [{ integrity_check: "ok" }])
    const store = yield* SessionStore.SessionStore
    assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 1, sessions: 1 })
    const outcome = yield* (yield* Runner).run({
      cwd: "/tmp",
      prompt: "resume",
      model: "fake-model",
      sessionId,
      tools: []
    })
    assert.strictEqual(outcome.status, "completed")
    const fake = yield* Fake.FakeProvider
    const [request] = yield* fake.requests
    const sent = texts(request!)
    // Never half a summary.
    for (const text of sent) {
      if (text.includes("SUMMARY START")) assert.include(text, completeSummary)
    }
    return { sent, rows: yield* store.compactions!.list(sessionId), messages: yield* store.messages(sessionId) }
  }).pipe(
    Effect.provide(
      AgentRuntime.layer({ tools: [], interaction: Interaction.layerHeadless({ approveAll: true }) }).pipe(
        Layer.provideMerge(Fake.layer([Fake.answer("resumed")])),
        Layer.provideMerge(SessionStore.layer({ filename }))
      )
    )
  )

describe("CTX-1 a kill -9 in the middle of a compaction", () => {
  it.scopedLive(
    "CTX-1 killed while the summary streams: the file opens, nothing half-stored, the session resumes on its whole history",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const sessionId = yield* killAt(filename, "during", "summarizing")
        const { messages, rows, sent } = yield* resume(filename, sessionId)
        assert.deepStrictEqual(rows, [])
        assert.isFalse(sent.some((text) => text.includes("SUMMARY")))
        assert.include(sent, "a".repeat(6_000))
        assert.deepStrictEqual(sent.slice(-2), ["go on", "resume"])
        assert.strictEqual(messages.length, 9)
      }),
    { timeout: 30_000 }
  )

  it.scopedLive(
    "CTX-1 killed after the summary was stored: the session resumes on the whole summary and the turns after it",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const sessionId = yield* killAt(filename, "after", "compacted")
        const { messages, rows, sent } = yield* resume(filename, sessionId)
        assert.strictEqual(rows.length, 1)
        assert.strictEqual(rows[0]!.summary, completeSummary)
        assert.deepStrictEqual([rows[0]!.firstPosition, rows[0]!.lastPosition], [1, 6])
        assert.include(sent[0]!, completeSummary)
        assert.isFalse(sent.some((text) => text.includes("a".repeat(100))))
        assert.deepStrictEqual(sent.slice(-2), ["go on", "resume"])
        assert.strictEqual(messages.length, 9)
      }),
    { timeout: 30_000 }
  )
})
