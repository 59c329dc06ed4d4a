// Plugin host test helpers: the host over the real runtime on the FakeProvider, small plugins.

import { SessionId } from "@alisio/domain/Ids"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import type * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as PluginUi from "@alisio/runtime/PluginUi"
import { Tools } from "@alisio/runtime/Tools"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { runnerLayer } from "./harness.js"

/** The runtime on the FakeProvider, a plugin host over it, and the plugins given as values. */
export const hostLayer = (script: Fake.Script, options: PluginHost.Options = {}) =>
  PluginHost.layer(options).pipe(
    Layer.provideMerge(PluginUi.layerMemory),
    Layer.provideMerge(runnerLayer({ script, tools: [] }))
  )

export const contextInput = { sessionId: SessionId.make("s-1"), cwd: "/tmp", prompt: "hi", model: "fake-model" }

export const toolNames = Effect.flatMap(Tools, (tools) =>
  Effect.map(tools.all, (all) => all.map((tool) => tool.name).sort())
)

export const echo = (name: string, effect: Tool["effect"] = "read"): Tool =>
  defineTool({
    name,
    description: `${name} tool`,
    effect,
    input: Schema.Struct({}),
    run: () => Effect.succeed(textResult(name))
  })

export const registering = (id: string, ...tools: ReadonlyArray<Tool>) =>
  definePlugin({
    id,
    version: "0.1.0",
    setup: Effect.gen(function* () {
      const api = yield* PluginApi
      for (const tool of tools) yield* api.tools.register(tool)
    })
  })

/** Retries `check` (yielding to other fibers in between) until it holds; observers run on fibers of their own. */
export const eventually = <A>(effect: Effect.Effect<A>, check: (value: A) => boolean) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 1_000; attempt++) {
      const value = yield* effect
      if (check(value)) return value
      yield* Effect.yieldNow()
    }
    return yield* effect
  })
