// `api.model.complete`: one request, no tools, the text of the answer, bounded in time.

import type { LanguageModelService } from "@alisio/domain/LanguageModel"
import { type CompletionRequest, PluginError } from "@alisio/domain/Plugin"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { CurrentRun } from "../../CurrentRun.js"
import type { Providers } from "../../Providers.js"
import type { SessionStoreService } from "../../SessionStore.js"

export interface CompletionServices {
  readonly store: SessionStoreService
  readonly providers: Option.Option<Providers["Type"]>
  /** The `LanguageModel` of the context, if any (the FakeProvider in tests). */
  readonly fallback: Option.Option<LanguageModelService>
  readonly timeoutMs: number
}

interface Choice {
  readonly service: LanguageModelService
  readonly model: string
}

const DEFAULT_MAX_OUTPUT_TOKENS = 4_096

/** A registered provider by id, or the context's model when it is that provider. */
const serviceFor = (services: CompletionServices, provider: string, model: string) =>
  Effect.gen(function* () {
    if (Option.isSome(services.providers)) {
      const registered = (yield* services.providers.value.list).find((entry) => entry.id === provider)
      if (registered !== undefined) return Option.some<Choice>({ service: registered.service, model })
    }
    if (Option.isSome(services.fallback) && services.fallback.value.provider === provider) {
      return Option.some<Choice>({ service: services.fallback.value, model })
    }
    return Option.none<Choice>()
  })

/**
 * The model to complete with: the given session's (its last run), the running session's (inside
 * a tool), the user's active model, or the context's `LanguageModel`.
 */
const choose = (services: CompletionServices, request: CompletionRequest) =>
  Effect.gen(function* () {
    if (request.sessionId !== undefined && services.store.runs !== undefined) {
      const runs = yield* Effect.orElseSucceed(services.store.runs(request.sessionId), () => [])
      const last = runs.at(-1)
      if (last !== undefined) {
        const found = yield* serviceFor(services, last.provider, last.model)
        if (Option.isSome(found)) return found
      }
    }
    const run = yield* Effect.serviceOption(CurrentRun)
    if (Option.isSome(run)) return Option.some<Choice>({ service: run.value.provider, model: run.value.model })
    if (Option.isSome(services.providers) && request.sessionId !== undefined) {
      const providers = services.providers.value
      const active = yield* providers.active(request.sessionId)
      if (Option.isSome(active)) {
        const found = yield* serviceFor(services, active.value.provider, active.value.model)
        if (Option.isSome(found)) return found
      }
    }
    if (Option.isSome(services.fallback)) {
      const service = services.fallback.value
      const models = yield* Effect.orElseSucceed(service.models, () => [])
      return Option.some<Choice>({ service, model: models[0]?.id ?? "default" })
    }
    return Option.none<Choice>()
  })

export const complete = (
  pluginId: string,
  services: CompletionServices,
  request: CompletionRequest
): Effect.Effect<string, PluginError> =>
  Effect.gen(function* () {
    const chosen = yield* choose(services, request)
    if (Option.isNone(chosen)) {
      return yield* new PluginError({ pluginId, message: "No model is available for api.model.complete." })
    }
    const { model, service } = chosen.value
    return yield* service
      .stream({
        model,
        ...(request.system === undefined ? {} : { system: request.system }),
        messages: [{ role: "user", content: [{ _tag: "text", text: request.prompt }] }],
        tools: [],
        maxOutputTokens: request.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS
      })
      .pipe(
        Stream.runFold("", (text, part) => (part._tag === "TextDelta" ? text + part.text : text)),
        Effect.timeoutFail({
          duration: Duration.millis(services.timeoutMs),
          onTimeout: () =>
            new PluginError({
              pluginId,
              message: `The completion with ${service.provider}/${model} took longer than ${services.timeoutMs} ms.`
            })
        }),
        Effect.mapError((error) =>
          error._tag === "PluginError"
            ? error
            : new PluginError({
                pluginId,
                message: `The completion with ${service.provider}/${model} failed: ${error.message}`
              })
        )
      )
  })
