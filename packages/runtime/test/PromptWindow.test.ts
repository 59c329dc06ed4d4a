// A prompt larger than the model's context window (CTX-1, CLI-1, ST-1): refused before anything
// is stored when the window is known; when one is stored anyway, the run that holds it ends saying
// so and later runs of the session send a note of its size instead, so the session goes on.

import { ProviderError } from "@alisio/domain/Errors"
import { LanguageModel } from "@alisio/domain/LanguageModel"
import type { Message } from "@alisio/domain/Message"
import * as Fake from "@alisio/providers/FakeProvider"
import { Compaction } from "@alisio/runtime/Compaction"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { seeded } from "./helpers/compaction.js"
import { assertContract, baseOptions, collect, ofType, runnerLayer } from "./helpers/harness.js"
import { user } from "./helpers/messages.js"

/** 200 000 characters: about 50 000 tokens. */
const HUGE = `${"word ".repeat(40_000)}the end`

const texts = (messages: ReadonlyArray<Message>) =>
  messages.flatMap((message) =>
    message.role === "system" ? [] : message.content.flatMap((part) => (part._tag === "text" ? [part.text] : []))
  )

const refusal = (contextWindow?: number) => [
  Fake.fail(
    new ProviderError({
      code: "context_length_exceeded",
      message: "the request exceeds the available context size",
      status: 400,
      ...(contextWindow === undefined ? {} : { contextWindow })
    })
  )
]

