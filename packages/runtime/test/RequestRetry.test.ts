// The provider's own retries (429, 5xx, a lost connection before any part) reach the run's
// events as `request_retry`, with their reason, status and wait (EV-1, LIM-4, PRV-2).
import { ProviderError } from "@alisio/domain/Errors"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Fake from "@alisio/providers/FakeProvider"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import {
  assertContract,
  assertRetriesBeforeContent,
  baseOptions,
  collect,
  ofType,
  runnerLayer,
  typesOf
} from "./helpers/harness.js"

describe("request_retry from the provider", () => {
  it.effect(
    "EV-1 a 429 retried by the provider is one request_retry with its status and wait; no turn, nothing stored",
    () =>
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(collect(baseOptions))
        yield* TestClock.adjust(1_500)
        const events = yield* Fiber.join(fiber)
        assertContract(events)
        assert.deepStrictEqual(
          ofType(events, "request_retry").map((event) => event.data),
          [{ attempt: 1, of: 2, reason: "rate_limited", status: 429, afterMs: 1_500 }]
        )
        assert.deepStrictEqual(typesOf(events).slice(0, 4), ["run_started", "message", "request_retry", "text_delta"])
        assert.strictEqual(ofType(events, "run_completed")[0]?.data.turns, 1)
        const store = yield* SessionStore.SessionStore
        assert.strictEqual((yield* store.messages(events[0]!.sessionId)).length, 2)
      }).pipe(
        Effect.provide(runnerLayer({ script: [[...Fake.retrying(1_500, { status: 429 }), ...Fake.answer("ok")]] }))
      )
  )

  it.effect("LIM-4 the provider's wait is not silence: the first-token clock starts again at the resend", () =>
    Effect.gen(function* () {
      // A 30 s Retry-After, then the answer 9 s after the resend: 39 s after the first send,
      // beyond the 10 s first-token limit, yet never silent for 10 s.
      const fiber = yield* Effect.fork(collect({ ...baseOptions, limits: { firstTokenTimeoutMs: 10_000 } }))
      yield* TestClock.adjust(30_000)
      yield* TestClock.adjust(9_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.deepStrictEqual(
        ofType(events, "request_retry").map((event) => event.data.reason),
        ["server_error"]
      )
      assert.strictEqual(events.at(-1)?.type, "run_completed")
      const fake = yield* Fake.FakeProvider
      assert.strictEqual((yield* fake.requests).length, 1, "the runner never resent the request")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            [...Fake.retrying(30_000, { reason: "server_error", status: 503 }), Fake.delay(9_000), ...Fake.answer("ok")]
          ]
        })
      )
    )
  )

  it.effect("LIM-4 silence after the provider's resend still times out, and the runner resends as before", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect({ ...baseOptions, limits: { firstTokenTimeoutMs: 1_000 } }))
      yield* TestClock.adjust(500)
      yield* TestClock.adjust(1_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.deepStrictEqual(
        ofType(events, "request_retry").map((event) => [event.data.reason, event.data.afterMs]),
        [
          ["network", 500],
          ["first_token_timeout", 1_000]
        ]
      )
      assert.strictEqual(events.at(-1)?.type, "run_completed")
    }).pipe(
      Effect.provide(
        runnerLayer({ script: [[...Fake.retrying(500, { reason: "network" }), Fake.silence], Fake.answer("ok")] })
      )
    )
  )

  it.effect("LIM-4 a provider that retries after part of its response fails the run instead of repeating it", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      const failed = ofType(events, "run_failed")[0]
      assert.strictEqual(failed?.data.code, "provider_error")
      assert.strictEqual(failed?.data.providerCode, "invalid_response")
      assert.strictEqual(ofType(events, "request_retry").length, 0)
    }).pipe(Effect.provide(runnerLayer({ script: [[...Fake.text("Hel"), ...Fake.retrying(0), ...Fake.answer("lo")]] })))
  )

  it.effect("LIM-4 the provider's failure after its retries ends the run as provider_error", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect(baseOptions))
      yield* TestClock.adjust(100)
      yield* TestClock.adjust(200)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.deepStrictEqual(
        ofType(events, "request_retry").map((event) => event.data.attempt),
        [1, 2]
      )
      assert.strictEqual(ofType(events, "run_failed")[0]?.data.providerCode, "rate_limited")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            [
              ...Fake.retrying(100, { status: 429 }),
              ...Fake.retrying(200, { status: 429, attempt: 2 }),
              Fake.fail(new ProviderError({ code: "rate_limited", message: "slow down", status: 429 }))
            ]
          ]
        })
      )
    )
  )

  it("EV-5 the contract refuses a retry after content of the same request", () => {
    const event = (type: string, seq: number) => ({ type, seq }) as unknown as KnownRunEvent
    assert.throws(() =>
      assertRetriesBeforeContent([event("run_started", 1), event("text_delta", 2), event("request_retry", 3)])
    )
    assertRetriesBeforeContent([
      event("run_started", 1),
      event("text_delta", 2),
      event("turn_completed", 3),
      event("request_retry", 4)
    ])
  })
})
