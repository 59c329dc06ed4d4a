// Decisions a plugin reports (EV-6): events of the run calling it, checked, stored unless
// `decisions.telemetry` is false, never holding more than their Schema's metadata.
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { baseOptions } from "./helpers/harness.js"
import { hostLayer } from "./helpers/plugins.js"

const completed = {
  decisionId: "d-1",
  pack: "triage",
  provider: "rules",
  latencyMs: 12,
  decisionCount: 3,
  rejectedCount: 1,
  confidenceMin: 0.7
}
const fallback = { decisionId: "d-2", provider: "rules", latencyMs: 5, reason: "the provider timed out" }

/** The plugin; `refusals` gets what it was told outside a run and by a report its Schema refuses. */
const decider = (refusals: Array<string>) =>
  definePlugin({
    id: "decider",
    version: "1.0.0",
    setup: Effect.gen(function* () {
      const api = yield* PluginApi
      refusals.push((yield* Effect.flip(api.decisions.completed(completed))).message)
      yield* api.tools.register(
        defineTool({
          name: "decide",
          description: "Makes a decision",
          effect: "read",
          input: Schema.Struct({}),
          run: () =>
            Effect.gen(function* () {
              // The state sent to the decision provider is no part of the event.
              yield* api.decisions.completed({ ...completed, state: { customer: "secret" } } as typeof completed)
              yield* api.decisions.fallback(fallback)
              refusals.push((yield* Effect.flip(api.decisions.fallback({ ...fallback, latencyMs: -1 }))).message)
              return textResult("decided")
            })
        })
      )
    })
  })

const script = [Fake.callTools({ id: "c1", name: "decide", args: {} }), Fake.answer("done")]

const decide = Effect.gen(function* () {
  const seen: Array<KnownRunEvent> = []
  const runner = yield* Runner
  const outcome = yield* runner.run({ ...baseOptions, onEvent: (event) => Effect.sync(() => seen.push(event)) })
  assert.strictEqual(outcome.status, "completed")
  const stored = yield* Effect.flatMap(SessionStore, (store) => store.events(outcome.sessionId))
  const decisions = (events: ReadonlyArray<KnownRunEvent>) =>
    events.filter((event) => event.type === "decision_completed" || event.type === "decision_fallback")
  return { seen: decisions(seen), stored: decisions(stored) }
})

describe("PluginApi.decisions (EV-6)", () => {
  it.scoped("EV-6 a reported decision is an event of the run, stored with its metadata only", () => {
    const refusals: Array<string> = []
    return Effect.gen(function* () {
      const { seen, stored } = yield* decide
      assert.deepStrictEqual(
        seen.map((event) => [event.type, event.data]),
        [
          ["decision_completed", completed],
          ["decision_fallback", fallback]
        ]
      )
      assert.deepStrictEqual(
        stored.map((event) => [event.type, event.data, event.eventId !== undefined]),
        [
          ["decision_completed", completed, true],
          ["decision_fallback", fallback, true]
        ]
      )
      assert.strictEqual(refusals.length, 2)
      assert.strictEqual(
        refusals[0],
        "decision_completed: reported outside a run; report a decision from a tool while a run calls it"
      )
      assert.match(refusals[1]!, /^decision_fallback: .*latencyMs/s)
    }).pipe(Effect.provide(hostLayer(script, { plugins: [decider(refusals)] })))
  })

  it.scoped("EV-6 with decisions.telemetry false the run's observers see decisions and the store keeps none", () =>
    Effect.gen(function* () {
      const { seen, stored } = yield* decide
      assert.deepStrictEqual(
        seen.map((event) => [event.type, event.eventId]),
        [
          ["decision_completed", undefined],
          ["decision_fallback", undefined]
        ]
      )
      assert.deepStrictEqual(stored, [])
    }).pipe(Effect.provide(hostLayer(script, { plugins: [decider([])], decisionTelemetry: false })))
  )
})
