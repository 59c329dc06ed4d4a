// The model a child session runs on: the one it asked for, through the provider registry, or its
// parent's.
import { UnknownModelError } from "@alisio/domain/Errors"
import type { LanguageModelService, ModelInfo } from "@alisio/domain/LanguageModel"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CurrentRun } from "../CurrentRun.js"
import type { Providers } from "../Providers.js"

/** The model a child asked for: its provider's service, the model id and what the catalog knows. */
export interface ChildModel {
  readonly model: string
  readonly provider: LanguageModelService
  readonly modelInfo?: ModelInfo | undefined
}

/** `provider/model` through the registry when there is one; otherwise a model of the parent's provider. */
export const resolveModel = (
  providers: Option.Option<Providers["Type"]>,
  run: CurrentRun["Type"],
  asked: string | undefined
): Effect.Effect<ChildModel, UnknownModelError> => {
  if (asked === undefined) return Effect.succeed({ model: run.model, provider: run.provider, modelInfo: run.modelInfo })
  if (Option.isNone(providers)) return Effect.succeed({ model: asked, provider: run.provider })
  return providers.value.resolve(asked).pipe(
    Effect.map((resolved) => ({
      model: resolved.model,
      provider: resolved.service,
      modelInfo: Option.getOrUndefined(resolved.info)
    })),
    Effect.catchTag("ProviderError", (error) =>
      Effect.fail(
        new UnknownModelError({
          message: `The model "${asked}" could not be checked: ${error.message}`,
          available: []
        })
      )
    )
  )
}
