import { type ProviderError, UnknownModelError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { LanguageModelService, ModelInfo } from "@alisio/domain/LanguageModel"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { quoted } from "./TerminalText.js"

/** A provider id and a model id, written `provider/model`. */
export const ModelRef = Schema.Struct({ provider: Schema.String, model: Schema.String })
export type ModelRef = typeof ModelRef.Type

/** A model ready to use: its provider's service and what the catalog knows of it. */
export interface ResolvedModel extends ModelRef {
  readonly service: LanguageModelService
  readonly info: Option.Option<ModelInfo>
}

export interface RegisteredProvider {
  readonly id: string
  readonly service: LanguageModelService
  readonly remembered?: RememberedModels | undefined
}

/** A provider's model list as an earlier process fetched it (ModelListCache.ts); neither part fails. */
export interface RememberedModels {
  /** The list, when one is remembered and still fresh. */
  readonly read: Effect.Effect<ReadonlyArray<ModelInfo> | undefined>
  /** Remembers a list just fetched from the provider. */
  readonly write: (models: ReadonlyArray<ModelInfo>) => Effect.Effect<void>
}

/**
 * The provider registry (PRV-1): registration, `provider/model` resolution, and the model active
 * in each session. Activating a model never changes the default of later runs: that is
 * `defaultModel` in the configuration, which `alisio models use` writes (`ConfigEdits`).
 */
export class Providers extends Context.Tag("@alisio/runtime/Providers")<
  Providers,
  {
    /**
     * Adds a provider under `id`; a later registration under the same id replaces it. With
     * `remembered`, a model found in the remembered list resolves without asking the provider.
     */
    readonly register: (
      id: string,
      service: LanguageModelService,
      remembered?: RememberedModels | undefined
    ) => Effect.Effect<void>
    /** Removes the provider `id` (a plugin's, when its scope closes). */
    readonly unregister: (id: string) => Effect.Effect<void>
    /** The registered providers, in registration order. */
    readonly list: Effect.Effect<ReadonlyArray<RegisteredProvider>>
    /** Resolves `provider/model`, or a bare model name of the default provider, against discovery. */
    readonly resolve: (spec: string) => Effect.Effect<ResolvedModel, UnknownModelError | ProviderError>
    /** Resolves `spec` and makes it the active model of `sessionId`; nothing is persisted. */
    readonly activate: (
      spec: string,
      sessionId: SessionId
    ) => Effect.Effect<ResolvedModel, UnknownModelError | ProviderError>
    /** The model activated in the session, if any. */
    readonly active: (sessionId: SessionId) => Effect.Effect<Option.Option<ModelRef>>
  }
>() {}

export interface Options {
  /** The provider of bare model names; defaults to `openai`. */
  readonly defaultProvider?: string | undefined
}

const listed = 20

const enumerate = (items: ReadonlyArray<string>): string =>
  items.length === 0
    ? "none"
    : items.length <= listed
      ? items.join(", ")
      : `${items.slice(0, listed).join(", ")} and ${items.length - listed} more`

export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const defaultProvider = options.defaultProvider ?? "openai"
    const providers = yield* Ref.make<ReadonlyArray<RegisteredProvider>>([])
    const discovered = yield* Ref.make(new Map<string, ReadonlyArray<ModelInfo>>())
    const sessions = yield* Ref.make(new Map<SessionId, ModelRef>())

    const register = (id: string, service: LanguageModelService, remembered?: RememberedModels | undefined) =>
      Effect.zipRight(
        Ref.update(providers, (all) => [...all.filter((entry) => entry.id !== id), { id, service, remembered }]),
        Ref.update(discovered, (cache) => {
          const next = new Map(cache)
          next.delete(id)
          return next
        })
      )

    const unregister = (id: string) =>
      Effect.zipRight(
        Ref.update(providers, (all) => all.filter((entry) => entry.id !== id)),
        Ref.update(discovered, (cache) => {
          const next = new Map(cache)
          next.delete(id)
          return next
        })
      )

    const fetched = (entry: RegisteredProvider) =>
      Effect.tap(entry.service.models, (models) =>
        Effect.zipRight(
          Ref.update(discovered, (current) => new Map(current).set(entry.id, models)),
          entry.remembered === undefined ? Effect.void : entry.remembered.write(models)
        )
      )

    /** The provider's models: as fetched in this process, else as remembered when `model` is in them, else fetched. */
    const modelsOf = (entry: RegisteredProvider, model: string) =>
      Effect.flatMap(Ref.get(discovered), (cache) => {
        const cached = cache.get(entry.id)
        if (cached !== undefined) return Effect.succeed(cached)
        if (entry.remembered === undefined) return fetched(entry)
        return Effect.flatMap(entry.remembered.read, (remembered) =>
          remembered?.some((candidate) => candidate.id === model) === true ? Effect.succeed(remembered) : fetched(entry)
        )
      })

    const resolve = (spec: string): Effect.Effect<ResolvedModel, UnknownModelError | ProviderError> =>
      Effect.gen(function* () {
        const all = yield* Ref.get(providers)
        const ids = all.map((entry) => entry.id)
        const trimmed = spec.trim()
        const slash = trimmed.indexOf("/")
        const prefix = slash > 0 ? trimmed.slice(0, slash) : undefined
        // `provider/model` when the prefix is a provider; otherwise the whole text names a model of
        // the default provider (router model ids such as `anthropic/claude-sonnet-4.5` contain a slash).
        const named = prefix === undefined ? undefined : all.find((entry) => entry.id === prefix)
        const entry = named ?? all.find((candidate) => candidate.id === defaultProvider)
        const model = named === undefined ? trimmed : trimmed.slice(slash + 1).trim()
        if (entry === undefined) {
          const which = prefix ?? defaultProvider
          return yield* new UnknownModelError({
            message: `Unknown provider ${quoted(which)}. Available providers: ${enumerate(ids)}.`,
            available: ids
          })
        }
        if (model.length === 0) {
          return yield* new UnknownModelError({
            message: `No model named in ${quoted(spec)}. Write it as provider/model, e.g. ${entry.id}/<model>.`,
            available: ids
          })
        }
        // A list that failed for a while (a busy or rate-limited server, whose chat may well answer)
        // or came back malformed (Go servers send `"data": null` for none) does not stop a run that
        // names its model: the name is taken at its word, and the request says what it says.
        const models = yield* modelsOf(entry, model).pipe(
          Effect.catchIf(
            (error) => error.code === "server" || error.code === "rate_limited" || error.code === "invalid_response",
            () => Effect.succeed<ReadonlyArray<ModelInfo>>([])
          )
        )
        const info = models.find((candidate) => candidate.id === model)
        // A server without discovery lists nothing: any name is taken at its word.
        if (info === undefined && models.length > 0) {
          const available = models.map((candidate) => `${entry.id}/${candidate.id}`)
          const notProvider =
            prefix !== undefined && named === undefined
              ? ` ${quoted(prefix)} is not a provider (providers: ${enumerate(ids)}), and`
              : ""
          return yield* new UnknownModelError({
            message: `Unknown model ${quoted(trimmed)}:${notProvider} provider "${entry.id}" has no model ${quoted(model)}. Available: ${enumerate(
              available
            )}.`,
            available
          })
        }
        return { provider: entry.id, model, service: entry.service, info: Option.fromNullable(info) }
      })

    const activate = (spec: string, sessionId: SessionId) =>
      Effect.tap(resolve(spec), (resolved) =>
        Ref.update(sessions, (all) =>
          new Map(all).set(sessionId, { provider: resolved.provider, model: resolved.model })
        )
      )

    const active = (sessionId: SessionId) =>
      Effect.map(Ref.get(sessions), (all) => Option.fromNullable(all.get(sessionId)))

    return Providers.of({ register, unregister, list: Ref.get(providers), resolve, activate, active })
  })

export const layer = (options: Options = {}): Layer.Layer<Providers> => Layer.effect(Providers, make(options))

/** A registry of its own, for tests and one-off commands. */
export const layerMemory: Layer.Layer<Providers> = Layer.effect(Providers, make())
