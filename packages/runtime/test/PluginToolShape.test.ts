// Plugins' tools as JavaScript may write them: an effect no approval policy knows, a schema that
// cannot be sent, no handler; and failures with megabytes of text (PL-6, TL-2).

import { ToolError } from "@alisio/domain/Errors"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import type { Tool } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { baseOptions } from "./helpers/harness.js"
import { hostLayer, registering, toolNames } from "./helpers/plugins.js"

const loose = (fields: Record<string, unknown>): Tool =>
  ({
    name: "t",
    description: "a tool",
    effect: "read",
    parameters: { type: "object" },
    execute: () => Effect.succeed({ content: [{ _tag: "text", text: "ran" }] }),
    ...fields
  }) as unknown as Tool

const circular: Record<string, unknown> = { type: "object" }
circular.properties = { self: circular }

describe("PluginHost tool shapes", () => {
  it.scoped("PL-6 TL-2 a tool with an unknown effect, a bad schema or no handler is refused, naming the remedy", () =>
    Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ effect: "nuke" }, 'The tool "t" has the effect "nuke": use "read", "write", "external" or "internal"'],
        [{ effect: undefined }, 'The tool "t" has the effect undefined: use "read"'],
        [{ description: 5 }, 'The tool "t" has no description'],
        [{ parameters: { type: "string" } }, 'are a JSON Schema of type "string", not "object"'],
        [{ parameters: null }, "are not a JSON Schema object"],
        [{ parameters: circular }, "cannot be written as JSON"],
        [{ execute: 7 }, 'The tool "t" has no execute function']
      ]
      for (const [index, [fields, expected]] of cases.entries()) {
        const loaded = yield* host.load({ definition: registering(`odd-${index}`, loose(fields)), external: true })
        assert.isFalse(loaded.loaded, expected)
        assert.include(loaded.diagnostics[0], expected)
      }
      // One sentence: the refusal's own full stop gives way to the host's clause.
      const [first] = (yield* host.diagnostics).filter((diagnostic) => diagnostic.pluginId === "odd-0")
      assert.strictEqual(
        first?.message,
        'setup failed: The tool "t" has the effect "nuke": use "read", "write", "external" or "internal" (it decides when a person is asked); everything it registered was removed'
      )
      const fine = yield* host.load({ definition: registering("fine", loose({ parameters: {} })), external: true })
      assert.isTrue(fine.loaded)
      assert.strictEqual((yield* toolNames).length, 1)
    }).pipe(Effect.provide(hostLayer([])))
  )

  it.scoped("PL-6 a tool failing or crashing with megabytes of text: the model reads a bounded error", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const outcome = yield* runner.run(baseOptions)
      assert.strictEqual(outcome.status, "completed")
      const calls = yield* Effect.flatMap(SessionStore, (store) => store.toolCalls(outcome.sessionId))
      assert.deepStrictEqual(
        calls.map((call) => call.status),
        ["error", "error", "error"]
      )
      const [plain, own, crash] = calls.map((call) => call.result ?? "")
      assert.isTrue(plain!.startsWith("The tool loud failed: QQQ"))
      assert.isAtMost(plain!.length, 30_100)
      assert.include(plain!, "characters of output cut")
      assert.isTrue(own!.startsWith("RRR") && own!.length <= 30_100)
      assert.isTrue(crash!.startsWith("The tool crashy of the plugin noisy crashed: SSS"))
      assert.isAtMost(crash!.length, 2_100)
      const diagnostics = yield* Effect.flatMap(PluginHost.PluginHost, (host) => host.diagnostics)
      assert.deepStrictEqual(
        diagnostics.map((diagnostic) => diagnostic.message),
        [crash]
      )
    }).pipe(
      Effect.provide(
        hostLayer(
          [
            Fake.callTools(
              { id: "call_1", name: "loud", args: {} },
              { id: "call_2", name: "own", args: {} },
              { id: "call_3", name: "crashy", args: {} }
            ),
            Fake.answer("seen")
          ],
          {
            plugins: [
              definePlugin({
                id: "noisy",
                version: "0.1.0",
                setup: Effect.gen(function* () {
                  const api = yield* PluginApi
                  yield* api.tools.register(
                    loose({ name: "loud", execute: () => Effect.fail({ message: "Q".repeat(2_000_000) }) })
                  )
                  yield* api.tools.register(
                    loose({
                      name: "own",
                      execute: () => Effect.fail(new ToolError({ message: "R".repeat(2_000_000) }))
                    })
                  )
                  yield* api.tools.register(
                    loose({ name: "crashy", execute: () => Effect.die(new Error("S".repeat(2_000_000))) })
                  )
                })
              })
            ]
          }
        )
      )
    )
  )
})
