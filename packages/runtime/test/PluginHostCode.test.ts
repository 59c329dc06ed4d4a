// Which code counts as an external plugin's (PL-6), whose stdout writes go to stderr: its own, and
// what it forks, but not the host's effects it calls through its API.

import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import { runningPluginCode } from "@alisio/runtime/internal/plugins/pluginCode"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { PluginUi } from "@alisio/runtime/PluginUi"
import { Runner } from "@alisio/runtime/Runner"
import * as ToolOrigins from "@alisio/runtime/ToolOrigins"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { baseOptions, runnerLayer } from "./helpers/harness.js"

type Seen = Array<readonly [string, boolean]>

/** A plugin UI that notes, for each notification, whether it ran as plugin code. */
const probingUi = (seen: Seen) =>
  Layer.succeed(
    PluginUi,
    PluginUi.of({
      notify: (notification) => Effect.sync(() => seen.push([notification.message, runningPluginCode()])),
      panel: () => Effect.void,
      diagnostic: () => Effect.void,
      notifications: Effect.succeed([]),
      panels: Effect.succeed([])
    })
  )

const probing = (seen: Seen) =>
  definePlugin({
    id: "probing",
    version: "1.0.0",
    setup: Effect.gen(function* () {
      const api = yield* PluginApi
      seen.push(["setup", runningPluginCode()])
      yield* api.ui.notify("the host's notify, from setup")
      seen.push(["setup after the call", runningPluginCode()])
      yield* api.tools.register(
        defineTool({
          name: "probe",
          description: "Notes whose code runs",
          effect: "read",
          input: Schema.Struct({}),
          run: () =>
            Effect.gen(function* () {
              seen.push(["tool", runningPluginCode()])
              yield* api.ui.notify("the host's notify, from the tool")
              const work = yield* api.sessions.forkInRun(
                Effect.sync(() => seen.push(["work forked in the run", runningPluginCode()]))
              )
              if (Option.isSome(work)) yield* Fiber.join(work.value)
              return textResult("probed")
            })
        })
      )
    })
  })

describe("plugin code", () => {
  it.scoped(
    "PL-6 a host effect an external plugin runs through its API is the host's code; the plugin's own is the plugin's",
    () => {
      const seen: Seen = []
      return Effect.gen(function* () {
        const host = yield* PluginHost.PluginHost
        yield* host.load({ definition: probing(seen), external: true })
        const runner = yield* Runner
        const outcome = yield* runner.run(baseOptions)
        assert.strictEqual(outcome.status, "completed")
        assert.deepStrictEqual(seen, [
          ["setup", true],
          ["the host's notify, from setup", false],
          ["setup after the call", true],
          ["tool", true],
          ["the host's notify, from the tool", false],
          ["work forked in the run", true]
        ])
      }).pipe(
        Effect.provide(
          PluginHost.layer({}).pipe(
            Layer.provideMerge(probingUi(seen)),
            Layer.provideMerge(
              runnerLayer({
                script: [
                  Fake.callTools({ id: "call_1", name: `${ToolOrigins.externalPrefix("probing")}probe`, args: {} }),
                  Fake.answer("done")
                ],
                tools: []
              })
            )
          )
        )
      )
    }
  )
})
