import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { definePlugin, PluginApi, PluginError } from "@alisio/domain/Plugin"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as Providers from "@alisio/runtime/Providers"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import * as ToolOrigins from "@alisio/runtime/ToolOrigins"
import { Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import weather from "./fixtures/plugins/weather.js"
import { baseOptions, ofType, runnerLayer } from "./helpers/harness.js"
import { contextInput, echo, eventually, hostLayer, registering, toolNames } from "./helpers/plugins.js"

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

describe("PluginHost", () => {
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

  it.scoped("PL-2 PL-3 builtin names stay, external ones get p_<hash>_; internal is degraded for externals", () =>
    Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      yield* host.load({ definition: registering("core-ish", echo("remember", "internal")) })
      yield* host.load({ definition: registering("outsider", echo("remember2", "internal")), external: true })
      const tools = yield* Tools
      const entries = yield* tools.entries
      const byName = new Map(entries.map((entry) => [entry.tool.name, entry]))
      const prefixed = `${ToolOrigins.externalPrefix("outsider")}remember2`
      assert.match(prefixed, /^p_[0-9a-f]{10}_remember2$/)
      assert.strictEqual(byName.get("remember")?.tool.effect, "internal")
      assert.deepStrictEqual(byName.get("remember")?.origin, { _tag: "BuiltinPlugin", pluginId: "core-ish" })
      assert.strictEqual(byName.get(prefixed)?.tool.effect, "external")
      assert.deepStrictEqual(byName.get(prefixed)?.origin, { _tag: "ExternalPlugin", pluginId: "outsider" })
      const reports = yield* host.plugins
      assert.deepStrictEqual(
        reports.map((report) => [report.id, report.source, report.tools]),
        [
          ["core-ish", "builtin", ["remember"]],
          ["outsider", "external", [prefixed]]
        ]
      )
    }).pipe(Effect.provide(hostLayer([])))
  )

  it("PL-3 the external prefix is the first 10 hex of sha256(id); MCP names and hints", () => {
    // `printf weather | sha256sum` = e5e72beb4e3c…
    assert.strictEqual(ToolOrigins.externalPrefix("weather"), "p_e5e72beb4e_")
    assert.strictEqual(ToolOrigins.publicName({ _tag: "McpServer", server: "github" }, "search"), "mcp__github__search")
    assert.strictEqual(ToolOrigins.effectFromMcpHints({ readOnlyHint: true }), "read")
    assert.strictEqual(ToolOrigins.effectFromMcpHints({}), "external")
    assert.strictEqual(ToolOrigins.effectFor({ _tag: "McpServer", server: "x" }, "internal"), "external")
  })

  it.scoped("PL-3 a taken, invalid or (once prefixed) too long name is refused with a PluginError", () =>
    Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      yield* host.load({ definition: registering("first", echo("lookup")) })
      const refused = yield* Deferred.make<ReadonlyArray<unknown>>()
      const second = yield* host.load({
        definition: definePlugin({
          id: "second",
          version: "1.0.0",
          setup: Effect.gen(function* () {
            const api = yield* PluginApi
            const errors = yield* Effect.all([
              Effect.flip(api.tools.register(echo("lookup"))),
              Effect.flip(api.tools.register(echo("bad name!"))),
              Effect.flip(api.tools.register(echo("x".repeat(65))))
            ])
            yield* Deferred.succeed(refused, errors)
          })
        })
      })
      assert.isTrue(second.loaded)
      const outsider = yield* host.load({ definition: registering("third", echo("y".repeat(52))), external: true })
      const [taken, invalid, long] = yield* Deferred.await(refused)
      for (const error of [taken, invalid, long]) assert.isTrue(Schema.is(PluginError)(error))
      assert.strictEqual(
        (taken as PluginError).message,
        'The tool name "lookup" is already taken by builtin plugin first.'
      )
      assert.include((invalid as PluginError).message, "may only hold letters, digits")
      assert.include((long as PluginError).message, "longer than the 64 characters")
      assert.isFalse(outsider.loaded)
      assert.include(outsider.diagnostics[0], "longer than the 64 characters")
      assert.deepStrictEqual(yield* toolNames, ["lookup"])
    }).pipe(Effect.provide(hostLayer([])))
  )

  it.scoped("PL-6 a setup that dies is a diagnostic, and everything it registered is rolled back", () =>
    Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      const report = yield* host.load({
        definition: definePlugin({
          id: "fragile",
          version: "1.0.0",
          setup: Effect.gen(function* () {
            const api = yield* PluginApi
            yield* api.tools.register(echo("fragile_tool"))
            yield* api.commands.register({ name: "fragile", description: "d", execute: () => Effect.succeed("") })
            yield* api.context.provide(() => Effect.succeed("fragile context"))
            return yield* Effect.die(new Error("boom"))
          })
        })
      })
      assert.isFalse(report.loaded)
      assert.deepStrictEqual(report.tools, [])
      assert.deepStrictEqual(report.commands, [])
      assert.deepStrictEqual(report.diagnostics, ["setup crashed: boom; everything it registered was removed"])
      assert.deepStrictEqual(yield* toolNames, [])
      assert.deepStrictEqual(yield* host.commands.list, [])
      assert.strictEqual(yield* host.contextFor(contextInput), "")
      assert.deepStrictEqual(yield* host.diagnostics, [
        { pluginId: "fragile", stage: "setup", message: "setup crashed: boom; everything it registered was removed" }
      ])
    }).pipe(Effect.provide(hostLayer([])))
  )

  it.scoped("PL-6 a setup that never ends is stopped after timeouts.setupMs and rolled back", () =>
    Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      const started = yield* Deferred.make<void>()
      const loading = yield* Effect.fork(
        host.load({
          definition: definePlugin({
            id: "stuck",
            version: "1.0.0",
            setup: Effect.gen(function* () {
              const api = yield* PluginApi
              yield* api.tools.register(echo("stuck_tool"))
              yield* Deferred.succeed(started, undefined)
              yield* Effect.never
            })
          })
        })
      )
      yield* Deferred.await(started)
      yield* TestClock.adjust("10 seconds")
      const report = yield* Fiber.join(loading)
      assert.isFalse(report.loaded)
      assert.deepStrictEqual(report.diagnostics, [
        "setup failed: took longer than 10000 ms; everything it registered was removed"
      ])
      assert.deepStrictEqual(yield* toolNames, [])
    }).pipe(Effect.provide(hostLayer([])))
  )

  it.scoped("PL-6 a plugin whose folders cannot be made is a diagnostic naming the folder, never a crash", () => {
    // A file where the cache home should be: mkdir fails for every user, root included.
    const root = mkdtempSync(join(tmpdir(), "alisio-plugin-homes-"))
    writeFileSync(join(root, "cache"), "")
    const homes = { state: join(root, "state"), config: join(root, "config"), cache: join(root, "cache") }
    return Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      const [blocked, other] = yield* host.plugins
      assert.deepStrictEqual([blocked!.id, blocked!.loaded, blocked!.tools], ["blocked", false, []])
      assert.match(blocked!.diagnostics[0]!, /^cannot make its folder .*\/cache\/plugins\/blocked \(ENOTDIR/)
      assert.deepStrictEqual(yield* toolNames, [])
      assert.deepStrictEqual([other, (yield* host.diagnostics)[0]?.stage], [undefined, "setup"])
    }).pipe(Effect.provide(hostLayer([], { homes, plugins: [registering("blocked", echo("blocked_tool"))] })))
  })

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

  it.scoped("PL-6 a tool that dies: an error result the model reads, a diagnostic and a plugin_failed event", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const events: Array<KnownRunEvent> = []
      const outcome = yield* runner.run({ ...baseOptions, onEvent: (event) => Effect.sync(() => events.push(event)) })
      assert.strictEqual(outcome.status, "completed")
      const message = "The tool explode of the plugin volatile crashed: kaput"
      assert.deepStrictEqual(
        ofType(events, "plugin_failed").map((event) => event.data),
        [{ pluginId: "volatile", stage: "tool", message, tool: "explode" }]
      )
      const [completed] = ofType(events, "tool_call_completed")
      assert.deepStrictEqual([completed!.data.status, completed!.data.result], ["error", message])
      const host = yield* PluginHost.PluginHost
      assert.deepStrictEqual(yield* host.diagnostics, [{ pluginId: "volatile", stage: "tool", message }])
    }).pipe(
      Effect.provide(
        hostLayer([Fake.callTools({ id: "call_1", name: "explode", args: {} }), Fake.answer("it broke")], {
          plugins: [
            registering(
              "volatile",
              defineTool({
                name: "explode",
                description: "dies",
                effect: "read",
                input: Schema.Struct({}),
                run: () => Effect.die(new Error("kaput"))
              })
            )
          ]
        })
      )
    )
  )

  it.scoped(
    "PL-6 a tool's result that is not a ToolResult is a crash the model reads; a huge one is cut like bash output",
    () =>
      Effect.gen(function* () {
        const runner = yield* Runner
        const events: Array<KnownRunEvent> = []
        const outcome = yield* runner.run({ ...baseOptions, onEvent: (event) => Effect.sync(() => events.push(event)) })
        assert.strictEqual(outcome.status, "completed")
        const [junk, flood] = ofType(events, "tool_call_completed").map((event) => event.data)
        assert.strictEqual(junk!.status, "error")
        assert.strictEqual(
          junk!.result,
          'The tool junk of the plugin sloppy crashed: its result is not a ToolResult ({ content: [{ _tag: "text", text }] }; textResult(text) builds one): got {"content":42}'
        )
        const calls = yield* Effect.flatMap(SessionStore, (store) => store.toolCalls(outcome.sessionId))
        const stored = calls.find((call) => call.id === "call_2")!.result ?? ""
        assert.strictEqual(flood!.status, "completed")
        assert.isBelow(stored.length, 30_100, "what the model reads is bounded")
        assert.include(stored, "[… 970000 characters of output cut …]")
        assert.isTrue(stored.startsWith("a".repeat(15_000)) && stored.endsWith("z".repeat(15_000)))
      }).pipe(
        Effect.provide(
          hostLayer(
            [
              Fake.callTools({ id: "call_1", name: "junk", args: {} }, { id: "call_2", name: "flood", args: {} }),
              Fake.answer("seen")
            ],
            {
              plugins: [
                registering(
                  "sloppy",
                  defineTool({
                    name: "junk",
                    description: "returns no ToolResult",
                    effect: "read",
                    input: Schema.Struct({}),
                    run: () => Effect.succeed({ content: 42 } as never)
                  }),
                  defineTool({
                    name: "flood",
                    description: "returns a million characters",
                    effect: "read",
                    input: Schema.Struct({}),
                    run: () => Effect.succeed(textResult(`${"a".repeat(500_000)}${"z".repeat(500_000)}`))
                  })
                )
              ]
            }
          )
        )
      )
  )

  it.scoped(
    "PL-6 a tool failing with the plugin's own Schema.TaggedError reaches the model as its tag and message",
    () =>
      Effect.gen(function* () {
        const runner = yield* Runner
        const outcome = yield* runner.run({ ...baseOptions, prompt: "weather in Atlantis?" })
        const calls = yield* Effect.flatMap(SessionStore, (store) => store.toolCalls(outcome.sessionId))
        assert.deepStrictEqual(
          calls.map((call) => [call.status, call.result]),
          [["error", "CityNotFound: No forecast for Atlantis"]]
        )
        assert.deepStrictEqual(yield* Effect.flatMap(PluginHost.PluginHost, (host) => host.diagnostics), [])
      }).pipe(
        Effect.provide(
          hostLayer(
            [Fake.callTools({ id: "call_1", name: "forecast", args: { city: "Atlantis" } }), Fake.answer("no")],
            {
              plugins: [weather]
            }
          )
        )
      )
  )

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
