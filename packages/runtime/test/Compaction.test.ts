// Compaction inside runs (CTX-1), with the real runner, the FakeProvider and SQLite: the threshold,
// the events, the provider's context-length refusal, failures, interruption and LIM-4.

import { ProviderError, StoreError } from "@alisio/domain/Errors"
import type { ModelRequest } from "@alisio/domain/LanguageModel"
import type { Message } from "@alisio/domain/Message"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Fake from "@alisio/providers/FakeProvider"
import { SUMMARY_SYSTEM_MARK } from "@alisio/runtime/Compaction"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { estimateTokens, messageChars } from "../src/internal/compaction/estimate.js"
import { assertCallsWithResults, seeded } from "./helpers/compaction.js"
import {
  assertCompactionPairs,
  assertContract,
  baseOptions,
  collect,
  interruptAt,
  ofType,
  runnerLayer,
  typesOf
} from "./helpers/harness.js"
import { said, user } from "./helpers/messages.js"

const isSummary = (request: ModelRequest) => request.system?.startsWith(SUMMARY_SYSTEM_MARK) === true

/** What a provider would count: the JSON of the request, by fours. */
const countedTokens = (request: ModelRequest) =>
  Math.ceil(JSON.stringify({ system: request.system, messages: request.messages, tools: request.tools }).length / 4)

const textParts = (messages: ReadonlyArray<Message>): ReadonlyArray<string> =>
  messages.flatMap((message) =>
    message.role === "system"
      ? [message.content]
      : message.content.flatMap((part) => (part._tag === "text" ? [part.text] : []))
  )

/** The estimate of a request holding these messages and nothing else (no tools, no system prompt). */
const estimateOf = (messages: ReadonlyArray<Message>) =>
  estimateTokens(
    messages.reduce((sum, message) => sum + messageChars(message), 0),
    { ratio: undefined }
  )

const summaryAnswer = (text: string): Fake.Response => [
  ...Fake.text(text),
  Fake.finish("stop", { inputTokens: 300, outputTokens: 40 })
]

const typesWithoutDeltas = (events: ReadonlyArray<KnownRunEvent>) =>
  typesOf(events).filter((type) => type !== "text_delta" && type !== "reasoning_delta")

