// A plugin's life in the host: loaded as a Layer, refused as a second of its id, closed with its scope

import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as Providers from "@alisio/runtime/Providers"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import weather from "./fixtures/plugins/weather.js"
import { baseOptions, runnerLayer } from "./helpers/harness.js"
import { echo, hostLayer, registering, toolNames } from "./helpers/plugins.js"

describe("PluginHost lifecycle", () => {
  // The composition docs/plugins.md shows to plugin authors: the plugin's Layer over the host, the
  // runtime and the FakeProvider, and a real conversation.
  it.scoped("PL-1 a plugin as a Layer: a real run calls its tool through the FakeProvider", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const outcome = yield* runner.run({ ...baseOptions, prompt: "weather in Lisbon?" })
      assert.strictEqual(outcome.status, "completed")
      assert.strictEqual(outcome.text, "Lisbon is sunny.")
      const store = yield* SessionStore
      const calls = yield* store.toolCalls(outcome.sessionId)
      assert.deepStrictEqual(
        calls.map((call) => [call.name, call.status, call.result]),
        [["forecast", "completed", "Lisbon: sunny, 24 °C"]]
      )
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.include(
        requests[0]!.tools.map((tool) => tool.name),
        "forecast"
      )
    }).pipe(
      Effect.provide(
        PluginHost.plugin(weather).pipe(
          Layer.provideMerge(PluginHost.layer()),
          Layer.provideMerge(
            runnerLayer({
              tools: [],
              script: [
                Fake.callTools({ id: "call_1", name: "forecast", args: { city: "Lisbon" } }),
                Fake.answer("Lisbon is sunny.")
              ]
            })
          )
        )
      )
    )
  )

  it.scoped("PL-1 a second plugin with a loaded plugin's id is refused with a diagnostic", () =>
    Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      const reports = yield* host.plugins
      assert.deepStrictEqual(
        reports.map((report) => [report.id, report.loaded, report.tools, report.diagnostics]),
        [
          ["twin", true, ["one"], []],
          [
            "twin",
            false,
            [],
            ["is refused: a plugin with this id is already loaded (from builtin); this one is from a value"]
          ]
        ]
      )
      assert.deepStrictEqual(yield* toolNames, ["one"])
    }).pipe(
      Effect.provide(
        hostLayer([], {
          plugins: [registering("twin", echo("one")), { definition: registering("twin", echo("two")), external: true }]
        })
      )
    )
  )

  it.scoped("PL-1 closing the host closes every plugin's scope: registrations, providers and fibers", () =>
    Effect.gen(function* () {
      const interrupted = yield* Deferred.make<void>()
      const finalized = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      const tools = yield* Tools
      const providers = yield* Providers.Providers
      const context = yield* Layer.buildWithScope(
        PluginHost.plugin(
          definePlugin({
            id: "busy",
            version: "1.0.0",
            setup: Effect.gen(function* () {
              const api = yield* PluginApi
              yield* api.tools.register(echo("busy_tool"))
              yield* api.providers.register("busy-model", (yield* Fake.make([])).model)
              yield* Effect.forkScoped(Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined)))
              yield* Effect.addFinalizer(() => Deferred.succeed(finalized, undefined))
            })
          })
        ).pipe(Layer.provideMerge(PluginHost.layer())),
        scope
      )
      const host = Context.get(context, PluginHost.PluginHost)
      assert.deepStrictEqual(
        (yield* host.plugins).map((report) => [report.id, report.loaded, report.providers]),
        [["busy", true, ["busy-model"]]]
      )
      assert.deepStrictEqual(yield* toolNames, ["busy_tool"])
      assert.include(
        (yield* providers.list).map((entry) => entry.id),
        "busy-model"
      )
      yield* Scope.close(scope, Exit.void)
      yield* Deferred.await(interrupted)
      yield* Deferred.await(finalized)
      assert.deepStrictEqual((yield* tools.all).length, 0)
      assert.notInclude(
        (yield* providers.list).map((entry) => entry.id),
        "busy-model"
      )
    }).pipe(Effect.provide(hostLayer([]).pipe(Layer.provideMerge(Providers.layerMemory))))
  )

  it.scoped(
    "PL-1 closing a plugin is bounded in time: a finalizer that never ends is left behind with a diagnostic",
    () =>
      Effect.gen(function* () {
        const host = yield* PluginHost.PluginHost
        yield* host.load({
          definition: definePlugin({
            id: "sticky",
            version: "1.0.0",
            setup: Effect.addFinalizer(() => Effect.never)
          })
        })
        const closing = yield* Effect.fork(host.unload("sticky"))
        yield* TestClock.adjust("5 seconds")
        yield* Fiber.join(closing)
        assert.deepStrictEqual(
          (yield* host.diagnostics).map((diagnostic) => diagnostic.message),
          ["did not finish closing within 5000 ms"]
        )
      }).pipe(Effect.provide(hostLayer([])))
  )
})
