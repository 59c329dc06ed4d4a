// What a plugin's command hands back, as JavaScript may write it: something other than a string
// or an Effect is a crash reported under the plugin, never the surface's; escape sequences never
// reach the terminal (PL-6).

import type { PluginCommand } from "@alisio/domain/Command"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { hostLayer } from "./helpers/plugins.js"

const command = (name: string, execute: () => unknown) =>
  ({ name, description: name, execute }) as unknown as PluginCommand

describe("PluginHost command output", () => {
  it.scoped("PL-6 a command returning no string or no Effect fails naming it; its text is stripped of escapes", () =>
    Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      const loaded = yield* host.load({
        definition: definePlugin({
          id: "odd",
          version: "0.1.0",
          setup: Effect.gen(function* () {
            const api = yield* PluginApi
            yield* api.commands.register(command("object", () => Effect.succeed({ weird: 1 })))
            yield* api.commands.register(command("nothing", () => undefined))
            yield* api.commands.register(
              command("escapes", () => Effect.succeed("\x1b]0;pwned\x07\x1b[2Jtitle\tand\nlines"))
            )
          })
        }),
        external: true
      })
      assert.isTrue(loaded.loaded)
      const object = yield* Effect.flip(host.commands.run("odd:object", "", {}))
      assert.strictEqual(object.message, "The command odd:object failed: it returned an object, not a string")
      const nothing = yield* Effect.flip(host.commands.run("odd:nothing", "", {}))
      assert.strictEqual(
        nothing.message,
        "The command odd:nothing failed: its execute returned undefined, not an Effect"
      )
      assert.strictEqual(yield* host.commands.run("odd:escapes", "", {}), "title and\nlines")
      assert.deepStrictEqual(
        (yield* host.diagnostics).map((diagnostic) => [diagnostic.pluginId, diagnostic.stage]),
        [
          ["odd", "command"],
          ["odd", "command"]
        ]
      )
    }).pipe(Effect.provide(hostLayer([])))
  )
})
