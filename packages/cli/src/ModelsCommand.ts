import * as fs from "node:fs"
import { ModelInfo } from "@alisio/domain/LanguageModel"
import * as Config from "@alisio/runtime/Config"
import * as ConfigEdits from "@alisio/runtime/ConfigEdits"
import * as Paths from "@alisio/runtime/Paths"
import * as Providers from "@alisio/runtime/Providers"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { configuredFirst, loadSetup, registerProviders, runtimeLayer } from "./App.js"
import { CliError, ExitCode, usageError } from "./CliError.js"
import { writeRecord } from "./SessionRecords.js"

/** One line of `alisio models --json`. */
export const ModelListItem = Schema.Struct({
  ...ModelInfo.fields,
  /** The model runs use without `-m` (`defaultModel`). */
  default: Schema.Boolean
})

const providerFailure = (id: string) => (error: { readonly message: string }) =>
  new CliError({ message: `Could not list the models of ${id}: ${error.message}`, exitCode: ExitCode.failed })

/**
 * `alisio models`: each provider's models (the configured ones, then those of plugins), discovery
 * merged with the catalog; `*` the default. A provider that cannot list them is reported after
 * the others, and fails the command.
 */
export const listModels = (flags: { readonly json: boolean }) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({})
    const program = Effect.gen(function* () {
      yield* registerProviders(setup)
      const providers = yield* Providers.Providers
      const current = setup.config.defaultModel
      const byDefault =
        current === undefined
          ? undefined
          : yield* Effect.map(Effect.either(providers.resolve(current)), Either.getOrUndefined)
      let marked = false
      const failures: Array<CliError> = []
      for (const entry of configuredFirst(setup, yield* providers.list)) {
        const listed = yield* Effect.either(entry.service.models.pipe(Effect.mapError(providerFailure(entry.id))))
        if (listed._tag === "Left") {
          failures.push(listed.left)
          continue
        }
        for (const model of listed.right) {
          const isDefault = byDefault?.provider === entry.id && byDefault.model === model.id
          marked ||= isDefault
          if (flags.json) {
            writeRecord(ModelListItem, { ...model, provider: entry.id, default: isDefault })
          } else {
            const facts = [
              model.contextWindow === undefined ? undefined : `context ${model.contextWindow}`,
              model.maxOutputTokens === undefined ? undefined : `max output ${model.maxOutputTokens}`
            ].filter((f) => f !== undefined)
            process.stdout.write(
              `${isDefault ? "*" : " "} ${entry.id}/${terminalSafe(model.id)}${facts.length === 0 ? "" : `  (${facts.join(", ")})`}\n`
            )
          }
        }
      }
      const last = failures.pop()
      for (const failure of failures) process.stderr.write(`alisio: ${terminalSafe(failure.message)}\n`)
      if (last !== undefined) return yield* last
      if (flags.json) return
      if (current === undefined) {
        process.stderr.write("alisio: no default model; `alisio models use <provider/model>` sets one\n")
      } else if (!marked) {
        process.stderr.write(`alisio: the default model ${current} (defaultModel) is not among these\n`)
      }
    })
    yield* program.pipe(Effect.provide(runtimeLayer(setup, { approveAll: false })))
  })

/** The `defaultModel` a project file names, if it has one that parses. */
const projectDefault = (file: string): string | undefined => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
  return Either.match(Config.parse(text, file), {
    onLeft: () => undefined,
    onRight: ({ config }) => config.defaultModel
  })
}

/**
 * `alisio models use <provider/model>`: checks the model against its provider and makes it the
 * default of later runs, as `defaultModel` in the global config.yaml (the one place a default
 * lives; `alisio config` shows where each value comes from).
 */
export const useModel = (flags: { readonly model: string }) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({})
    const program = Effect.gen(function* () {
      yield* registerProviders(setup)
      const providers = yield* Providers.Providers
      const resolved = yield* providers
        .resolve(flags.model)
        .pipe(
          Effect.mapError((error) =>
            error._tag === "UnknownModelError"
              ? usageError(error.message)
              : new CliError({ message: `Could not list the models: ${error.message}`, exitCode: ExitCode.failed })
          )
        )
      const spec = `${resolved.provider}/${resolved.model}`
      const file = setup.paths.globalConfigFile
      yield* ConfigEdits.setDefaultModel(file, spec).pipe(Effect.mapError((error) => usageError(error.message)))
      process.stdout.write(`${spec} is the default model now (defaultModel in ${file})\n`)
      const projectFile = Paths.projectConfigFile(setup.cwd)
      const overriding = projectDefault(projectFile)
      if (overriding !== undefined && overriding !== spec) {
        process.stderr.write(
          `alisio: note: ${projectFile} sets defaultModel ${overriding}, which wins in this project when trusted (--trust-project)\n`
        )
      }
    })
    yield* program.pipe(Effect.provide(runtimeLayer(setup, { approveAll: false })))
  })
