// Plugins observing run events: never delaying a run, reported when they fail or fall behind

import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { Runner } from "@alisio/runtime/Runner"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { baseOptions } from "./helpers/harness.js"
import { eventually, hostLayer } from "./helpers/plugins.js"

const watcher = (completions: Deferred.Deferred<ReadonlyArray<KnownRunEvent>>) =>
  definePlugin({
    id: "watcher",
    version: "1.0.0",
    setup: Effect.gen(function* () {
      const api = yield* PluginApi
      const seen: Array<KnownRunEvent> = []
      yield* api.events.on("run_completed", (event) =>
        Effect.suspend(() => {
          seen.push(event)
          return seen.length === 2 ? Deferred.succeed(completions, seen) : Effect.void
        })
      )
      yield* api.events.on("run_started", () => Effect.fail("bad observer"))
    })
  })

describe("PluginHost observers", () => {
  it.scoped("EV-1 a slow observer never delays a run; it is told it fell behind", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const outcome = yield* runner.run(baseOptions)
      assert.strictEqual(outcome.status, "completed")
      assert.strictEqual(outcome.text.length, 1_000)
      const host = yield* PluginHost.PluginHost
      assert.deepStrictEqual(yield* eventually(host.diagnostics, (all) => all.length > 0), [
        {
          pluginId: "sluggish",
          stage: "observer",
          message: "its observer of text_delta falls behind the run; events are dropped until it catches up"
        }
      ])
    }).pipe(
      Effect.provide(
        hostLayer([[...Fake.text("x".repeat(1_000), { chunks: 1_000 }), Fake.finish("stop")]], {
          plugins: [
            definePlugin({
              id: "sluggish",
              version: "1.0.0",
              setup: Effect.flatMap(PluginApi, (api) => api.events.on("text_delta", () => Effect.never))
            })
          ]
        })
      )
    )
  )

  it.scopedLive("PL-6 an observer failing on every delta of an answer is reported once for the run", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const outcome = yield* runner.run(baseOptions)
      assert.strictEqual(outcome.status, "completed")
      const host = yield* PluginHost.PluginHost
      yield* eventually(host.diagnostics, (all) => all.length >= 1)
      yield* Effect.sleep("50 millis")
      assert.deepStrictEqual(
        (yield* host.diagnostics).map((diagnostic) => [diagnostic.pluginId, diagnostic.message]),
        [["brittle", "its observer of text_delta failed: delta boom"]]
      )
    }).pipe(
      Effect.provide(
        hostLayer([[...Fake.text("x".repeat(20), { chunks: 20 }), Fake.finish("stop")]], {
          plugins: [
            definePlugin({
              id: "brittle",
              version: "1.0.0",
              setup: Effect.flatMap(PluginApi, (api) =>
                api.events.on("text_delta", () => {
                  throw new Error("delta boom")
                })
              )
            })
          ]
        })
      )
    )
  )

  it.scoped("EV-1 an observer sees stored events of every run; a failing one is reported and keeps observing", () =>
    Effect.gen(function* () {
      const completions = yield* Deferred.make<ReadonlyArray<KnownRunEvent>>()
      yield* Effect.gen(function* () {
        const runner = yield* Runner
        yield* runner.run(baseOptions)
        yield* runner.run(baseOptions)
        const seen = yield* Deferred.await(completions)
        assert.strictEqual(seen.length, 2)
        assert.isDefined(seen[0]!.eventId)
        const host = yield* PluginHost.PluginHost
        const diagnostics = yield* eventually(host.diagnostics, (all) => all.length >= 2)
        assert.deepStrictEqual(
          diagnostics.map((diagnostic) => diagnostic.message),
          ["its observer of run_started failed: bad observer", "its observer of run_started failed: bad observer"]
        )
      }).pipe(Effect.provide(hostLayer([Fake.answer("one"), Fake.answer("two")], { plugins: [watcher(completions)] })))
    })
  )
})