describe("CTX-1 a prompt larger than the context window", () => {
  it.effect("CTX-1 CLI-1 a prompt over the configured window is refused before anything is stored", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore.SessionStore
      const runner = yield* Runner
      const error = yield* Effect.flip(
        runner.run({ ...baseOptions, prompt: HUGE, tools: [], limits: { maxContextTokens: 8_192 } })
      )
      assert.strictEqual(error._tag, "PromptTooLargeError")
      if (error._tag !== "PromptTooLargeError") return
      assert.strictEqual(error.context.contextWindow, 8_192)
      assert.isAbove(error.context.tokens, 40_000)
      assert.match(error.message, /^the prompt is about 50 \d{3} tokens, more than fake-model can take/)
      assert.include(error.message, "context window is 8 192 tokens")
      assert.include(error.message, "nothing was stored")
      assert.include(error.message, "put the text in a file in the workspace and ask the model to read it")
      assert.notInclude(error.message, "\n")
      assert.deepStrictEqual(yield* store.sessions(), [])
      assert.deepStrictEqual(yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests), [])
    }).pipe(Effect.provide(runnerLayer({ script: [] })))
  )

  it.effect("CTX-1 the model catalog's window and a window learned from a refusal count too", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore.SessionStore
      const runner = yield* Runner
      const byCatalog = yield* Effect.flip(
        runner.run({
          ...baseOptions,
          prompt: HUGE,
          tools: [],
          modelInfo: { id: "fake-model", provider: "fake", contextWindow: 16_000 }
        })
      )
      assert.strictEqual(byCatalog._tag, "PromptTooLargeError")
      assert.include(byCatalog.message, "16 000 tokens (the model's)")
      const learned: Record<string, number> = { "fake-model": 8_192 }
      const model = yield* LanguageModel
      const byRefusal = yield* Effect.flip(
        runner.run({
          ...baseOptions,
          prompt: HUGE,
          tools: [],
          provider: {
            ...model,
            learnedWindows: {
              read: (id) => Effect.succeed(learned[id]),
              write: () => Effect.void
            }
          }
        })
      )
      assert.strictEqual(byRefusal._tag, "PromptTooLargeError")
      assert.include(byRefusal.message, "8 192 tokens (as the provider named it)")
      assert.deepStrictEqual(yield* store.sessions(), [])
    }).pipe(Effect.provide(runnerLayer({ script: [] })))
  )

  it.effect(
    "CTX-1 with the window unknown, nothing is refused up front; a prompt past the default ends its run saying so",
    () =>
      Effect.gen(function* () {
        const store = yield* SessionStore.SessionStore
        // About 150 000 tokens: past the default window of 128 000, which is only assumed.
        const events = yield* collect({ ...baseOptions, prompt: HUGE.repeat(3), tools: [] })
        assertContract(events)
        assert.strictEqual(events[0]?.type, "run_started")
        const failed = ofType(events, "run_failed")[0]!.data
        assert.strictEqual(failed.code, "context_exhausted")
        assert.include(failed.error, "128 000 tokens (the default; set limits.maxContextTokens to the model's)")
        assert.include(failed.error, "left out of its later requests")
        assert.strictEqual((yield* store.sessions()).length, 1)
        assert.deepStrictEqual(yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests), [])
      }).pipe(Effect.provide(runnerLayer({ script: [] })))
  )

  it.effect(
    "CTX-1 ST-1 a stored prompt refused as too long ends its run saying so, and the next run of the session works",
    () =>
      Effect.gen(function* () {
        const store = yield* SessionStore.SessionStore
        const first = yield* collect({ ...baseOptions, prompt: HUGE, tools: [] })
        assertContract(first)
        const failed = ofType(first, "run_failed")[0]!.data
        assert.strictEqual(failed.code, "context_exhausted")
        assert.strictEqual(failed.providerCode, "context_length_exceeded")
        assert.match(failed.error, /^Your prompt is about 50 \d{3} tokens, more than fake-model can take/)
        assert.include(failed.error, "8 192 tokens (as the provider named it)")
        assert.include(failed.error, "left out of its later requests")
        assert.strictEqual(ofType(first, "compaction_started").length, 0, "no summary of a prompt that cannot fit")
        const sessionId = first[0]!.sessionId

        const second = yield* collect({ ...baseOptions, sessionId, prompt: "a shorter one", tools: [] })
        assertContract(second)
        assert.strictEqual(second.at(-1)?.type, "run_completed")
        const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
        assert.strictEqual(requests.length, 2)
        const sent = texts(requests[1]!.messages)
        assert.notInclude(sent.join(""), "word word")
        assert.match(sent[0]!, /^\[A message of about 50 \d{3} tokens was left out here/)
        assert.strictEqual(sent.at(-1), "a shorter one")
        // The stored message stays whole for `sessions show` and export.
        const stored = yield* store.messages(sessionId)
        assert.strictEqual(texts([stored[0]!.message])[0], HUGE)
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: (request, index) => (index === 0 ? refusal(8_192) : Fake.answer(`ok ${request.model}`))
          })
        )
      )
  )

  it.effect(
    "CTX-1 ST-3 a repeated request replays its run even when its prompt no longer fits a window learned since",
    () =>
      Effect.gen(function* () {
        const runner = yield* Runner
        const model = yield* LanguageModel
        const first = yield* runner.run({ ...baseOptions, prompt: HUGE, tools: [], requestId: "r1" })
        assert.strictEqual(first.status, "completed")
        const again = yield* runner.run({
          ...baseOptions,
          sessionId: first.sessionId,
          prompt: HUGE,
          tools: [],
          requestId: "r1",
          provider: { ...model, learnedWindows: { read: () => Effect.succeed(8_192), write: () => Effect.void } }
        })
        assert.deepStrictEqual([again.existing, again.runId, again.status], [true, first.runId, "completed"])
      }).pipe(Effect.provide(runnerLayer({ script: [Fake.answer("done")] })))
  )

  it.effect("CTX-1 a refusal that names no window still leaves the prompt out of the next run", () =>
    Effect.gen(function* () {
      const first = yield* collect({ ...baseOptions, prompt: HUGE, tools: [] })
      const failed = ofType(first, "run_failed")[0]!.data
      assert.strictEqual(failed.code, "context_exhausted")
      assert.include(failed.error, "left out of its later requests")
      const second = yield* collect({ ...baseOptions, sessionId: first[0]!.sessionId, prompt: "short", tools: [] })
      assert.strictEqual(second.at(-1)?.type, "run_completed")
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.notInclude(texts(requests.at(-1)!.messages).join(""), "word word")
    }).pipe(Effect.provide(runnerLayer({ script: (_, index) => (index === 0 ? refusal() : Fake.answer("ok")) })))
  )

  it.effect("CTX-1 an oversized prompt stored by an older Alisio is left out of the next run, and of /compact", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore.SessionStore
      const { sessionId } = yield* seeded(["earlier answer"])
      yield* store.appendMessages(sessionId, [user(HUGE)])
      const events = yield* collect({
        ...baseOptions,
        sessionId,
        prompt: "go on",
        tools: [],
        limits: { maxContextTokens: 8_192 }
      })
      assertContract(events)
      assert.strictEqual(events.at(-1)?.type, "run_completed")
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.notInclude(texts(requests[0]!.messages).join(""), "word word")
      const compacted = yield* Effect.flatMap(Compaction, (compaction) =>
        compaction.compact(sessionId, { limits: { maxContextTokens: 8_192 } })
      )
      assert.isBelow(compacted.tokensBefore, 1_000, "the summary request holds the note, not the prompt")
      const summaryRequest = (yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)).at(-1)!
      assert.notInclude(JSON.stringify(summaryRequest.messages), "word word")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: (_, index) => (index === 0 ? Fake.answer("fine") : Fake.answer("Summary: an earlier task."))
        })
      )
    )
  )
})
