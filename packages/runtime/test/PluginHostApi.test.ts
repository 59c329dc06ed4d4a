import * as fs from "node:fs"
import * as path from "node:path"
import { definePlugin, PluginApi, type PluginApiService, PluginError } from "@alisio/domain/Plugin"
import type { SqlDatabase } from "@alisio/domain/SqlDatabase"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { PluginUi } from "@alisio/runtime/PluginUi"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { baseOptions } from "./helpers/harness.js"
import { contextInput, hostLayer } from "./helpers/plugins.js"

/** A plugin whose setup hands its API to the test. */
const capturing = (id: string, api: Deferred.Deferred<PluginApiService>) =>
  definePlugin({ id, version: "1.0.0", setup: Effect.flatMap(PluginApi, (given) => Deferred.succeed(api, given)) })

/** The API of a plugin loaded into the host of the context (builtin unless `external`). */
const apiOf = (id: string, options: { readonly external?: boolean } = {}) =>
  Effect.gen(function* () {
    const api = yield* Deferred.make<PluginApiService>()
    const host = yield* PluginHost.PluginHost
    yield* host.load({ definition: capturing(id, api), ...options })
    return yield* Deferred.await(api)
  })

describe("PluginApi", () => {
  it.scoped("CTX-2 contextFor joins every provider's text, naming its plugin; a slow or failing one is left out", () =>
    Effect.gen(function* () {
      const quick = yield* apiOf("quick")
      const slow = yield* apiOf("slow")
      const broken = yield* apiOf("broken")
      yield* quick.context.provide((input) => Effect.succeed(`The prompt was: ${input.prompt}`))
      yield* quick.context.provide(() => Effect.succeed("  "))
      yield* slow.context.provide(() => Effect.as(Effect.sleep("1 hour"), "too late"))
      yield* broken.context.provide(() => Effect.die(new Error("no context today")))
      const host = yield* PluginHost.PluginHost
      const context = yield* Effect.fork(host.contextFor(contextInput))
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* Fiber.join(context), "Context from the plugin quick:\nThe prompt was: hi")
      assert.deepStrictEqual(
        (yield* host.diagnostics)
          .map((diagnostic) => [diagnostic.pluginId, diagnostic.stage, diagnostic.message])
          .sort(),
        [
          ["broken", "context", "its context provider failed: no context today"],
          ["slow", "context", "its context provider failed: took longer than 2000 ms"]
        ]
      )
    }).pipe(Effect.provide(hostLayer([])))
  )

  it.scoped(
    "PL-6 a context provider giving something other than text is warned about once, naming its plugin and what it gave; the others go on",
    () =>
      Effect.gen(function* () {
        const givers: ReadonlyArray<readonly [string, () => unknown]> = [
          ["number", () => Effect.succeed(42)],
          ["object", () => ({ text: "not an Effect" })],
          ["bare-undefined", () => undefined],
          ["promise-number", () => Promise.resolve(7)],
          ["promise-text", () => Promise.resolve("from a Promise")],
          ["nothing", () => Effect.succeed(undefined)],
          ["text", () => Effect.succeed("plain text")]
        ]
        for (const [id, give] of givers) {
          const api = yield* apiOf(id)
          yield* api.context.provide(give as never)
        }
        const host = yield* PluginHost.PluginHost
        for (const _ of [1, 2]) {
          assert.strictEqual(
            yield* host.contextFor(contextInput),
            "Context from the plugin promise-text:\nfrom a Promise\n\nContext from the plugin text:\nplain text"
          )
        }
        assert.deepStrictEqual(
          (yield* host.diagnostics).map((diagnostic) => [diagnostic.pluginId, diagnostic.stage, diagnostic.message]),
          [
            [
              "number",
              "context",
              "its context provider returned an Effect of a number, not a string; its context is left out"
            ],
            ["object", "context", "its context provider returned an object, not a string; its context is left out"],
            [
              "bare-undefined",
              "context",
              "its context provider returned undefined, not a string; its context is left out"
            ],
            [
              "promise-number",
              "context",
              "its context provider returned a Promise of a number, not a string; its context is left out"
            ]
          ]
        )
      }).pipe(Effect.provide(hostLayer([])))
  )

  it.scoped("PL-2 PL-3 commands: builtin keep their name, external ones are <id>:<name>; a taken name is refused", () =>
    Effect.gen(function* () {
      const memory = yield* apiOf("memory")
      const weather = yield* apiOf("weather", { external: true })
      yield* memory.commands.register({
        name: "memory",
        description: "Searches memories",
        execute: (args) => Effect.succeed(`searched ${args}`)
      })
      yield* weather.commands.register({
        name: "forecast",
        description: "Shows a forecast",
        surfaces: ["tui"],
        execute: () => Effect.die("broken command")
      })
      const taken = yield* Effect.flip(
        memory.commands.register({ name: "memory", description: "again", execute: () => Effect.succeed("") })
      )
      assert.isTrue(Schema.is(PluginError)(taken))
      assert.strictEqual(taken.message, 'The command name "memory" is already taken by memory.')
      const host = yield* PluginHost.PluginHost
      assert.deepStrictEqual(yield* host.commands.list, [
        {
          name: "memory",
          description: "Searches memories",
          surfaces: ["tui", "web", "api"],
          execution: "core",
          source: "plugin",
          pluginId: "memory"
        },
        {
          name: "weather:forecast",
          description: "Shows a forecast",
          surfaces: ["tui"],
          execution: "core",
          source: "plugin",
          pluginId: "weather"
        }
      ])
      assert.strictEqual(yield* host.commands.run("memory", "lisbon", {}), "searched lisbon")
      const failed = yield* Effect.flip(host.commands.run("weather:forecast", "", {}))
      assert.strictEqual(failed.message, "The command weather:forecast failed: broken command")
      assert.deepStrictEqual(
        (yield* host.diagnostics).map((diagnostic) => diagnostic.stage),
        ["command"]
      )
      yield* host.unload("memory")
      assert.deepStrictEqual(
        (yield* host.commands.list).map((command) => command.name),
        ["weather:forecast"]
      )
    }).pipe(Effect.provide(hostLayer([])))
  )

  it.scoped("PL-1 state is per plugin and kept in the session database; paths are private folders", () =>
    Effect.gen(function* () {
      const first = yield* apiOf("first")
      const second = yield* apiOf("second")
      yield* first.state.set("counter", { runs: 3 })
      assert.deepStrictEqual(yield* first.state.get("counter"), Option.some({ runs: 3 }))
      assert.deepStrictEqual(yield* second.state.get("counter"), Option.none())
      const store = yield* SessionStore
      assert.deepStrictEqual(yield* store.pluginState.get("first", "counter"), Option.some({ runs: 3 }))
      for (const dir of [first.paths.state, first.paths.config, first.paths.cache]) {
        assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700)
        assert.match(dir, /first$/)
      }
      assert.notStrictEqual(first.paths.state, second.paths.state)
    }).pipe(Effect.provide(hostLayer([])))
  )

  it.scoped("PL-1 model.complete collects the text of one request to the session's model", () =>
    Effect.gen(function* () {
      const api = yield* apiOf("summarizer")
      const text = yield* api.model.complete({ prompt: "Summarize: a, b", system: "Be brief." })
      assert.strictEqual(text, "a and b")
      const [request] = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.strictEqual(request!.system, "Be brief.")
      assert.deepStrictEqual(request!.tools, [])
      const slow = yield* Effect.fork(Effect.flip(api.model.complete({ prompt: "again" })))
      yield* TestClock.adjust("60 seconds")
      assert.include((yield* Fiber.join(slow)).message, "took longer than 60000 ms")
    }).pipe(Effect.provide(hostLayer([Fake.answer("a and b"), [Fake.silence]])))
  )

  it.scoped("CH-1 a plugin's tool spawns a child session through api.sessions and reads its outcome", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const outcome = yield* runner.run({ ...baseOptions, prompt: "delegate" })
      assert.strictEqual(outcome.status, "completed")
      const calls = yield* Effect.flatMap(SessionStore, (store) => store.toolCalls(outcome.sessionId))
      assert.deepStrictEqual(
        calls.map((call) => call.result),
        ["child said: done by the child"]
      )
    }).pipe(
      Effect.provide(
        hostLayer(
          (request) =>
            request.messages.some((message) => message.role === "tool")
              ? Fake.answer("all done")
              : request.messages.some(
                    (message) =>
                      message.role === "user" &&
                      message.content.some((part) => part._tag === "text" && part.text === "sub")
                  )
                ? Fake.answer("done by the child")
                : Fake.callTools({ id: "call_1", name: "delegate", args: {} }),
          {
            plugins: [
              definePlugin({
                id: "delegator",
                version: "1.0.0",
                setup: Effect.gen(function* () {
                  const api = yield* PluginApi
                  yield* api.tools.register(
                    defineTool({
                      name: "delegate",
                      description: "Asks a child session",
                      effect: "read",
                      input: Schema.Struct({}),
                      run: () =>
                        Effect.gen(function* () {
                          const child = yield* api.sessions.spawn({ prompt: "sub", title: "child" })
                          const done = yield* api.sessions.await(child)
                          return textResult(`child said: ${done.text}`)
                        })
                    })
                  )
                })
              })
            ]
          }
        )
      )
    )
  )

  it.scoped("PL-1 ui.notify and ui.panel are recorded for the surfaces", () =>
    Effect.gen(function* () {
      const api = yield* apiOf("talker")
      yield* api.ui.notify("\u001b[31mhello\u001b[0m", { level: "warning" })
      yield* api.ui.panel("agents", ["one"])
      yield* api.ui.panel("agents", ["one", "two"])
      const ui = yield* PluginUi
      assert.deepStrictEqual(yield* ui.notifications, [
        { pluginId: "talker", message: "\u001b[31mhello\u001b[0m", level: "warning" }
      ])
      assert.deepStrictEqual(yield* ui.panels, [{ pluginId: "talker", id: "agents", lines: ["one", "two"] }])
    }).pipe(Effect.provide(hostLayer([])))
  )

  it.scoped("PL-4 storage.sqlite opens a file under the plugin's state folder, closed with the plugin's scope", () =>
    Effect.gen(function* () {
      const opened = yield* Deferred.make<{ readonly db: SqlDatabase; readonly api: PluginApiService }>()
      const host = yield* PluginHost.PluginHost
      yield* host.load({
        definition: definePlugin({
          id: "keeper",
          version: "1.0.0",
          setup: Effect.gen(function* () {
            const api = yield* PluginApi
            const db = yield* api.storage.sqlite("notes.db")
            yield* Deferred.succeed(opened, { db, api })
          })
        })
      })
      const { api, db } = yield* Deferred.await(opened)
      yield* db.exec("CREATE VIRTUAL TABLE notes USING fts5(body)")
      const insert = yield* db.prepare("INSERT INTO notes (body) VALUES (?)")
      yield* insert.run("the sky over Lisbon")
      const query = yield* db.prepare("SELECT body FROM notes WHERE notes MATCH ?")
      assert.deepStrictEqual(yield* query.all("lisbon"), [{ body: "the sky over Lisbon" }])
      assert.isTrue(fs.existsSync(path.join(api.paths.state, "notes.db")))
      const escaping = yield* Effect.flip(Effect.scoped(api.storage.sqlite("../escape.db")))
      assert.strictEqual(escaping._tag, "PluginError")
      yield* host.unload("keeper")
      const closed = yield* Effect.flip(query.all("lisbon"))
      assert.strictEqual(closed._tag, "SqlDatabaseError")
    }).pipe(Effect.provide(hostLayer([])))
  )

  it.scoped("EX-1 extensions.provide registers with the host's registry until the plugin unloads", () =>
    Effect.gen(function* () {
      const api = yield* apiOf("mascots")
      yield* api.extensions.provide("mascot", { render: () => Effect.succeed(["(o_o)"]) }, { priority: 5 })
      const host = yield* PluginHost.PluginHost
      const winners = yield* host.extensions.winners
      assert.deepStrictEqual(
        winners.map((winner) => [winner.point, winner.pluginId]),
        [
          ["mascot", "mascots"],
          ["startup-screen", undefined]
        ]
      )
      yield* host.unload("mascots")
      assert.deepStrictEqual(
        (yield* host.extensions.winners).map((winner) => winner.pluginId),
        [undefined, undefined]
      )
    }).pipe(Effect.provide(hostLayer([])))
  )
})
