import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { ProviderError, UnknownModelError } from "@alisio/domain/Errors"
import { SessionId } from "@alisio/domain/Ids"
import type { LanguageModelService, ModelInfo } from "@alisio/domain/LanguageModel"
import * as ModelListCache from "@alisio/runtime/ModelListCache"
import * as Providers from "@alisio/runtime/Providers"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { makeTempDir } from "./helpers/tempDir.js"

/** A provider serving `ids`; `discoveries` counts how often its models were asked for. */
const provider = (id: string, ids: ReadonlyArray<string>, options: { readonly fail?: boolean } = {}) => {
  const counter = { discoveries: 0 }
  const service: LanguageModelService = {
    provider: id,
    stream: () => Stream.empty,
    models: Effect.suspend(() => {
      counter.discoveries++
      return options.fail === true
        ? Effect.fail(new ProviderError({ code: "network", message: "The server could not be reached." }))
        : Effect.succeed(ids.map((model): ModelInfo => ({ id: model, provider: id, maxOutputTokens: 4096 })))
    })
  }
  return { service, counter }
}

const registry = (options: Providers.Options = {}) =>
  Effect.gen(function* () {
    const providers = yield* Providers.make(options)
    yield* providers.register("openai", provider("openai", ["gpt-4o", "anthropic/claude-sonnet-4.5"]).service)
    yield* providers.register("local", provider("local", ["qwen3-coder"]).service)
    return providers
  })

