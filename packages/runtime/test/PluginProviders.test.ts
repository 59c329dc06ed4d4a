// A plugin's provider as runs get it (PRV-3, PL-6): installed code, guarded like a plugin's tools.
import { ProviderError } from "@alisio/domain/Errors"
import type { LanguageModelService, ModelRequest } from "@alisio/domain/LanguageModel"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Providers from "@alisio/runtime/Providers"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { hostLayer } from "./helpers/plugins.js"

const request: ModelRequest = { model: "m", messages: [], tools: [], maxOutputTokens: 100 }

const parts = (...list: ReadonlyArray<unknown>) => Stream.fromIterable(list)

/** What a plugin's stream does for each model name. */
const streams: Record<string, () => unknown> = {
  throws: () => {
    throw new Error("no API key in ACME_KEY")
  },
  dies: () => Stream.die(new Error("socket closed")),
  notAStream: () => 42,
  numberText: () => parts({ _tag: "TextDelta", text: 42 }),
  unknownPart: () => parts({ _tag: "TextDelta", text: "ok" }, { _tag: "Image", url: "x" }),
  orphanDelta: () => parts({ _tag: "ToolCallDelta", id: "c1", argumentsDelta: "{}" }),
  oddFinish: () => parts({ _tag: "TextDelta", text: "ok" }, { _tag: "Finish", reason: "done" }),
  foreignFailure: () => Stream.fail({ _tag: "AcmeQuota", message: "monthly quota used" }),
  ownError: () => Stream.fail(new ProviderError({ code: "rate_limited", provider: "acme", message: "slow down" })),
  fine: () =>
    parts(
      { _tag: "TextDelta", text: "Let me look." },
      { _tag: "ToolCallStart", id: "c1", name: "read" },
      { _tag: "ToolCallDelta", id: "c1", argumentsDelta: '{"path":"a"}' },
      { _tag: "ToolCallEnd", id: "c1" },
      { _tag: "Finish", reason: "tool_calls", usage: { inputTokens: 3, outputTokens: 5 } }
    )
}

const acmePlugin = (models: unknown) =>
  definePlugin({
    id: "acme",
    version: "1.0.0",
    setup: Effect.gen(function* () {
      const api = yield* PluginApi
      const service = {
        provider: "acme",
        models,
        stream: (request: ModelRequest) => streams[request.model]!()
      }
      yield* api.providers.register("acme", service as unknown as LanguageModelService)
    })
  })

const withAcme = (models: unknown) =>
  Layer.provideMerge(
    hostLayer([], { plugins: [{ definition: acmePlugin(models), external: true }] }),
    Providers.layerMemory
  )

const acme = Effect.flatMap(Providers.Providers, (providers) =>
  Effect.map(providers.list, (list) => list.find((entry) => entry.id === "acme:acme")!.service)
)

const failureOf = (service: LanguageModelService, model: string) =>
  Effect.flip(Stream.runCollect(service.stream({ ...request, model })))

describe("a plugin's provider", () => {
  it.scoped(
    "PRV-3 PL-6 one that throws, dies, returns no Stream or streams what the runner cannot read fails with a ProviderError naming it",
    () =>
      Effect.gen(function* () {
        const service = yield* acme
        assert.strictEqual(service.provider, "acme:acme")
        const expected: Record<string, string> = {
          throws: "The provider acme:acme (of the plugin acme) failed: no API key in ACME_KEY",
          dies: "The provider acme:acme (of the plugin acme) failed: socket closed",
          notAStream:
            "The provider acme:acme (of the plugin acme) failed: its stream(request) returned 42, not a Stream",
          numberText: "The provider acme:acme sent a TextDelta whose text is 42",
          unknownPart: 'The provider acme:acme sent a part Alisio does not know: {"_tag":"Image","url":"x"}',
          orphanDelta:
            'The provider acme:acme sent a ToolCallDelta of a call that did not start: {"_tag":"ToolCallDelta","id":"c1","argumentsDelta":"{}"}',
          oddFinish:
            'The provider acme:acme sent a Finish with a reason other than stop, tool_calls, length, content_filter, other, or usage that is not token counts: {"_tag":"Finish","reason":"done"}',
          foreignFailure: "The provider acme:acme (of the plugin acme) failed: AcmeQuota: monthly quota used"
        }
        for (const [model, message] of Object.entries(expected)) {
          const error = yield* failureOf(service, model)
          assert.deepStrictEqual([error._tag, error.message], ["ProviderError", message], model)
          assert.strictEqual((error as ProviderError).code, "invalid_response", model)
        }
      }).pipe(Effect.provide(withAcme(Effect.succeed([]))))
  )

  it.scoped("PRV-3 what it streams right passes as it is, and so does a ProviderError of its own", () =>
    Effect.gen(function* () {
      const service = yield* acme
      const collected = yield* Stream.runCollect(service.stream({ ...request, model: "fine" }))
      const sent = yield* Stream.runCollect(streams.fine!() as Stream.Stream<unknown>)
      assert.deepStrictEqual<ReadonlyArray<unknown>>(Chunk.toReadonlyArray(collected), Chunk.toReadonlyArray(sent))
      assert.strictEqual(Chunk.size(collected), 5)
      const own = yield* failureOf(service, "ownError")
      assert.deepStrictEqual(
        [own._tag, (own as ProviderError).code, own.message],
        ["ProviderError", "rate_limited", "slow down"]
      )
    }).pipe(Effect.provide(withAcme(Effect.succeed([]))))
  )

  it.scoped(
    "PRV-3 PL-6 its models: a crash, a list that is not models, and no answer in 30 s fail with a ProviderError",
    () =>
      Effect.gen(function* () {
        const listed = (models: unknown) =>
          Effect.flatMap(acme, (service) => Effect.flip(service.models)).pipe(Effect.provide(withAcme(models)))
        assert.strictEqual(
          (yield* listed(Effect.die(new Error("catalog.json is missing")))).message,
          "The provider acme:acme (of the plugin acme) failed: catalog.json is missing"
        )
        assert.strictEqual(
          (yield* listed(Effect.succeed([{ id: "big", provider: "acme" }, { name: "big" }]))).message,
          "The provider acme:acme listed models that are not { id, provider }: [1].id: is missing"
        )
        assert.strictEqual(
          (yield* listed([{ id: "m", provider: "acme" }])).message,
          'The provider acme:acme (of the plugin acme) failed: its models are [{"id":"m","provider":"acme"}], not an Effect'
        )
        const context = yield* Layer.build(withAcme(Effect.never))
        const silent = yield* acme.pipe(Effect.provide(context))
        const waiting = yield* Effect.fork(Effect.flip(silent.models))
        yield* TestClock.adjust("30 seconds")
        assert.strictEqual(
          (yield* Fiber.join(waiting)).message,
          "The provider acme:acme did not list its models within 30s"
        )
        const fine = yield* Effect.flatMap(acme, (service) => service.models).pipe(
          Effect.provide(withAcme(Effect.succeed([{ id: "big", provider: "acme", contextWindow: 8000 }])))
        )
        assert.deepStrictEqual(fine, [{ id: "big", provider: "acme", contextWindow: 8000 }])
      })
  )
})
