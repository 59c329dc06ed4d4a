// `/compact` by hand (the `Compaction` service) and the plugins' compaction hooks (CTX-1).

import { ProviderError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { ModelRequest } from "@alisio/domain/LanguageModel"
import { type AfterCompactInput, type BeforeCompactInput, definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Fake from "@alisio/providers/FakeProvider"
import { Compaction, SUMMARY_SYSTEM_MARK } from "@alisio/runtime/Compaction"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as Providers from "@alisio/runtime/Providers"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { assertContract, baseOptions, collect, ofType, runnerLayer } from "./helpers/harness.js"
import { hostLayer } from "./helpers/plugins.js"

const isSummary = (request: ModelRequest) => request.system?.startsWith(SUMMARY_SYSTEM_MARK) === true
const textOf = (request: ModelRequest) =>
  request.messages
    .flatMap((message) =>
      message.role === "system"
        ? [message.content]
        : message.content.flatMap((p) => (p._tag === "text" ? [p.text] : []))
    )
    .join("\n")

const requests = Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)

/** Two runs in one session; returns its id. */
const twoRuns = Effect.gen(function* () {
  const runner = yield* Runner
  const first = yield* runner.run({ ...baseOptions, prompt: "write the parser", tools: [] })
  yield* runner.run({ ...baseOptions, prompt: "now test it", sessionId: first.sessionId, tools: [] })
  return first.sessionId
})

describe("CTX-1 /compact by hand", () => {
  it.effect(
    "CTX-1 compacts a session with its last run's model and the person's focus; the next run uses the summary",
    () =>
      Effect.gen(function* () {
        const sessionId = yield* twoRuns
        const compaction = yield* Compaction
        const result = yield* compaction.compact(sessionId, { focus: "the parser's edge cases" })
        assert.strictEqual(result.messagesCompacted, 3)
        assert.isBelow(result.tokensAfter, result.tokensBefore)
        const [, , summary] = yield* requests
        assert.isTrue(isSummary(summary!))
        assert.strictEqual(summary!.model, "fake-model")
        assert.include(textOf(summary!), "focus on: the parser's edge cases")
        assert.include(textOf(summary!), "write the parser")
        const store = yield* SessionStore
        const row = Option.getOrThrow(yield* store.compactions!.latest(sessionId))
        assert.deepStrictEqual(
          [row.focus, row.runId, row.lastPosition, row.summary],
          ["the parser's edge cases", undefined, 3, "Parser written; tests next."]
        )
        yield* (yield* Runner).run({ ...baseOptions, prompt: "and then?", sessionId, tools: [] })
        const last = (yield* requests).at(-1)!
        assert.deepStrictEqual(
          last.messages.map((m) => m.role),
          ["user", "assistant", "user"]
        )
        assert.include(textOf(last), "Parser written; tests next.")
        assert.include(textOf(last), "tests done")
        assert.notInclude(textOf(last), "write the parser")
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: [
              Fake.answer(`parser done: ${"p".repeat(2_000)}`),
              Fake.answer(`tests done: ${"t".repeat(2_000)}`),
              Fake.answer("Parser written; tests next."),
              Fake.answer("more")
            ]
          })
        )
      )
  )

  it.effect("CTX-1 the session's provider is found among the registered providers", () =>
    Effect.gen(function* () {
      const other = yield* Fake.make(
        [Fake.answer("1".repeat(2_000)), Fake.answer("two"), Fake.answer("The summary.")],
        {
          provider: "other",
          models: [{ id: "other-model", provider: "other", contextWindow: 50_000 }]
        }
      )
      const providers = yield* Providers.Providers
      yield* providers.register("other", other.model)
      const runner = yield* Runner
      const options = { ...baseOptions, model: "other-model", provider: other.model, tools: [] }
      const first = yield* runner.run({ ...options, prompt: "one" })
      yield* runner.run({ ...options, prompt: "two", sessionId: first.sessionId })
      const result = yield* (yield* Compaction).compact(first.sessionId)
      assert.strictEqual(result.messagesCompacted, 3)
      const sent = yield* other.fake.requests
      assert.isTrue(isSummary(sent[2]!))
      assert.strictEqual(sent[2]!.model, "other-model")
      // 10% of the catalog window of 50 000 tokens.
      assert.strictEqual(sent[2]!.maxOutputTokens, 5_000)
      assert.strictEqual((yield* requests).length, 0, "the context's model was not used")
    }).pipe(Effect.provide(runnerLayer({ script: [] }).pipe(Layer.provideMerge(Providers.layerMemory))))
  )

  it.effect("CTX-1 a session a run holds is refused with a message naming the run; nothing is sent", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const first = yield* runner.run({ ...baseOptions, prompt: "one", tools: [] })
      yield* runner.run({ ...baseOptions, prompt: "two", sessionId: first.sessionId, tools: [] })
      const streaming = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        runner.run({
          ...baseOptions,
          prompt: "three",
          sessionId: first.sessionId,
          tools: [],
          onEvent: (event) => (event.type === "message" ? Deferred.succeed(streaming, undefined) : Effect.void)
        })
      )
      yield* Deferred.await(streaming)
      const error = yield* Effect.flip((yield* Compaction).compact(first.sessionId))
      assert.strictEqual(error._tag, "CompactionError")
      assert.include(error.message, `in use by a run (process ${process.pid})`)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual((yield* requests).length, 3)
      // Once the run ended, the lock is free again.
      yield* (yield* Compaction).compact(first.sessionId)
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.answer("1".repeat(2_000)), Fake.answer("2"), [Fake.silence], Fake.answer("summary")]
        })
      )
    )
  )

  it.effect("CTX-1 nothing to compact, an unknown session and a failed summary are CompactionErrors that say why", () =>
    Effect.gen(function* () {
      const compaction = yield* Compaction
      const runner = yield* Runner
      const once = yield* runner.run({ ...baseOptions, prompt: "only", tools: [] })
      const nothing = yield* Effect.flip(compaction.compact(once.sessionId))
      assert.include(nothing.message, "Nothing to compact")
      const unknown = yield* Effect.flip(compaction.compact("no-such-session" as SessionId))
      assert.include(unknown.message, "No session no-such-session")
      yield* runner.run({ ...baseOptions, prompt: "second", sessionId: once.sessionId, tools: [] })
      const failed = yield* Effect.flip(compaction.compact(once.sessionId))
      assert.strictEqual(failed.message, "Compacting failed: the summary request failed: overloaded")
      const store = yield* SessionStore
      assert.isTrue(Option.isNone(yield* store.compactions!.latest(once.sessionId)))
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            Fake.answer("1"),
            Fake.answer("2"),
            [Fake.fail(new ProviderError({ code: "server", message: "overloaded" }))]
          ]
        })
      )
    )
  )
})

