import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import * as Providers from "@alisio/runtime/Providers"
import type { RunRecord } from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { configuredFirst, nonEmpty, type Setup } from "./App.js"
import { CliError, ExitCode, usageError } from "./CliError.js"

const failed = (error: { readonly _tag: string; readonly message: string }) =>
  new CliError({
    message: error._tag === "ProviderError" ? `Could not list the models: ${error.message}` : error.message,
    exitCode: error._tag === "UnknownModelError" ? ExitCode.usage : ExitCode.failed
  })

/**
 * The model of a run: `-m`, else the model the resumed session last ran with, else the
 * configured `defaultModel` (which `alisio models use` sets), else the first one a local server
 * serves, which is announced on stderr (the UI shows it) with how to choose another, unless
 * `quiet`. `-m` applies to its run, and so to its session when resumed, never to later new runs.
 */
export const chooseModel = (
  setup: Setup,
  flag: Option.Option<string>,
  resumed: Option.Option<RunRecord>,
  announce: "run" | "ui" | "quiet" = "run"
) =>
  Effect.gen(function* () {
    const providers = yield* Providers.Providers
    if (Option.isSome(flag)) return yield* Effect.mapError(providers.resolve(flag.value), failed)
    if (Option.isSome(resumed)) {
      const { model, provider } = resumed.value
      const again = yield* Effect.either(providers.resolve(`${provider}/${model}`))
      if (again._tag === "Right") return again.right
      process.stderr.write(
        `alisio: the session ran with ${provider}/${model}, which is not available now (${again.left.message}); using the default model\n`
      )
    }
    if (setup.config.defaultModel !== undefined) {
      return yield* providers
        .resolve(setup.config.defaultModel)
        .pipe(
          Effect.mapError((error) =>
            error._tag === "UnknownModelError"
              ? usageError(
                  `${error.message} It is the configured defaultModel: \`alisio models use <provider/model>\` sets another (\`alisio config\` shows where it is set).`
                )
              : failed(error)
          )
        )
    }
    const first = configuredFirst(setup, yield* providers.list)[0]
    if (first === undefined) return yield* usageError("No provider is configured.")
    // A local server usually serves the one model it loaded; OpenAI's own lists dozens in no useful order.
    const servesOpenAi =
      first.id === "openai" &&
      (
        nonEmpty(process.env.OPENAI_BASE_URL) ??
        setup.config.providers?.openai?.baseURL ??
        OpenAiCompatible.defaultBaseURL
      ).includes("api.openai.com")
    if (servesOpenAi) {
      return yield* usageError(
        "Choose a model with -m (e.g. -m gpt-4o), or set a default with `alisio models use <provider/model>`; `alisio models` lists them."
      )
    }
    const models = yield* Effect.mapError(first.service.models, failed)
    const model = models[0]
    if (model === undefined) {
      return yield* usageError(`The provider ${first.id} lists no models; choose one with -m ${first.id}/<model>.`)
    }
    if (announce !== "quiet") {
      const another = announce === "ui" ? "/model" : "-m"
      process.stderr.write(
        `alisio: using ${first.id}/${model.id} (${another} chooses another; \`alisio models use\` sets the default)\n`
      )
    }
    return yield* Effect.mapError(providers.resolve(`${first.id}/${model.id}`), failed)
  })
