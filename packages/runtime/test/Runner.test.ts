import { OutputTruncatedError, ProviderError } from "@alisio/domain/Errors"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as Interaction from "@alisio/runtime/Interaction"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { assertContract, baseOptions, collect, interruptAt, ofType, runnerLayer, typesOf } from "./helpers/harness.js"

const usage = { inputTokens: 10, outputTokens: 5 }

describe("Runner", () => {
  it.effect("EV-1 a plain answer streams deltas, stores the conversation and completes", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.deepStrictEqual(typesOf(events), [
        "run_started",
        "message",
        "text_delta",
        "text_delta",
        "turn_completed",
        "message",
        "run_completed"
      ])
      const done = ofType(events, "run_completed")[0]!
      assert.strictEqual(done.data.text, "Hello there")
      assert.strictEqual(done.data.turns, 1)
      const store = yield* SessionStore.SessionStore
      const messages = yield* store.messages(events[0]!.sessionId)
      assert.deepStrictEqual(
        messages.map((m) => m.message.role),
        ["user", "assistant"]
      )
      const runs = yield* store.runs!(events[0]!.sessionId)
      assert.strictEqual(runs[0]?.status, "completed")
    }).pipe(
      Effect.provide(
        runnerLayer({ script: [[...Fake.text("Hello there", { chunks: 2 }), Fake.finish("stop", usage)]] })
      )
    )
  )

  it.effect("TL-4 tool calls run, are journaled, and their results go back to the model", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      const completed = ofType(events, "tool_call_completed")
      assert.deepStrictEqual(
        completed.map((e) => [e.data.name, e.data.status, e.data.result]),
        [["echo", "completed", "echo: hi"]]
      )
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.strictEqual(requests.length, 2)
      const toolMessage = requests[1]!.messages.find((m) => m.role === "tool")
      assert.deepStrictEqual(toolMessage?.role === "tool" ? toolMessage.content : [], [
        { _tag: "text", text: "echo: hi" }
      ])
      assert.deepStrictEqual(requests[0]!.tools.map((t) => t.name).sort(), ["echo", "note", "sleep"])
      const store = yield* SessionStore.SessionStore
      const journal = yield* store.toolCalls(events[0]!.sessionId)
      assert.deepStrictEqual(
        journal.map((c) => [c.id, c.name, c.status, c.effect, c.runId]),
        [["c1", "echo", "completed", "read", events[0]!.runId]]
      )
      const done = ofType(events, "run_completed")[0]!
      assert.strictEqual(done.data.turns, 2)
      assert.deepStrictEqual(done.data.usage, { inputTokens: 20, outputTokens: 10 })
    }).pipe(
      Effect.provide(
        runnerLayer({ script: [Fake.callTools({ id: "c1", name: "echo", args: { text: "hi" } }), Fake.answer("done")] })
      )
    )
  )

  it.effect("TL-2 an approval granted by a person runs the write tool", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.deepStrictEqual(
        ofType(events, "approval_requested").map((e) => [e.data.kind, e.data.tool]),
        [["tool", "note"]]
      )
      assert.deepStrictEqual(
        ofType(events, "approval_resolved").map((e) => [e.data.approved, e.data.by]),
        [[true, "person"]]
      )
      assert.strictEqual(ofType(events, "tool_call_completed")[0]?.data.status, "completed")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.callTools({ id: "c1", name: "note", args: { text: "x" } }), Fake.answer("ok")],
          interaction: Interaction.layerScripted({ approve: () => Effect.succeed(true) })
        })
      )
    )
  )

  it.effect("TL-2 LIM-1 a tool call's durationMs leaves out the time its approval waited for a person", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect(baseOptions))
      yield* TestClock.adjust("30 seconds")
      yield* TestClock.adjust("2 seconds")
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      const requested = ofType(events, "approval_requested")[0]!
      const resolved = ofType(events, "approval_resolved")[0]!
      assert.strictEqual(Date.parse(resolved.time) - Date.parse(requested.time), 30_000, "the person took 30 s")
      const completed = ofType(events, "tool_call_completed")[0]!
      assert.strictEqual(completed.data.status, "completed")
      assert.strictEqual(completed.data.durationMs, 2_000, "the tool itself ran 2 s")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.callTools({ id: "c1", name: "slow_note", args: {} }), Fake.answer("ok")],
          tools: [
            defineTool({
              name: "slow_note",
              description: "Writes a note, slowly.",
              effect: "write",
              input: Schema.Struct({}),
              run: () => Effect.as(Effect.sleep("2 seconds"), textResult("noted"))
            })
          ],
          interaction: Interaction.layerScripted({ approve: () => Effect.as(Effect.sleep("30 seconds"), true) })
        })
      )
    )
  )

  it.effect("TL-2 a denied approval becomes a result the model sees; read tools need none", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      const completed = ofType(events, "tool_call_completed")
      assert.deepStrictEqual(
        completed.map((e) => [e.data.name, e.data.status]),
        [
          ["echo", "completed"],
          ["note", "denied"]
        ]
      )
      assert.strictEqual(ofType(events, "approval_requested").length, 1)
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      const denied = requests[1]!.messages.find((m) => m.role === "tool" && m.toolName === "note")
      assert.isTrue(denied?.role === "tool" && denied.isError)
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            Fake.callTools(
              { id: "c1", name: "echo", args: { text: "a" } },
              { id: "c2", name: "note", args: { text: "b" } }
            ),
            Fake.answer("ok")
          ],
          interaction: Interaction.layerHeadless({ approveAll: false })
        })
      )
    )
  )

  it.effect("TL-2 read-only runs offer only read tools and refuse a write call", () =>
    Effect.gen(function* () {
      const events = yield* collect({ ...baseOptions, readOnly: true })
      assertContract(events)
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.deepStrictEqual(requests[0]!.tools.map((t) => t.name).sort(), ["echo", "sleep"])
      assert.strictEqual(ofType(events, "tool_call_completed")[0]?.data.status, "denied")
    }).pipe(
      Effect.provide(
        runnerLayer({ script: [Fake.callTools({ id: "c1", name: "note", args: { text: "x" } }), Fake.answer("ok")] })
      )
    )
  )

  it.effect("a bad tool call (unknown tool, invalid arguments) is an error result, not a crash", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      const results = ofType(events, "tool_call_completed").map((e) => [e.data.status, e.data.result.split(":")[0]])
      assert.deepStrictEqual(results, [
        ["error", 'Unknown tool "nope". Did you mean "note"? Available tools'],
        ["error", "Invalid arguments for echo"]
      ])
      assert.strictEqual(ofType(events, "run_completed").length, 1)
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            Fake.callTools({ id: "c1", name: "nope", args: {} }, { id: "c2", name: "echo", args: { wrong: 1 } }),
            Fake.answer("ok")
          ]
        })
      )
    )
  )

  it.effect("LIM-8 maxTurns bounds the turns: the run ends turns_exceeded", () =>
    Effect.gen(function* () {
      const events = yield* collect({ ...baseOptions, limits: { maxTurns: 2 } })
      assertContract(events)
      assert.strictEqual(events.at(-1)?.type, "turns_exceeded")
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.strictEqual(requests.length, 2)
      assert.strictEqual(ofType(events, "tool_call_completed").length, 2)
    }).pipe(
      Effect.provide(
        runnerLayer({ script: (_, i) => Fake.callTools({ id: `c${i}`, name: "echo", args: { text: "again" } }) })
      )
    )
  )

  it.effect("EV-4 turn_completed carries durationMs and ttftMs from the clock", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect(baseOptions))
      yield* TestClock.adjust(300)
      yield* TestClock.adjust(200)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      const turn = ofType(events, "turn_completed")[0]!
      assert.strictEqual(turn.data.ttftMs, 300)
      assert.strictEqual(turn.data.durationMs, 500)
      assert.deepStrictEqual(turn.data.usage, usage)
    }).pipe(
      Effect.provide(
        runnerLayer({ script: [[Fake.delay(300), ...Fake.text("hi"), Fake.delay(200), Fake.finish("stop", usage)]] })
      )
    )
  )

  it.effect("EV-4 ttftMs is absent when nothing was streamed", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assert.isUndefined(ofType(events, "turn_completed")[0]!.data.ttftMs)
    }).pipe(Effect.provide(runnerLayer({ script: [[Fake.finish("stop")]] })))
  )

  it.effect("LIM-3 the active-time limit ends the run run_failed timeout with the timeout object", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect({ ...baseOptions, limits: { timeoutMs: 10_000 } }))
      yield* TestClock.adjust(10_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      const failed = ofType(events, "run_failed")[0]!
      assert.strictEqual(failed.data.code, "timeout")
      assert.deepStrictEqual(failed.data.timeout, {
        kind: "run",
        ms: 10_000,
        model: "fake-model",
        provider: "fake",
        stage: "model_request",
        firstRequest: true,
        attempts: 1
      })
      assert.match(failed.data.error, /^The run used up its 10s of active time while waiting for the model/)
    }).pipe(Effect.provide(runnerLayer({ script: [[Fake.delay(60_000), ...Fake.answer("late")]] })))
  )

  it.effect("LIM-3 a timeout during a tool names the tool and stage", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect({ ...baseOptions, limits: { timeoutMs: 5_000 } }))
      yield* TestClock.adjust(5_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      const failed = ofType(events, "run_failed")[0]!
      assert.strictEqual(failed.data.timeout?.stage, "tool")
      assert.strictEqual(failed.data.timeout?.tool, "sleep")
      assert.deepStrictEqual(
        ofType(events, "tool_call_completed").map((e) => e.data.status),
        ["cancelled"]
      )
      const store = yield* SessionStore.SessionStore
      const stored = yield* store.messages(events[0]!.sessionId)
      const result = stored.at(-1)!.message
      assert.isTrue(result.role === "tool" && result.isError, "the cut call is stored with a cancelled result")
      assert.deepStrictEqual(
        typesOf(events).filter((t) => t === "tool_progress"),
        ["tool_progress"]
      )
    }).pipe(
      Effect.provide(runnerLayer({ script: [Fake.callTools({ id: "c1", name: "sleep", args: { ms: 60_000 } })] }))
    )
  )

  it.effect("LIM-1 a 10 s active budget survives an approval held open for 100 s", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect({ ...baseOptions, limits: { timeoutMs: 10_000 } }))
      yield* TestClock.adjust(100_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.strictEqual(events.at(-1)?.type, "run_completed")
      assert.deepStrictEqual(
        ofType(events, "approval_resolved").map((e) => e.data.approved),
        [true]
      )
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.callTools({ id: "c1", name: "note", args: { text: "x" } }), Fake.answer("ok")],
          interaction: Interaction.layerScripted({ approve: () => Effect.as(Effect.sleep(100_000), true) })
        })
      )
    )
  )

  it.effect("LIM-4 a silent request is resent once, then succeeds; the retry is no turn and stores nothing", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect({ ...baseOptions, limits: { firstTokenTimeoutMs: 1_000 } }))
      yield* TestClock.adjust(1_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.deepStrictEqual(
        ofType(events, "request_retry").map((e) => e.data),
        [{ attempt: 1, of: 1, reason: "first_token_timeout", afterMs: 1_000 }]
      )
      assert.strictEqual(ofType(events, "run_completed")[0]?.data.turns, 1)
      const fake = yield* Fake.FakeProvider
      assert.strictEqual((yield* fake.requests).length, 2)
      assert.strictEqual(yield* fake.interrupted, 1, "the silent request was interrupted (its connection closed)")
      const store = yield* SessionStore.SessionStore
      assert.strictEqual((yield* store.messages(events[0]!.sessionId)).length, 2)
    }).pipe(Effect.provide(runnerLayer({ script: [[Fake.silence], Fake.answer("ok")] })))
  )

  it.effect("LIM-4 when the retries are spent the run fails timeout with attempts", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(
        collect({ ...baseOptions, limits: { firstTokenTimeoutMs: 1_000, firstTokenRetries: 2 } })
      )
      yield* TestClock.adjust(1_000)
      yield* TestClock.adjust(1_000)
      yield* TestClock.adjust(1_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.strictEqual(ofType(events, "request_retry").length, 2)
      const failed = ofType(events, "run_failed")[0]!
      assert.strictEqual(failed.data.code, "timeout")
      assert.strictEqual(failed.data.timeout?.kind, "first_token")
      assert.strictEqual(failed.data.timeout?.attempts, 3)
      assert.strictEqual(failed.data.timeout?.stage, "first_token")
    }).pipe(Effect.provide(runnerLayer({ script: [[Fake.silence], [Fake.silence], [Fake.silence]] })))
  )

  it.effect("LIM-4 a request that already streamed is never resent: an idle stall fails stream_idle", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(
        collect({ ...baseOptions, limits: { firstTokenTimeoutMs: 1_000, streamIdleTimeoutMs: 5_000 } })
      )
      yield* TestClock.adjust(5_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.strictEqual(ofType(events, "request_retry").length, 0)
      const failed = ofType(events, "run_failed")[0]!
      assert.strictEqual(failed.data.timeout?.kind, "stream_idle")
      assert.strictEqual(failed.data.timeout?.stage, "streaming")
      const store = yield* SessionStore.SessionStore
      const stored = (yield* store.messages(events[0]!.sessionId)).map((m) => m.message)
      assert.deepStrictEqual(stored.at(-1), { role: "assistant", content: [{ _tag: "text", text: "partial" }] })
    }).pipe(Effect.provide(runnerLayer({ script: [[...Fake.text("partial"), Fake.silence]] })))
  )

  it.effect(
    "LIM-4 an idle stall shorter than the first-token timeout is caught at its own time after the first part",
    () =>
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(
          collect({ ...baseOptions, limits: { firstTokenTimeoutMs: 120_000, streamIdleTimeoutMs: 5_000 } })
        )
        yield* TestClock.adjust(5_000)
        // The watchdog used to sleep out the first-token timeout before it looked at the stall.
        const events = yield* Fiber.join(fiber)
        assertContract(events)
        const failed = ofType(events, "run_failed")[0]!
        assert.strictEqual(failed.data.timeout?.kind, "stream_idle")
        assert.strictEqual(failed.data.timeout?.ms, 5_000)
      }).pipe(Effect.provide(runnerLayer({ script: [[...Fake.text("partial"), Fake.silence]] })))
  )

  it.effect("LIM-4 silence after the finish (a connection left open) completes the answer, not a stall", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(
        collect({ ...baseOptions, limits: { firstTokenTimeoutMs: 120_000, streamIdleTimeoutMs: 3_000 } })
      )
      yield* TestClock.adjust(3_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.strictEqual(events.at(-1)!.type, "run_completed")
      const store = yield* SessionStore.SessionStore
      const stored = (yield* store.messages(events[0]!.sessionId)).map((m) => m.message)
      assert.deepStrictEqual(stored.at(-1), { role: "assistant", content: [{ _tag: "text", text: "all of it" }] })
    }).pipe(Effect.provide(runnerLayer({ script: [[...Fake.text("all of it"), Fake.finish("stop"), Fake.silence]] })))
  )

  it.effect("a response the provider breaks off keeps the text that had arrived, and drops its unfinished call", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.deepStrictEqual(typesOf(events).slice(-2), ["message", "run_failed"])
      assert.strictEqual(ofType(events, "run_failed")[0]!.data.providerCode, "network")
      const store = yield* SessionStore.SessionStore
      const stored = (yield* store.messages(events[0]!.sessionId)).map((m) => m.message)
      assert.deepStrictEqual(stored.at(-1), { role: "assistant", content: [{ _tag: "text", text: "I will now" }] })
      assert.deepStrictEqual(yield* store.toolCalls(events[0]!.sessionId), [])
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            [
              ...Fake.text("I will now", { chunks: 2 }),
              ...Fake.toolCall("c1", "sleep", '{"ms":', { cut: true }),
              Fake.fail(new ProviderError({ code: "network", message: "connection reset" }))
            ]
          ]
        })
      )
    )
  )

  it.effect("a provider error ends the run run_failed provider_error with its code", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      const failed = ofType(events, "run_failed")[0]!
      assert.deepStrictEqual(
        [failed.data.code, failed.data.providerCode, failed.data.error],
        ["provider_error", "auth", "bad key"]
      )
    }).pipe(
      Effect.provide(runnerLayer({ script: [[Fake.fail(new ProviderError({ code: "auth", message: "bad key" }))]] }))
    )
  )

  describe("truncation (LIM-5…LIM-7)", () => {
    it.effect(
      "LIM-6 a cut tool call is dropped, never run or stored, and the turn is asked again with a transient notice",
      () =>
        Effect.gen(function* () {
          const events = yield* collect(baseOptions)
          assertContract(events)
          assert.deepStrictEqual(
            ofType(events, "truncation_recovery").map((e) => e.data),
            [{ attempt: 1, of: 2, reason: "tool_call_cut", maxOutputTokens: 16384 }]
          )
          assert.strictEqual(ofType(events, "tool_call_started").length, 0)
          const store = yield* SessionStore.SessionStore
          const sessionId = events[0]!.sessionId
          assert.strictEqual((yield* store.toolCalls(sessionId)).length, 0)
          const stored = (yield* store.messages(sessionId)).map((m) => m.message)
          assert.deepStrictEqual(
            stored.map((m) => m.role),
            ["user", "assistant", "assistant"],
            "visible text kept, notice not stored"
          )
          assert.isFalse(JSON.stringify(stored).includes("tool_call"))
          const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
          const notice = requests[1]!.messages.at(-1)!
          assert.isTrue(notice.role === "user" && JSON.stringify(notice).includes("cut off by the output limit"))
          assert.strictEqual(ofType(events, "run_completed")[0]?.data.turns, 1, "a recovery is not a turn")
        }).pipe(
          Effect.provide(
            runnerLayer({
              script: [
                [
                  ...Fake.text("Writing the file"),
                  ...Fake.toolCall("c1", "echo", '{"text":"hel', { cut: true }),
                  Fake.finish("length")
                ],
                Fake.answer("done")
              ]
            })
          )
        )
    )

    it.effect("LIM-6 an empty response at length is recovered as empty_response", () =>
      Effect.gen(function* () {
        const events = yield* collect(baseOptions)
        assertContract(events)
        assert.deepStrictEqual(
          ofType(events, "truncation_recovery").map((e) => e.data.reason),
          ["empty_response"]
        )
        assert.strictEqual(events.at(-1)?.type, "run_completed")
      }).pipe(Effect.provide(runnerLayer({ script: [[Fake.finish("length")], Fake.answer("ok")] })))
    )

    it.effect("LIM-6 a typed OutputTruncatedError and the legacy text are recovered too", () =>
      Effect.gen(function* () {
        const events = yield* collect(baseOptions)
        assertContract(events)
        assert.deepStrictEqual(
          ofType(events, "truncation_recovery").map((e) => [e.data.attempt, e.data.reason]),
          [
            [1, "empty_response"],
            [2, "empty_response"]
          ]
        )
        assert.strictEqual(events.at(-1)?.type, "run_completed")
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: [
              [Fake.fail(new OutputTruncatedError({ message: "cut" }))],
              [Fake.fail(new ProviderError({ code: "server", message: "plugin failed: output_truncated" }))],
              Fake.answer("ok")
            ]
          })
        )
      )
    )

    it.effect("LIM-6 when recoveries run out the run fails output_truncated with the truncation object", () =>
      Effect.gen(function* () {
        const events = yield* collect({ ...baseOptions, limits: { maxOutputTokens: 512 } })
        assertContract(events)
        assert.strictEqual(ofType(events, "truncation_recovery").length, 2)
        const failed = ofType(events, "run_failed")[0]!
        assert.strictEqual(failed.data.code, "output_truncated")
        assert.deepStrictEqual(failed.data.truncation, {
          attempts: 3,
          maxOutputTokens: 512,
          source: "user",
          model: "fake-model"
        })
        assert.match(failed.data.error, /output budget/)
      }).pipe(
        Effect.provide(
          runnerLayer({ script: [[Fake.finish("length")], [Fake.finish("length")], [Fake.finish("length")]] })
        )
      )
    )

    it.effect("LIM-7 complete calls in a cut response still run", () =>
      Effect.gen(function* () {
        const events = yield* collect(baseOptions)
        assertContract(events)
        assert.deepStrictEqual(
          ofType(events, "tool_call_completed").map((e) => [e.data.toolCallId, e.data.status]),
          [["c1", "completed"]]
        )
        assert.deepStrictEqual(
          ofType(events, "truncation_recovery").map((e) => e.data.reason),
          ["tool_call_cut"]
        )
        const store = yield* SessionStore.SessionStore
        const stored = (yield* store.messages(events[0]!.sessionId)).map((m) => m.message)
        assert.deepStrictEqual(
          stored.map((m) => m.role),
          ["user", "assistant", "tool", "assistant"]
        )
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: [
              [
                ...Fake.toolCall("c1", "echo", { text: "a" }),
                ...Fake.toolCall("c2", "echo", '{"te', { cut: true }),
                Fake.finish("length")
              ],
              Fake.answer("fine")
            ]
          })
        )
      )
    )

    it.effect("LIM-7 useful text cut at length ends with response_truncated", () =>
      Effect.gen(function* () {
        const events = yield* collect(baseOptions)
        assertContract(events)
        assert.deepStrictEqual(typesOf(events).slice(-2), ["response_truncated", "run_completed"])
        assert.deepStrictEqual(ofType(events, "response_truncated")[0]!.data, {
          maxOutputTokens: 16384,
          source: "default",
          model: "fake-model"
        })
      }).pipe(Effect.provide(runnerLayer({ script: [[...Fake.text("A long answer that"), Fake.finish("length")]] })))
    )

    it.effect("LIM-5 the budget comes from the catalog capped at 65536, and effort is lowered on recovery", () =>
      Effect.gen(function* () {
        const events = yield* collect({
          ...baseOptions,
          effort: "high",
          modelInfo: { id: "fake-model", provider: "fake", maxOutputTokens: 128_000 }
        })
        assertContract(events)
        const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
        assert.deepStrictEqual(
          requests.map((r) => [r.maxOutputTokens, r.effort]),
          [
            [65536, "high"],
            [65536, "medium"]
          ]
        )
        assert.strictEqual(ofType(events, "truncation_recovery")[0]?.data.effort, "medium")
      }).pipe(Effect.provide(runnerLayer({ script: [[Fake.finish("length")], Fake.answer("ok")] })))
    )
  })

  describe("cancellation (CLI-2)", () => {
    it.effect("interrupting the run while the model streams ends it run_cancelled and closes the request", () =>
      Effect.gen(function* () {
        const events = yield* interruptAt(baseOptions, "text_delta")
        assertContract(events)
        assert.strictEqual(events.at(-1)?.type, "run_cancelled")
        assert.strictEqual(yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.interrupted), 1)
        const store = yield* SessionStore.SessionStore
        const runs = yield* store.runs!(events[0]!.sessionId)
        assert.strictEqual(runs[0]?.status, "cancelled")
      }).pipe(Effect.provide(runnerLayer({ script: [[...Fake.text("thinking"), Fake.silence]] })))
    )

    it.effect("a cancelled answer keeps the text it had shown, without the call it was writing", () =>
      Effect.gen(function* () {
        const events = yield* interruptAt(baseOptions, "reasoning_delta")
        assertContract(events)
        assert.deepStrictEqual(typesOf(events).slice(-2), ["message", "run_cancelled"])
        const store = yield* SessionStore.SessionStore
        const stored = (yield* store.messages(events[0]!.sessionId)).map((m) => m.message)
        assert.deepStrictEqual(
          stored.map((m) => m.role),
          ["user", "assistant"]
        )
        assert.deepStrictEqual(stored[1]?.content, [
          { _tag: "reasoning", text: "weighing it" },
          { _tag: "text", text: "Half an answer" }
        ])
        assert.deepStrictEqual(yield* store.toolCalls(events[0]!.sessionId), [], "no half-written call is stored")
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: [
              [
                ...Fake.text("Half an answer", { chunks: 3 }),
                ...Fake.toolCall("c1", "sleep", '{"ms": 1', { cut: true }),
                Fake.reasoning("weighing it"),
                Fake.silence
              ]
            ]
          })
        )
      )
    )

    it.effect("a run cancelled before any text stores no assistant message", () =>
      Effect.gen(function* () {
        const events = yield* interruptAt(baseOptions, "run_started")
        assertContract(events)
        const store = yield* SessionStore.SessionStore
        const stored = (yield* store.messages(events[0]!.sessionId)).map((m) => m.message.role)
        assert.deepStrictEqual(stored, ["user"])
      }).pipe(Effect.provide(runnerLayer({ script: [[Fake.silence]] })))
    )

    it.effect("interrupting during a tool stores the call as cancelled, never drops it", () =>
      Effect.gen(function* () {
        const events = yield* interruptAt(baseOptions, "tool_progress")
        assertContract(events)
        assert.deepStrictEqual(typesOf(events).slice(-4), [
          "tool_call_completed",
          "message",
          "message",
          "run_cancelled"
        ])
        const store = yield* SessionStore.SessionStore
        const journal = yield* store.toolCalls(events[0]!.sessionId)
        assert.deepStrictEqual(
          journal.map((c) => c.status),
          ["cancelled"]
        )
        const stored = (yield* store.messages(events[0]!.sessionId)).map((m) => m.message.role)
        assert.deepStrictEqual(stored, ["user", "assistant", "tool"])
      }).pipe(
        Effect.provide(runnerLayer({ script: [Fake.callTools({ id: "c1", name: "sleep", args: { ms: 60_000 } })] }))
      )
    )
  })

  it.effect("EV-3 persist-then-publish: every persisted event is in the store when an observer sees it", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore.SessionStore
      const missing = yield* Ref.make<ReadonlyArray<string>>([])
      const runner = yield* Runner
      const outcome = yield* runner.run({
        ...baseOptions,
        onEvent: (event) =>
          event.eventId === undefined
            ? Effect.void
            : store.events(event.sessionId).pipe(
                Effect.orDie,
                Effect.flatMap((stored) =>
                  stored.some((s) => s.eventId === event.eventId)
                    ? Effect.void
                    : Ref.update(missing, (m) => [...m, event.type])
                )
              )
      })
      assert.strictEqual(outcome.status, "completed")
      assert.deepStrictEqual(yield* Ref.get(missing), [])
      const stored = yield* store.events(outcome.sessionId)
      assert.isFalse(
        stored.some((e) => e.type === "text_delta" || e.type === "tool_progress"),
        "ephemeral events are never stored"
      )
    }).pipe(
      Effect.provide(
        runnerLayer({ script: [Fake.callTools({ id: "c1", name: "sleep", args: { ms: 0 } }), Fake.answer("ok")] })
      )
    )
  )

  it.effect("ST-3 the runner works with a store that lacks the optional run methods", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.strictEqual(events.at(-1)?.type, "run_completed")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.answer("ok")],
          store: Layer.effect(
            SessionStore.SessionStore,
            Effect.map(SessionStore.SessionStore, (full) => {
              const { beginRun, endRun, eventsPage, interruptRuns, messagesPage, runByRequest, runs, ...required } =
                full
              return SessionStore.SessionStore.of(required)
            })
          ).pipe(Layer.provide(SessionStore.layerMemory))
        })
      )
    )
  )

  it.effect("ST-3 a repeated requestId returns the existing run instead of running again", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const first = yield* runner.run({ ...baseOptions, requestId: "req-1" })
      const second = yield* runner.run({ ...baseOptions, sessionId: first.sessionId, requestId: "req-1" })
      assert.isFalse(first.existing)
      assert.isTrue(second.existing)
      assert.strictEqual(second.runId, first.runId)
      assert.strictEqual(second.status, "completed")
      assert.strictEqual((yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)).length, 1)
    }).pipe(Effect.provide(runnerLayer({ script: [Fake.answer("once")] })))
  )

  it.effect("EV-2 runId and correlationId given by the caller stamp every event", () =>
    Effect.gen(function* () {
      const events = yield* collect({ ...baseOptions, runId: "my-run" as never, correlationId: "http-7" })
      assertContract(events)
      assert.isTrue(events.every((e) => e.runId === "my-run" && e.correlationId === "http-7"))
    }).pipe(Effect.provide(runnerLayer({ script: [Fake.answer("ok")] })))
  )

  it.effect("resuming a session sends the stored history", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const first = yield* runner.run({ ...baseOptions, prompt: "first" })
      yield* runner.run({ ...baseOptions, prompt: "second", sessionId: first.sessionId })
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.deepStrictEqual(
        requests[1]!.messages.map((m) => m.role),
        ["user", "assistant", "user"]
      )
    }).pipe(Effect.provide(runnerLayer({ script: [Fake.answer("one"), Fake.answer("two")] })))
  )
})