describe("Providers", () => {
  it.effect("PRV-1 registration is additive, in order, and a later registration replaces the same id", () =>
    Effect.gen(function* () {
      const providers = yield* registry()
      const replacement = provider("local", ["llama3"]).service
      yield* providers.register("extra", provider("extra", []).service)
      yield* providers.register("local", replacement)
      const list = yield* providers.list
      assert.deepStrictEqual(
        list.map((entry) => entry.id),
        ["openai", "extra", "local"]
      )
      assert.strictEqual(list.find((entry) => entry.id === "local")!.service, replacement)
      assert.strictEqual((yield* providers.resolve("local/llama3")).model, "llama3")
    })
  )

  it.effect("PRV-1 resolves provider/model, bare names to openai, and router ids containing a slash", () =>
    Effect.gen(function* () {
      const providers = yield* registry()
      const local = yield* providers.resolve("local/qwen3-coder")
      assert.strictEqual(local.provider, "local")
      assert.strictEqual(local.model, "qwen3-coder")
      assert.strictEqual(local.service.provider, "local")
      assert.deepStrictEqual(local.info, Option.some({ id: "qwen3-coder", provider: "local", maxOutputTokens: 4096 }))
      const bare = yield* providers.resolve(" gpt-4o ")
      assert.deepStrictEqual([bare.provider, bare.model], ["openai", "gpt-4o"])
      const routed = yield* providers.resolve("anthropic/claude-sonnet-4.5")
      assert.deepStrictEqual([routed.provider, routed.model], ["openai", "anthropic/claude-sonnet-4.5"])
    })
  )

  it.effect("PRV-1 an unknown provider or model is an UnknownModelError listing what is available", () =>
    Effect.gen(function* () {
      const providers = yield* Providers.make({ defaultProvider: "nowhere" })
      const empty = yield* Effect.flip(providers.resolve("gpt-4o"))
      assert.instanceOf(empty, UnknownModelError)
      assert.include(empty.message, 'Unknown provider "nowhere"')

      const registered = yield* registry()
      const model = yield* Effect.flip(registered.resolve("local/gpt-9"))
      assert.instanceOf(model, UnknownModelError)
      assert.include(model.message, 'provider "local" has no model "gpt-9"')
      assert.include(model.message, "local/qwen3-coder")
      assert.deepStrictEqual((model as UnknownModelError).available, ["local/qwen3-coder"])

      const prefix = yield* Effect.flip(registered.resolve("mistral/large"))
      assert.include(prefix.message, '"mistral" is not a provider (providers: openai, local)')
      assert.include(prefix.message, "openai/gpt-4o")

      const noModel = yield* Effect.flip(registered.resolve("local/"))
      assert.include(noModel.message, "No model named")
    })
  )

  it.effect(
    "PRV-1 a list of models that fails for a while (busy, rate limited) takes the name at its word, and asks again later",
    () =>
      Effect.gen(function* () {
        const providers = yield* Providers.make()
        const failures = [
          new ProviderError({ code: "server", provider: "busy", message: "502 Bad Gateway" }),
          new ProviderError({ code: "rate_limited", provider: "busy", message: "slow down" })
        ]
        let asked = 0
        yield* providers.register("busy", {
          provider: "busy",
          stream: () => Stream.empty,
          models: Effect.suspend(() => {
            const failure = failures[asked++]
            return failure === undefined ? Effect.succeed([{ id: "m1", provider: "busy" }]) : Effect.fail(failure)
          })
        })
        const first = yield* providers.resolve("busy/anything")
        assert.strictEqual(first.model, "anything")
        assert.isTrue(Option.isNone(first.info))
        yield* providers.resolve("busy/anything")
        assert.instanceOf(yield* Effect.flip(providers.resolve("busy/anything")), UnknownModelError, "listed at last")
        assert.strictEqual(asked, 3)
      })
  )

  it.effect("PRV-1 a provider without discovery takes any model name; discovery errors reach the caller", () =>
    Effect.gen(function* () {
      const providers = yield* Providers.make()
      yield* providers.register("bare", provider("bare", []).service)
      yield* providers.register("down", provider("down", [], { fail: true }).service)
      const resolved = yield* providers.resolve("bare/anything")
      assert.strictEqual(resolved.model, "anything")
      assert.isTrue(Option.isNone(resolved.info))
      const error = yield* Effect.flip(providers.resolve("down/x"))
      assert.instanceOf(error, ProviderError)
    })
  )

  it.effect("PRV-1 discovery is asked once per registration", () =>
    Effect.gen(function* () {
      const providers = yield* Providers.make()
      const first = provider("openai", ["gpt-4o"])
      yield* providers.register("openai", first.service)
      yield* providers.resolve("gpt-4o")
      yield* providers.resolve("openai/gpt-4o")
      assert.strictEqual(first.counter.discoveries, 1)
      const second = provider("openai", ["gpt-4o", "o3"])
      yield* providers.register("openai", second.service)
      assert.strictEqual((yield* providers.resolve("o3")).model, "o3")
      assert.strictEqual(second.counter.discoveries, 1)
    })
  )

  it.effect("PRV-1 the active model is per session: activating one sets no default for other sessions", () =>
    Effect.gen(function* () {
      const providers = yield* registry()
      const a = SessionId.make("ses-a")
      const b = SessionId.make("ses-b")
      assert.isTrue(Option.isNone(yield* providers.active(a)))
      yield* providers.activate("local/qwen3-coder", a)
      yield* providers.activate("gpt-4o", b)
      assert.deepStrictEqual(yield* providers.active(a), Option.some({ provider: "local", model: "qwen3-coder" }))
      assert.deepStrictEqual(yield* providers.active(b), Option.some({ provider: "openai", model: "gpt-4o" }))
      assert.isTrue(
        Option.isNone(yield* providers.active(SessionId.make("ses-new"))),
        "a new session has no model until one is chosen for it: the default lives in the configuration"
      )
      const failed = yield* Effect.flip(providers.activate("local/nope", a))
      assert.instanceOf(failed, UnknownModelError)
      assert.deepStrictEqual(yield* providers.active(a), Option.some({ provider: "local", model: "qwen3-coder" }))
    })
  )

  it.scoped("PRV-1 a model in the list an earlier process remembered resolves without asking the server", () =>
    Effect.gen(function* () {
      const file = join(yield* makeTempDir(), "models", "list.json")
      const earlier = yield* Providers.make()
      const first = provider("local", ["qwen3-coder", "llama3"])
      yield* earlier.register("local", first.service, ModelListCache.make(file))
      yield* earlier.resolve("local/qwen3-coder")
      assert.strictEqual(first.counter.discoveries, 1)

      const later = yield* Providers.make()
      const second = provider("local", ["qwen3-coder", "llama3"])
      yield* later.register("local", second.service, ModelListCache.make(file))
      const resolved = yield* later.resolve("local/llama3")
      assert.strictEqual(second.counter.discoveries, 0)
      assert.deepStrictEqual(resolved.info, Option.some({ id: "llama3", provider: "local", maxOutputTokens: 4096 }))
    })
  )

  it.scoped("PRV-1 a model missing from the remembered list, or a list past its hour, is looked up on the server", () =>
    Effect.gen(function* () {
      const file = join(yield* makeTempDir(), "list.json")
      const remembered = ModelListCache.make(file)
      yield* remembered.write([{ id: "old-model", provider: "local" }])

      // A model the server added since: found, and the fresh list remembered.
      const added = provider("local", ["old-model", "new-model"])
      const providers = yield* Providers.make()
      yield* providers.register("local", added.service, remembered)
      assert.strictEqual((yield* providers.resolve("local/new-model")).model, "new-model")
      assert.strictEqual(added.counter.discoveries, 1)
      assert.deepStrictEqual(
        (yield* remembered.read)?.map((model) => model.id),
        ["old-model", "new-model"]
      )

      // An unknown model is reported from the server's list, never from the remembered one alone.
      const gone = provider("local", ["new-model"])
      const again = yield* Providers.make()
      yield* again.register("local", gone.service, remembered)
      const failed = yield* Effect.flip(again.resolve("local/missing"))
      assert.instanceOf(failed, UnknownModelError)
      assert.include(failed.message, "Available: local/new-model.")
      assert.strictEqual(gone.counter.discoveries, 1)

      // An hour later the list is stale: a known model is looked up again.
      yield* TestClock.adjust(ModelListCache.MAX_AGE_MS)
      assert.isUndefined(yield* remembered.read)
      const stale = provider("local", ["new-model"])
      const later = yield* Providers.make()
      yield* later.register("local", stale.service, remembered)
      yield* later.resolve("local/new-model")
      assert.strictEqual(stale.counter.discoveries, 1)
    })
  )

  it.scoped("PRV-1 a remembered list that is missing or unreadable is no list", () =>
    Effect.gen(function* () {
      const folder = yield* makeTempDir()
      assert.isUndefined(yield* ModelListCache.make(join(folder, "none.json")).read)
      const broken = join(folder, "broken.json")
      writeFileSync(broken, "{ not json")
      assert.isUndefined(yield* ModelListCache.make(broken).read)
      writeFileSync(broken, JSON.stringify({ savedAt: 0, models: [{ id: 3 }] }))
      assert.isUndefined(yield* ModelListCache.make(broken).read)
      const listed = provider("local", ["qwen3-coder"])
      const providers = yield* Providers.make()
      yield* providers.register("local", listed.service, ModelListCache.make(broken))
      assert.strictEqual((yield* providers.resolve("local/qwen3-coder")).model, "qwen3-coder")
      assert.strictEqual(listed.counter.discoveries, 1)
    })
  )
})
