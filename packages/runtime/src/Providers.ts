import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type ProviderError, StoreError, UnknownModelError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { LanguageModelService, ModelInfo } from "@alisio/domain/LanguageModel"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { writeFileAtomic } from "./internal/atomicFile.js"
import { errnoReason, errorDetail } from "./internal/errno.js"

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
}

/** The provider registry (PRV-1): registration, `provider/model` resolution, and the active model. */
export class Providers extends Context.Tag("@alisio/runtime/Providers")<
  Providers,
  {
    /** Adds a provider under `id`; a later registration under the same id replaces it. */
    readonly register: (id: string, service: LanguageModelService) => Effect.Effect<void>
    /** Removes the provider `id` (a plugin's, when its scope closes). */
    readonly unregister: (id: string) => Effect.Effect<void>
    /** The registered providers, in registration order. */
    readonly list: Effect.Effect<ReadonlyArray<RegisteredProvider>>
    /** Resolves `provider/model`, or a bare model name of the default provider, against discovery. */
    readonly resolve: (spec: string) => Effect.Effect<ResolvedModel, UnknownModelError | ProviderError>
    /** Makes `spec` the active model of `sessionId` (if given) and the user's remembered choice. */
    readonly activate: (
      spec: string,
      sessionId?: SessionId
    ) => Effect.Effect<ResolvedModel, UnknownModelError | ProviderError | StoreError>
    /** The session's active model, else the user's last choice. */
    readonly active: (sessionId?: SessionId) => Effect.Effect<Option.Option<ModelRef>>
  }
>() {}

export interface Options {
  /** Where the last choice is kept (`<stateHome>/active-model.json`); none keeps it in memory only. */
  readonly stateHome?: string
  /** The provider of bare model names; defaults to `openai`. */
  readonly defaultProvider?: string
}

const choiceFile = "active-model.json"
const listed = 20

const decodeChoice = Schema.decodeUnknownOption(Schema.parseJson(ModelRef))
const encodeChoice = Schema.encodeSync(Schema.parseJson(ModelRef))

const enumerate = (items: ReadonlyArray<string>): string =>
  items.length === 0
    ? "none"
    : items.length <= listed
      ? items.join(", ")
      : `${items.slice(0, listed).join(", ")} and ${items.length - listed} more`

const readChoice = (file: string): Effect.Effect<Option.Option<ModelRef>> =>
  Effect.promise(() => fs.readFile(file, "utf8").catch(() => undefined)).pipe(
    // A missing or unreadable file only means there is no remembered choice.
    Effect.map((text) => (text === undefined ? Option.none() : decodeChoice(text)))
  )

const writeChoice = (stateHome: string, choice: ModelRef): Effect.Effect<void, StoreError> => {
  const file = path.join(stateHome, choiceFile)
  return writeFileAtomic(file, `${encodeChoice(choice)}\n`).pipe(
    Effect.catchTag("FileWriteError", ({ cause }) =>
      Effect.fail(
        new StoreError({
          reason: errnoReason(cause),
          message: `Could not remember the chosen model in ${file}: ${errorDetail(cause)}`,
          path: file
        })
      )
    )
  )
}

export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const defaultProvider = options.defaultProvider ?? "openai"
    const providers = yield* Ref.make<ReadonlyArray<RegisteredProvider>>([])
    const discovered = yield* Ref.make(new Map<string, ReadonlyArray<ModelInfo>>())
    const sessions = yield* Ref.make(new Map<SessionId, ModelRef>())
    const lastChoice = yield* Ref.make(
      options.stateHome === undefined
        ? Option.none<ModelRef>()
        : yield* readChoice(path.join(options.stateHome, choiceFile))
    )

    const register = (id: string, service: LanguageModelService) =>
      Effect.zipRight(
        Ref.update(providers, (all) => [...all.filter((entry) => entry.id !== id), { id, service }]),
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

    const modelsOf = (entry: RegisteredProvider) =>
      Effect.flatMap(Ref.get(discovered), (cache) => {
        const cached = cache.get(entry.id)
        if (cached !== undefined) return Effect.succeed(cached)
        return Effect.tap(entry.service.models, (models) =>
          Ref.update(discovered, (current) => new Map(current).set(entry.id, models))
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
            message: `Unknown provider "${which}". Available providers: ${enumerate(ids)}.`,
            available: ids
          })
        }
        if (model.length === 0) {
          return yield* new UnknownModelError({
            message: `No model named in "${spec}". Write it as provider/model, e.g. ${entry.id}/<model>.`,
            available: ids
          })
        }
        const models = yield* modelsOf(entry)
        const info = models.find((candidate) => candidate.id === model)
        // A server without discovery lists nothing: any name is taken at its word.
        if (info === undefined && models.length > 0) {
          const available = models.map((candidate) => `${entry.id}/${candidate.id}`)
          const notProvider =
            prefix !== undefined && named === undefined
              ? ` "${prefix}" is not a provider (providers: ${enumerate(ids)}), and`
              : ""
          return yield* new UnknownModelError({
            message: `Unknown model "${trimmed}":${notProvider} provider "${entry.id}" has no model "${model}". Available: ${enumerate(
              available
            )}.`,
            available
          })
        }
        return { provider: entry.id, model, service: entry.service, info: Option.fromNullable(info) }
      })

    const activate = (spec: string, sessionId?: SessionId) =>
      Effect.gen(function* () {
        const resolved = yield* resolve(spec)
        const choice: ModelRef = { provider: resolved.provider, model: resolved.model }
        if (options.stateHome !== undefined) yield* writeChoice(options.stateHome, choice)
        yield* Ref.set(lastChoice, Option.some(choice))
        if (sessionId !== undefined) yield* Ref.update(sessions, (all) => new Map(all).set(sessionId, choice))
        return resolved
      })

    const active = (sessionId?: SessionId) =>
      Effect.flatMap(Ref.get(sessions), (all) => {
        const chosen = sessionId === undefined ? undefined : all.get(sessionId)
        return chosen === undefined ? Ref.get(lastChoice) : Effect.succeed(Option.some(chosen))
      })

    return Providers.of({ register, unregister, list: Ref.get(providers), resolve, activate, active })
  })

/** The registry, remembering the user's last choice under `stateHome`. */
export const layer = (options: Options): Layer.Layer<Providers> => Layer.effect(Providers, make(options))

/** The registry without persistence, for tests. */
export const layerMemory: Layer.Layer<Providers> = Layer.effect(Providers, make())
