import * as Providers from "@alisio/runtime/Providers"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { loadSetup, registerProviders } from "./App.js"
import { CliError, ExitCode } from "./CliError.js"

/** `alisio models`: each configured provider's models, discovery merged with the catalog. */
export const listModels = (flags: { readonly json: boolean }) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({})
    const program = Effect.gen(function* () {
      yield* registerProviders(setup)
      const providers = yield* Providers.Providers
      for (const entry of yield* providers.list) {
        const models = yield* entry.service.models.pipe(
          Effect.mapError(
            (error) =>
              new CliError({
                message: `Could not list the models of ${entry.id}: ${error.message}`,
                exitCode: ExitCode.failed
              })
          )
        )
        for (const model of models) {
          if (flags.json) {
            process.stdout.write(`${JSON.stringify({ ...model, provider: entry.id })}\n`)
          } else {
            const facts = [
              model.contextWindow === undefined ? undefined : `context ${model.contextWindow}`,
              model.maxOutputTokens === undefined ? undefined : `max output ${model.maxOutputTokens}`
            ].filter((f) => f !== undefined)
            process.stdout.write(`${entry.id}/${model.id}${facts.length === 0 ? "" : `  (${facts.join(", ")})`}\n`)
          }
        }
      }
    })
    yield* program.pipe(Effect.provide(Layer.fresh(Providers.layerMemory)))
  })