describe("CTX-1 /compact whose summary is empty", () => {
  it.effect("CTX-1 a model that spent its output budget reasoning is told apart from one that wrote nothing", () =>
    Effect.gen(function* () {
      const sessionId = yield* twoRuns
      const compaction = yield* Compaction
      const thinking = yield* Effect.flip(compaction.compact(sessionId))
      assert.match(
        thinking.message,
        /^Compacting failed: the model fake-model wrote no summary within its output budget of \d+ tokens \(a reasoning model may spend it all thinking\): a lower reasoning effort \(\/effort\)/
      )
      const silent = yield* Effect.flip(compaction.compact(sessionId))
      assert.strictEqual(silent.message, "Compacting failed: the model fake-model wrote an empty summary.")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            Fake.answer(`parser done: ${"p".repeat(2_000)}`),
            Fake.answer(`tests done: ${"t".repeat(2_000)}`),
            [Fake.reasoning("Let me think about the parser at length…"), Fake.finish("length")],
            [Fake.finish("stop")]
          ]
        })
      )
    )
  )
})

describe("CTX-1 /compact whose summary breaks off", () => {
  it.effect("CTX-1 the text that had arrived is not added to the session as an answer", () =>
    Effect.gen(function* () {
      const sessionId = yield* twoRuns
      const store = yield* SessionStore
      const before = yield* store.messages(sessionId)
      const failed = yield* Effect.flip((yield* Compaction).compact(sessionId))
      assert.include(failed.message, "the connection was reset")
      assert.deepStrictEqual(yield* store.messages(sessionId), before)
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            Fake.answer(`parser done: ${"p".repeat(2_000)}`),
            Fake.answer(`tests done: ${"t".repeat(2_000)}`),
            [
              ...Fake.text("Partial summ"),
              Fake.fail(new ProviderError({ code: "network", message: "the connection was reset" }))
            ]
          ]
        })
      )
    )
  )
})

describe("CTX-1 /compact keeps a history a summary would not shorten", () => {
  it.effect("CTX-1 a summary no shorter than the turns it replaces is not stored; the next run sends them whole", () =>
    Effect.gen(function* () {
      const sessionId = yield* twoRuns
      const error = yield* Effect.flip((yield* Compaction).compact(sessionId))
      assert.match(
        error.message,
        /^Nothing compacted: the summary \(about \d+ tokens with the rest of the history\) is no shorter than the history it would replace \(about \d+\), so the history is kept as it is\.$/
      )
      const store = yield* SessionStore
      assert.isTrue(Option.isNone(yield* store.compactions!.latest(sessionId)))
      yield* (yield* Runner).run({ ...baseOptions, prompt: "and then?", sessionId, tools: [] })
      assert.include(textOf((yield* requests).at(-1)!), "write the parser")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            Fake.answer("parsed"),
            Fake.answer("tested"),
            Fake.answer(`A long account of two short turns: ${"words ".repeat(200)}`),
            Fake.answer("more")
          ]
        })
      )
    )
  )
})

