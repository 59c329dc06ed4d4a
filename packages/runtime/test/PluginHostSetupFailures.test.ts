// A plugin's setup that fails: a diagnostic, and everything it registered rolled back

import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { contextInput, echo, hostLayer, registering, toolNames } from "./helpers/plugins.js"

describe("PluginHost setup failures", () => {
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
})