describe("CTX-1 compaction in a run", () => {
  it.effect(
    "CTX-1 a 200-turn session with tool calls stays under the window and never splits a call from its result",
    () => {
      const window = 3_000
      let turn = 0
      const script: Fake.Script = (request, index) => {
        const usage = { inputTokens: countedTokens(request), outputTokens: 20 }
        if (isSummary(request))
          return [...Fake.text(`Summary ${index}: echoed many long texts.`), Fake.finish("stop", usage)]
        turn += 1
        return turn <= 4
          ? [
              ...Fake.toolCall(`call-${index}`, "echo", { text: `${index} ${"x".repeat(400)}` }),
              Fake.finish("tool_calls", usage)
            ]
          : [...Fake.text(`done ${index}`), Fake.finish("stop", usage)]
      }
      return Effect.gen(function* () {
        const runner = yield* Runner
        const fake = yield* Fake.FakeProvider
        let sessionId = undefined as Parameters<typeof runner.run>[0]["sessionId"]
        const all: Array<KnownRunEvent> = []
        let turns = 0
        for (let run = 0; run < 40; run++) {
          turn = 0
          const prompt = `task ${run}: echo a long text four times`
          const seen = (yield* fake.requests).length
          const events = yield* collect({
            ...baseOptions,
            prompt,
            tools: ["echo"],
            limits: { maxContextTokens: window },
            ...(sessionId === undefined ? {} : { sessionId })
          })
          assertContract(events)
          assert.strictEqual(events.at(-1)?.type, "run_completed", JSON.stringify(events.at(-1)?.data))
          turns += ofType(events, "run_completed")[0]!.data.turns
          sessionId = events[0]!.sessionId
          all.push(...events)
          for (const request of (yield* fake.requests).slice(seen)) {
            if (isSummary(request)) continue
            // The current run's prompt is in every request of the run, whole.
            assert.include(textParts(request.messages), prompt)
          }
        }
        assert.strictEqual(turns, 200)
        const requests = yield* fake.requests
        for (const [i, request] of requests.entries()) {
          assert.isAtMost(countedTokens(request), window, `request ${i} passes the window`)
          assertCallsWithResults(request.messages, `request ${i}:`)
        }
        const completed = ofType(all, "compaction_completed")
        assert.isAtLeast(completed.length, 10)
        assert.strictEqual(ofType(all, "compaction_failed").length, 0)
        for (const event of completed) assert.isBelow(event.data.tokensAfter, event.data.tokensBefore)
        // Every stored message stays; the latest compaction says how many of them its summary stands for.
        const store = yield* SessionStore.SessionStore
        const stored = yield* store.messages(sessionId!)
        assert.strictEqual(stored.length, 40 * (1 + 4 * 2 + 1))
        const latest = Option.getOrThrow(yield* store.compactions!.latest(sessionId!))
        assert.strictEqual(latest.messagesCompacted, completed.at(-1)!.data.messagesCompacted)
        assert.strictEqual(latest.firstPosition, 1)
        assert.isBelow(latest.lastPosition, stored.length)
        assert.strictEqual((yield* store.compactions!.list(sessionId!)).length, completed.length)
      }).pipe(Effect.provide(runnerLayer({ script })))
    },
    { timeout: 60_000 }
  )

  it.effect(
    "CTX-1 a request past the threshold compacts first: started → completed, the summary is no turn and streams nothing",
    () => {
      const answers = ["a".repeat(6_000), "b".repeat(6_000), "c".repeat(6_000)]
      return Effect.gen(function* () {
        const { messages, sessionId } = yield* seeded(answers)
        const window = 4_000
        const events = yield* collect({
          ...baseOptions,
          sessionId,
          prompt: "go on",
          tools: [],
          limits: { maxContextTokens: window }
        })
        assertContract(events)
        assert.deepStrictEqual(typesWithoutDeltas(events), [
          "run_started",
          "message",
          "compaction_started",
          "compaction_completed",
          "turn_completed",
          "message",
          "run_completed"
        ])
        const before = estimateOf([...messages, user("go on")])
        assert.deepStrictEqual(ofType(events, "compaction_started")[0]!.data, {
          reason: "threshold",
          tokens: before,
          contextWindow: window,
          source: "user",
          threshold: Math.floor(2_000 * 0.8)
        })
        const completed = ofType(events, "compaction_completed")[0]!.data
        assert.strictEqual(completed.tokensBefore, before)
        assert.isBelow(completed.tokensAfter, 1_600)
        assert.strictEqual(completed.messagesCompacted, 6)
        assert.strictEqual(completed.newlyCompacted, 6)
        assert.deepStrictEqual(completed.usage, { inputTokens: 300, outputTokens: 40 })
        // Only the answer streamed; one turn; the summary's tokens count in the run's usage.
        assert.deepStrictEqual(
          ofType(events, "text_delta").map((e) => e.data.text),
          ["fine"]
        )
        const done = ofType(events, "run_completed")[0]!.data
        assert.strictEqual(done.turns, 1)
        assert.deepStrictEqual(done.usage, { inputTokens: 310, outputTokens: 45 })
        const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
        assert.isTrue(isSummary(requests[0]!))
        const transcript = textParts(requests[0]!.messages).join("")
        for (const answer of answers) assert.include(transcript, answer.slice(0, 100))
        // The turn's request: the summary opening the kept prompt, nothing older.
        assert.deepStrictEqual(
          requests[1]!.messages.map((m) => m.role),
          ["user"]
        )
        const sent = textParts(requests[1]!.messages)
        assert.include(sent[0]!, "They asked for letters.")
        assert.strictEqual(sent.at(-1), "go on")
        // The stored conversation is untouched; the compaction row stands for its first six messages.
        const store = yield* SessionStore.SessionStore
        assert.strictEqual((yield* store.messages(sessionId)).length, 8)
        const row = Option.getOrThrow(yield* store.compactions!.latest(sessionId))
        assert.deepStrictEqual(
          [row.firstPosition, row.lastPosition, row.messagesCompacted, row.summary, row.runId],
          [1, 6, 6, "They asked for letters.", events[0]!.runId]
        )
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: [
              summaryAnswer("They asked for letters."),
              [...Fake.text("fine"), Fake.finish("stop", { inputTokens: 10, outputTokens: 5 })]
            ]
          })
        )
      )
    }
  )

  it.effect(
    "CTX-1 the estimate follows the prompt tokens a provider reports: twice as many compact twice as early",
    () =>
      Effect.gen(function* () {
        const answer = "a".repeat(8_000)
        const { sessionId } = yield* seeded([answer])
        const first = estimateOf([user("earlier task 0"), said(answer), user("go on")])
        // Room for 1.5 times the first request: uncalibrated the second request fits under the
        // threshold; counted as the provider counts, it does not.
        const window = 2 * Math.ceil(1.5 * first)
        const events = yield* collect({
          ...baseOptions,
          sessionId,
          prompt: "go on",
          tools: [],
          limits: { maxContextTokens: window }
        })
        assertContract(events)
        assert.deepStrictEqual(typesWithoutDeltas(events).slice(2, 5), [
          "truncation_recovery",
          "compaction_started",
          "compaction_completed"
        ])
        const started = ofType(events, "compaction_started")[0]!.data
        assert.isAbove(started.tokens, 2 * first)
        assert.isBelow(started.tokens, 2 * first + 200)
        assert.strictEqual(events.at(-1)?.type, "run_completed")
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: (request, index) =>
              index === 0
                ? [Fake.finish("length", { inputTokens: 2 * estimateOf(request.messages), outputTokens: 0 })]
                : isSummary(request)
                  ? summaryAnswer("S")
                  : Fake.answer("fine")
          })
        )
      )
  )

  it.effect("CTX-1 a later run of a compacted session sends the summary and the turns after it", () =>
    Effect.gen(function* () {
      const { sessionId } = yield* seeded(["a".repeat(6_000), "b".repeat(6_000), "c".repeat(6_000)])
      const options = { ...baseOptions, sessionId, tools: [], limits: { maxContextTokens: 4_000 } }
      yield* collect({ ...options, prompt: "go on" })
      const events = yield* collect({ ...options, prompt: "and now?" })
      assertContract(events)
      assert.deepStrictEqual(ofType(events, "compaction_started"), [])
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.deepStrictEqual(
        requests[2]!.messages.map((m) => m.role),
        ["user", "assistant", "user"]
      )
      const sent = textParts(requests[2]!.messages)
      assert.include(sent[0]!, "S1")
      assert.deepStrictEqual(sent.slice(-2), ["fine", "and now?"])
    }).pipe(Effect.provide(runnerLayer({ script: [summaryAnswer("S1"), Fake.answer("fine"), Fake.answer("ok")] })))
  )

  it.effect("CTX-1 a provider's context_length_exceeded compacts once and the turn is sent again", () =>
    Effect.gen(function* () {
      const { sessionId } = yield* seeded(["a".repeat(8_000)])
      const events = yield* collect({ ...baseOptions, sessionId, prompt: "go on", tools: [] })
      assertContract(events)
      assert.deepStrictEqual(typesWithoutDeltas(events), [
        "run_started",
        "message",
        "compaction_started",
        "compaction_completed",
        "turn_completed",
        "message",
        "run_completed"
      ])
      const started = ofType(events, "compaction_started")[0]!.data
      assert.strictEqual(started.reason, "context_length_exceeded")
      // The window is the one the provider named.
      assert.deepStrictEqual([started.contextWindow, started.source], [3_000, "provider"])
      assert.strictEqual(ofType(events, "run_completed")[0]!.data.turns, 1)
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.strictEqual(requests.length, 3)
      assert.isTrue(isSummary(requests[1]!))
      assert.include(textParts(requests[2]!.messages)[0]!, "The person asked for a's.")
      assert.strictEqual(textParts(requests[2]!.messages).at(-1), "go on")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            [
              Fake.fail(
                new ProviderError({
                  code: "context_length_exceeded",
                  message: "This model's maximum context length is 3000 tokens.",
                  status: 400,
                  contextWindow: 3_000
                })
              )
            ],
            summaryAnswer("The person asked for a's."),
            Fake.answer("fine")
          ]
        })
      )
    )
  )

  it.effect("CTX-1 a second refusal after compacting fails the run with context_exhausted and a readable message", () =>
    Effect.gen(function* () {
      const { sessionId } = yield* seeded(["a".repeat(8_000)])
      const events = yield* collect({ ...baseOptions, sessionId, prompt: "go on", tools: [] })
      assertContract(events)
      const failed = ofType(events, "run_failed")[0]!.data
      assert.strictEqual(failed.code, "context_exhausted")
      assert.strictEqual(failed.providerCode, "context_length_exceeded")
      assert.include(failed.error, "no longer fits the context window of fake-model")
      assert.include(failed.error, "refused it again")
      assert.strictEqual(failed.context?.model, "fake-model")
      assert.strictEqual(ofType(events, "compaction_completed").length, 1)
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            [Fake.fail(new ProviderError({ code: "context_length_exceeded", message: "context length exceeded" }))],
            summaryAnswer("S"),
            [Fake.fail(new ProviderError({ code: "context_length_exceeded", message: "context length exceeded" }))]
          ]
        })
      )
    )
  )

  describe("CTX-1 a failed compaction", () => {
    const answer = "a".repeat(8_000)
    const estimate = estimateOf([user("earlier task 0"), said(answer), user("go on")])
    const failingSummary: Fake.Response = [
      Fake.fail(new ProviderError({ code: "server", message: "the GPU caught fire" }))
    ]

    it.effect("CTX-1 when the history still fits, the run goes on uncompacted after compaction_failed", () =>
      Effect.gen(function* () {
        const { sessionId } = yield* seeded([answer])
        // Room (half the window) just above the estimate: past the threshold, within the room.
        const window = 2 * estimate + 200
        const events = yield* collect({
          ...baseOptions,
          sessionId,
          prompt: "go on",
          tools: [],
          limits: { maxContextTokens: window }
        })
        assertContract(events)
        assert.deepStrictEqual(typesWithoutDeltas(events).slice(2, 4), ["compaction_started", "compaction_failed"])
        assert.deepStrictEqual(ofType(events, "compaction_failed")[0]!.data, {
          error: "Compacting older turns failed: the summary request failed: The GPU caught fire.".replace(
            "The GPU",
            "the GPU"
          ),
          continued: true
        })
        assert.strictEqual(events.at(-1)?.type, "run_completed")
        const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
        assert.strictEqual(requests[1]!.messages.length, 3, "the whole history was sent")
        const store = yield* SessionStore.SessionStore
        assert.isTrue(Option.isNone(yield* store.compactions!.latest(sessionId)))
      }).pipe(Effect.provide(runnerLayer({ script: [failingSummary, Fake.answer("fine")] })))
    )

    it.effect("CTX-1 after a failed compaction the run asks for no second summary while its requests still fit", () =>
      Effect.gen(function* () {
        const { sessionId } = yield* seeded([answer])
        const events = yield* collect({
          ...baseOptions,
          sessionId,
          prompt: "go on",
          tools: [],
          limits: { maxContextTokens: 2 * estimate + 200 }
        })
        assertContract(events)
        assert.strictEqual(ofType(events, "truncation_recovery").length, 1)
        assert.strictEqual(ofType(events, "compaction_started").length, 1)
        assert.strictEqual(events.at(-1)?.type, "run_completed")
        const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
        assert.deepStrictEqual(requests.map(isSummary), [true, false, false])
      }).pipe(Effect.provide(runnerLayer({ script: [failingSummary, [Fake.finish("length")], Fake.answer("fine")] })))
    )

    it.effect(
      "CTX-1 a prompt alone past the threshold is sent as it is while it fits: nothing to compact, no events",
      () =>
        Effect.gen(function* () {
          const prompt = "p".repeat(7_000)
          const tokens = estimateOf([user(prompt)])
          const events = yield* collect({
            ...baseOptions,
            prompt,
            tools: [],
            limits: { maxContextTokens: 2 * tokens + 200 }
          })
          assertContract(events)
          assert.deepStrictEqual(
            typesWithoutDeltas(events).filter((type) => type.startsWith("compaction")),
            []
          )
          assert.strictEqual(events.at(-1)?.type, "run_completed")
        }).pipe(Effect.provide(runnerLayer({ script: [Fake.answer("fine")] })))
    )

    it.effect(
      "CTX-1 a summary the store refuses is compaction_failed, and the run goes on uncompacted while it fits",
      () =>
        Effect.gen(function* () {
          const { sessionId } = yield* seeded([answer])
          const events = yield* collect({
            ...baseOptions,
            sessionId,
            prompt: "go on",
            tools: [],
            limits: { maxContextTokens: 2 * estimate + 200 }
          })
          assertContract(events)
          assert.deepStrictEqual(ofType(events, "compaction_failed")[0]!.data, {
            error: "Compacting older turns failed: its summary could not be stored (injected: disk full).",
            continued: true
          })
          assert.strictEqual(events.at(-1)?.type, "run_completed")
          const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
          assert.strictEqual(requests[1]!.messages.length, 3, "the whole history was sent")
        }).pipe(
          Effect.provide(
            runnerLayer({
              script: [summaryAnswer("S"), Fake.answer("fine")],
              store: Layer.effect(
                SessionStore.SessionStore,
                Effect.map(SessionStore.SessionStore, (real) =>
                  SessionStore.SessionStore.of({
                    ...real,
                    compactions: {
                      ...real.compactions!,
                      add: () => Effect.fail(new StoreError({ reason: "disk_full", message: "injected: disk full" }))
                    }
                  })
                )
              ).pipe(Layer.provide(SessionStore.layerMemory))
            })
          )
        )
    )

    it.effect("CTX-1 a summary that breaks off after some text stores none of it as the run's answer", () =>
      Effect.gen(function* () {
        const { sessionId, messages } = yield* seeded([answer])
        const events = yield* collect({
          ...baseOptions,
          sessionId,
          prompt: "go on",
          tools: [],
          limits: { maxContextTokens: 2 * estimate + 200 }
        })
        assertContract(events)
        assert.strictEqual(ofType(events, "compaction_failed")[0]!.data.continued, true)
        assert.strictEqual(events.at(-1)?.type, "run_completed")
        assert.deepStrictEqual(
          ofType(events, "message").map((event) => event.data.message),
          [user("go on"), said("fine")]
        )
        const store = yield* SessionStore.SessionStore
        const stored = (yield* store.messages(sessionId)).map((entry) => entry.message)
        assert.deepStrictEqual(stored, [...messages, user("go on"), said("fine")])
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: [
              [
                ...Fake.text("Partial summ"),
                Fake.fail(new ProviderError({ code: "network", message: "the connection was reset" }))
              ],
              Fake.answer("fine")
            ]
          })
        )
      )
    )

    it.effect("CTX-1 a summary no shorter than the history it replaces is not stored: compaction_failed", () =>
      Effect.gen(function* () {
        const { sessionId } = yield* seeded([answer])
        const events = yield* collect({
          ...baseOptions,
          sessionId,
          prompt: "go on",
          tools: [],
          limits: { maxContextTokens: 2 * estimate + 200 }
        })
        assertContract(events)
        assert.strictEqual(ofType(events, "compaction_completed").length, 0)
        const failed = ofType(events, "compaction_failed")[0]!.data
        assert.include(failed.error, "is no shorter than the history it would replace")
        assert.strictEqual(failed.continued, true)
        assert.strictEqual(events.at(-1)?.type, "run_completed")
        const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
        assert.strictEqual(requests[1]!.messages.length, 3, "the whole history was sent")
        const store = yield* SessionStore.SessionStore
        assert.isTrue(Option.isNone(yield* store.compactions!.latest(sessionId)))
      }).pipe(Effect.provide(runnerLayer({ script: [summaryAnswer("s".repeat(40_000)), Fake.answer("fine")] })))
    )

    it.effect("CTX-1 when it does not fit, the run fails context_exhausted naming the window and the failure", () =>
      Effect.gen(function* () {
        const { sessionId } = yield* seeded([answer])
        const window = 2 * estimate - 400
        const events = yield* collect({
          ...baseOptions,
          sessionId,
          prompt: "go on",
          tools: [],
          limits: { maxContextTokens: window }
        })
        assertContract(events)
        assert.strictEqual(ofType(events, "compaction_failed")[0]!.data.continued, false)
        const failed = ofType(events, "run_failed")[0]!.data
        assert.strictEqual(failed.code, "context_exhausted")
        assert.include(failed.error, `(${window} tokens, limits.maxContextTokens)`)
        assert.include(failed.error, "the GPU caught fire")
        assert.deepStrictEqual(failed.context, {
          tokens: estimate,
          contextWindow: window,
          source: "user",
          model: "fake-model"
        })
        assert.strictEqual((yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)).length, 1)
      }).pipe(Effect.provide(runnerLayer({ script: [failingSummary] })))
    )

    it.effect("CTX-1 when even the compacted request does not fit, the run fails context_exhausted saying why", () =>
      Effect.gen(function* () {
        const { sessionId } = yield* seeded([answer])
        const events = yield* collect({
          ...baseOptions,
          sessionId,
          // About 1 750 tokens: the prompt alone fits the room of 2 000, not beside the summary.
          prompt: "p".repeat(7_000),
          tools: [],
          limits: { maxContextTokens: 4_000 }
        })
        assertContract(events)
        assert.strictEqual(ofType(events, "compaction_completed").length, 1)
        const failed = ofType(events, "run_failed")[0]!.data
        assert.strictEqual(failed.code, "context_exhausted")
        assert.include(failed.error, "even with older turns compacted, the current prompt")
        assert.isAbove(failed.context!.tokens, 2_000)
        // The summary stays stored for the next run, which may come with a shorter prompt.
        const store = yield* SessionStore.SessionStore
        assert.isTrue(Option.isSome(yield* store.compactions!.latest(sessionId)))
      }).pipe(Effect.provide(runnerLayer({ script: [summaryAnswer("S".repeat(2_000))] })))
    )

    it.effect("CTX-1 a single prompt longer than the window is refused before the run, not compacted", () =>
      Effect.gen(function* () {
        const runner = yield* Runner
        const error = yield* Effect.flip(
          runner.run({ ...baseOptions, prompt: "p".repeat(20_000), tools: [], limits: { maxContextTokens: 2_000 } })
        )
        assert.strictEqual(error._tag, "PromptTooLargeError")
        assert.strictEqual((yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)).length, 0)
      }).pipe(Effect.provide(runnerLayer({ script: [] })))
    )
  })

  it.effect("CTX-1 LIM-4 a silent summary request is sent again after the first-token timeout (request_retry)", () =>
    Effect.gen(function* () {
      const { sessionId } = yield* seeded(["a".repeat(6_000), "b".repeat(6_000)])
      const fiber = yield* Effect.fork(
        collect({
          ...baseOptions,
          sessionId,
          prompt: "go on",
          tools: [],
          limits: { maxContextTokens: 4_000, firstTokenTimeoutMs: 1_000 }
        })
      )
      yield* TestClock.adjust(1_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.deepStrictEqual(typesWithoutDeltas(events).slice(2, 5), [
        "compaction_started",
        "request_retry",
        "compaction_completed"
      ])
      assert.strictEqual(ofType(events, "request_retry")[0]!.data.reason, "first_token_timeout")
      assert.strictEqual(events.at(-1)?.type, "run_completed")
      assert.strictEqual(yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.interrupted), 1)
    }).pipe(Effect.provide(runnerLayer({ script: [[Fake.silence], summaryAnswer("S"), Fake.answer("fine")] })))
  )

  it.effect(
    "CTX-1 LIM-3 the summary counts as active time: the run's timeout stops it, compaction_failed cancelled",
    () =>
      Effect.gen(function* () {
        const { sessionId } = yield* seeded(["a".repeat(6_000), "b".repeat(6_000)])
        const fiber = yield* Effect.fork(
          collect({
            ...baseOptions,
            sessionId,
            prompt: "go on",
            tools: [],
            limits: { maxContextTokens: 4_000, timeoutMs: 500 }
          })
        )
        yield* TestClock.adjust(500)
        const events = yield* Fiber.join(fiber)
        assertContract(events)
        assert.deepStrictEqual(ofType(events, "compaction_failed")[0]!.data, {
          error: "The run stopped while older turns were being summarised.",
          continued: false,
          cancelled: true
        })
        const failed = ofType(events, "run_failed")[0]!.data
        assert.deepStrictEqual([failed.code, failed.timeout?.kind], ["timeout", "run"])
        const store = yield* SessionStore.SessionStore
        assert.isTrue(Option.isNone(yield* store.compactions!.latest(sessionId)))
      }).pipe(Effect.provide(runnerLayer({ script: [[Fake.delay(60_000), ...summaryAnswer("late")]] })))
  )

  it.effect("CTX-1 interrupting a run while the summary streams ends it cancelled, with the compaction closed", () =>
    Effect.gen(function* () {
      const { sessionId } = yield* seeded(["a".repeat(6_000), "b".repeat(6_000)])
      const events = yield* interruptAt(
        { ...baseOptions, sessionId, prompt: "go on", tools: [], limits: { maxContextTokens: 4_000 } },
        "compaction_started"
      )
      assert.deepStrictEqual(typesOf(events), [
        "run_started",
        "message",
        "compaction_started",
        "compaction_failed",
        "run_cancelled"
      ])
      assertCompactionPairs(events)
      assert.strictEqual(ofType(events, "compaction_failed")[0]!.data.cancelled, true)
      assert.strictEqual(yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.interrupted), 1)
      const store = yield* SessionStore.SessionStore
      assert.isTrue(Option.isNone(yield* store.compactions!.latest(sessionId)))
    }).pipe(Effect.provide(runnerLayer({ script: [[Fake.silence]] })))
  )

  it.effect("CTX-1 a long run compacts its own earlier turns and keeps its prompt whole in every request", () => {
    let turn = 0
    const script: Fake.Script = (request, index) => {
      if (isSummary(request)) return summaryAnswer(`progress ${index}`)
      turn += 1
      return turn <= 30
        ? Fake.callTools({ id: `c${turn}`, name: "echo", args: { text: "y".repeat(600) } })
        : Fake.answer("all done")
    }
    return Effect.gen(function* () {
      const prompt = "the one task of this run"
      const events = yield* collect({
        ...baseOptions,
        prompt,
        tools: ["echo"],
        limits: { maxContextTokens: 3_000 }
      })
      assertContract(events)
      assert.strictEqual(events.at(-1)?.type, "run_completed")
      assert.isAtLeast(ofType(events, "compaction_completed").length, 2)
      for (const request of yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)) {
        if (isSummary(request)) continue
        assert.include(textParts(request.messages), prompt)
        assert.strictEqual(request.messages[0]!.role, "user")
        assertCallsWithResults(request.messages)
      }
    }).pipe(Effect.provide(runnerLayer({ script })))
  })

  it.effect("CTX-1 a store without compactions still compacts for the length of the run", () =>
    Effect.gen(function* () {
      const { sessionId } = yield* seeded(["a".repeat(6_000), "b".repeat(6_000), "c".repeat(6_000)])
      const events = yield* collect({
        ...baseOptions,
        sessionId,
        prompt: "go on",
        tools: [],
        limits: { maxContextTokens: 4_000 }
      })
      assertContract(events)
      assert.strictEqual(ofType(events, "compaction_completed").length, 1)
      assert.strictEqual(events.at(-1)?.type, "run_completed")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [summaryAnswer("S"), Fake.answer("fine")],
          store: Layer.effect(
            SessionStore.SessionStore,
            Effect.map(SessionStore.SessionStore, ({ compactions: _, ...rest }) => SessionStore.SessionStore.of(rest))
          ).pipe(Layer.provide(SessionStore.layerMemory))
        })
      )
    )
  )

  it("CTX-1 the contract check refuses a compaction that never ends or ends twice", () => {
    const event = (type: string, seq: number) => ({ type, seq }) as unknown as KnownRunEvent
    assert.throws(() => assertCompactionPairs([event("compaction_started", 1), event("run_failed", 2)]), /open/)
    assert.throws(() => assertCompactionPairs([event("compaction_completed", 1)]), /without compaction_started/)
    assert.throws(
      () => assertCompactionPairs([event("compaction_started", 1), event("compaction_started", 2)]),
      /another was open/
    )
    assert.doesNotThrow(() =>
      assertCompactionPairs([event("compaction_started", 1), event("compaction_failed", 2), event("run_failed", 3)])
    )
  })
})