const hooked = (
  seen: { before: Array<BeforeCompactInput>; after: Array<AfterCompactInput> },
  instructions: string | undefined
) =>
  definePlugin({
    id: "keeper",
    version: "1.0.0",
    setup: Effect.gen(function* () {
      const api = yield* PluginApi
      yield* api.compaction.before((input) =>
        Effect.sync(() => {
          seen.before.push(input)
          return instructions
        })
      )
      yield* api.compaction.after((input) => Effect.sync(() => void seen.after.push(input)))
    })
  })

describe("CTX-1 plugins observe compaction", () => {
  it.scoped(
    "CTX-1 before adds instructions to the summary request, after sees the summary; in a run and by hand",
    () => {
      const seen = { before: [] as Array<BeforeCompactInput>, after: [] as Array<AfterCompactInput> }
      return Effect.gen(function* () {
        const host = yield* PluginHost.PluginHost
        yield* host.load({ definition: hooked(seen, "Keep the ticket number ABC-123.") })
        const runner = yield* Runner
        const first = yield* runner.run({ ...baseOptions, prompt: "one", tools: [] })
        const events = yield* collect({
          ...baseOptions,
          prompt: "two",
          sessionId: first.sessionId,
          tools: [],
          limits: { maxContextTokens: 3_000 }
        })
        assertContract(events)
        assert.strictEqual(ofType(events, "compaction_completed").length, 1)
        const summary = (yield* requests).find(isSummary)!
        assert.include(textOf(summary), "Keep the ticket number ABC-123.")
        assert.deepStrictEqual(seen.before, [
          { sessionId: first.sessionId, runId: events[0]!.runId, reason: "threshold", messages: 2, focus: undefined }
        ])
        assert.strictEqual(seen.after.length, 1)
        assert.deepStrictEqual(
          { ...seen.after[0]!, tokensBefore: 0, tokensAfter: 0 },
          {
            sessionId: first.sessionId,
            runId: events[0]!.runId,
            reason: "threshold",
            summary: "Ticket ABC-123 in progress.",
            tokensBefore: 0,
            tokensAfter: 0,
            messagesCompacted: 2
          }
        )
        yield* runner.run({ ...baseOptions, prompt: "three", sessionId: first.sessionId, tools: [] })
        yield* (yield* Compaction).compact(first.sessionId, { focus: "tickets" })
        assert.deepStrictEqual(
          seen.before.slice(1).map((input) => [input.reason, input.focus, input.runId]),
          [["manual", "tickets", undefined]]
        )
        assert.strictEqual(seen.after.at(-1)?.summary, "Still ABC-123.")
        // Unloaded, its hooks are gone.
        yield* host.unload("keeper")
        yield* runner.run({ ...baseOptions, prompt: "four", sessionId: first.sessionId, tools: [] })
        yield* (yield* Compaction).compact(first.sessionId)
        assert.strictEqual(seen.before.length, 2)
        assert.deepStrictEqual(yield* host.diagnostics, [])
      }).pipe(
        Effect.provide(
          hostLayer([
            Fake.answer("x".repeat(8_000)),
            Fake.answer("Ticket ABC-123 in progress."),
            Fake.answer("two done"),
            Fake.answer(`three done ${"3".repeat(2_000)}`),
            Fake.answer("Still ABC-123."),
            Fake.answer(`four done ${"4".repeat(2_000)}`),
            Fake.answer("Done.")
          ])
        )
      )
    }
  )

  it.scoped("CTX-1 PL-6 a failing hook and a hook past its time are diagnostics; the compaction completes", () =>
    Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      yield* host.load({
        definition: definePlugin({
          id: "broken",
          version: "1.0.0",
          setup: Effect.gen(function* () {
            const api = yield* PluginApi
            yield* api.compaction.before(() => Effect.fail(new Error("no instructions today")))
            yield* api.compaction.after(() => Effect.die("crashed"))
          })
        })
      })
      yield* host.load({
        definition: definePlugin({
          id: "slow",
          version: "1.0.0",
          setup: Effect.flatMap(PluginApi, (api) => api.compaction.before(() => Effect.never))
        })
      })
      const runner = yield* Runner
      const first = yield* runner.run({ ...baseOptions, prompt: "one", tools: [] })
      yield* runner.run({ ...baseOptions, prompt: "two", sessionId: first.sessionId, tools: [] })
      const fiber = yield* Effect.fork((yield* Compaction).compact(first.sessionId))
      yield* TestClock.adjust("5 seconds")
      const result = yield* Fiber.join(fiber)
      assert.strictEqual(result.messagesCompacted, 3)
      assert.deepStrictEqual((yield* host.diagnostics).map((d) => [d.pluginId, d.stage, d.message]).sort(), [
        ["broken", "compaction", "its compaction after hook failed: crashed"],
        ["broken", "compaction", "its compaction before hook failed: no instructions today"],
        [
          "slow",
          "compaction",
          "its compaction before hook failed: its compaction before hook took longer than 5000 ms and was stopped"
        ]
      ])
    }).pipe(Effect.provide(hostLayer([Fake.answer("1".repeat(2_000)), Fake.answer("2"), Fake.answer("the summary")])))
  )
})
