// Plugins' tools: their public names, the names refused, and their results guarded on the way to the model

import { definePlugin, PluginApi, PluginError } from "@alisio/domain/Plugin"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import * as ToolOrigins from "@alisio/runtime/ToolOrigins"
import { Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import weather from "./fixtures/plugins/weather.js"
import { baseOptions, ofType } from "./helpers/harness.js"
import { echo, hostLayer, registering, toolNames } from "./helpers/plugins.js"

describe("PluginHost tools", () => {
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
              Effect.flip(api.tools.register(echo("x".repeat(65)))),
              Effect.flip(api.tools.register(echo("v".repeat(500))))
            ])
            yield* Deferred.succeed(refused, errors)
          })
        })
      })
      assert.isTrue(second.loaded)
      const outsider = yield* host.load({ definition: registering("third", echo("y".repeat(52))), external: true })
      const [taken, invalid, long, vast] = yield* Deferred.await(refused)
      for (const error of [taken, invalid, long]) assert.isTrue(Schema.is(PluginError)(error))
      assert.strictEqual(
        (taken as PluginError).message,
        'The tool name "lookup" is already taken by builtin plugin first.'
      )
      assert.include((invalid as PluginError).message, "may only hold letters, digits")
      assert.include((long as PluginError).message, "longer than the 64 characters")
      // A name of hundreds of characters (an MCP server's, say) is quoted in part, once.
      assert.strictEqual(
        (vast as PluginError).message,
        `The tool name "${"v".repeat(80)}…" (500 characters) (from "${"v".repeat(80)}…" (500 characters)) is longer than the 64 characters models accept; shorten it.`
      )
      assert.isFalse(outsider.loaded)
      assert.include(outsider.diagnostics[0], "longer than the 64 characters")
      assert.deepStrictEqual(yield* toolNames, ["lookup"])
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

  it.scoped("PL-6 a tool throwing an object whose message getter throws still names the plugin, once", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const events: Array<KnownRunEvent> = []
      const outcome = yield* runner.run({ ...baseOptions, onEvent: (event) => Effect.sync(() => events.push(event)) })
      assert.strictEqual(outcome.status, "completed")
      const failed = ofType(events, "plugin_failed").map((event) => event.data)
      assert.deepStrictEqual(
        failed.map((data) => [data.pluginId, data.tool]),
        [["hostile", "explode"]]
      )
      assert.match(failed[0]!.message, /^The tool explode of the plugin hostile crashed: /)
      const completed = ofType(events, "tool_call_completed").map((event) => [event.data.status, event.data.result])
      assert.deepStrictEqual(completed, [["error", failed[0]!.message]])
      const host = yield* PluginHost.PluginHost
      assert.deepStrictEqual(
        (yield* host.diagnostics).map((diagnostic) => diagnostic.pluginId),
        ["hostile"]
      )
    }).pipe(
      Effect.provide(
        hostLayer([Fake.callTools({ id: "call_1", name: "explode", args: {} }), Fake.answer("it broke")], {
          plugins: [
            registering(
              "hostile",
              defineTool({
                name: "explode",
                description: "throws an unreadable object",
                effect: "read",
                input: Schema.Struct({}),
                run: () => {
                  throw Object.defineProperty(Object.create(null), "message", {
                    get: () => {
                      throw new Error("getter boom")
                    }
                  })
                }
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
        assert.strictEqual(flood!.result, `${"a".repeat(4_000)}…`, "the event brings the head")
        assert.strictEqual(flood!.resultChars, stored.length, "and says how long the whole is")
        assert.isUndefined(junk!.resultChars, "a result brought whole says nothing more")
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
})
