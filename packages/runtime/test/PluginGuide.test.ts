// The test of the example plugin, exactly as docs/plugins.md shows it to plugin authors.
import { SessionId } from "@alisio/domain/Ids"
import * as FakeProvider from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as Interaction from "@alisio/runtime/Interaction"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import weather from "./fixtures/plugins/weather.js"

/** The plugin over a plugin host, the real runtime, an in-memory session database and a scripted model. */
const testLayer = (script: FakeProvider.Script) =>
  PluginHost.plugin(weather).pipe(
    Layer.provideMerge(PluginHost.layer()),
    Layer.provideMerge(AgentRuntime.layer({ tools: [], interaction: Interaction.layerHeadless({ approveAll: true }) })),
    Layer.provideMerge(FakeProvider.layer(script)),
    Layer.provideMerge(SessionStore.layerMemory)
  )

describe("weather plugin", () => {
  it.scoped("the model calls forecast and reads its answer", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const outcome = yield* runner.run({ cwd: "/tmp", prompt: "Weather in Oslo?", model: "fake-model" })
      assert.strictEqual(outcome.status, "completed")
      const requests = yield* Effect.flatMap(FakeProvider.FakeProvider, (fake) => fake.requests)
      const toolMessage = requests[1]!.messages.find((message) => message.role === "tool")
      assert.deepStrictEqual(toolMessage?.content, [{ _tag: "text", text: "Oslo: snow, -3 °C" }])
    }).pipe(
      Effect.provide(
        testLayer([
          FakeProvider.callTools({ id: "call_1", name: "forecast", args: { city: "Oslo" } }),
          FakeProvider.answer("Snow in Oslo.")
        ])
      )
    )
  )

  it.scoped("an unknown city reaches the model as the plugin's own error", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      yield* runner.run({ cwd: "/tmp", prompt: "Weather on Mars?", model: "fake-model" })
      const requests = yield* Effect.flatMap(FakeProvider.FakeProvider, (fake) => fake.requests)
      const toolMessage = requests[1]!.messages.find((message) => message.role === "tool")
      assert.deepStrictEqual(toolMessage?.content, [{ _tag: "text", text: "CityNotFound: No forecast for Mars" }])
    }).pipe(
      Effect.provide(
        testLayer([
          FakeProvider.callTools({ id: "call_1", name: "forecast", args: { city: "Mars" } }),
          FakeProvider.answer("No idea.")
        ])
      )
    )
  )

  it.scoped("the /weather command and the context it adds", () =>
    Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      assert.strictEqual(yield* host.commands.run("weather", "Lisbon", {}), "Lisbon: sunny, 24 °C")
      const input = { sessionId: SessionId.make("s-1"), cwd: "/tmp", prompt: "hi", model: "fake-model" }
      const context = yield* host.contextFor(input)
      assert.strictEqual(context, "Context from the plugin weather:\nForecasts are known for Lisbon and Oslo.")
    }).pipe(Effect.provide(testLayer([])))
  )
})
