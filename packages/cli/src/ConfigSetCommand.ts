// `alisio config set|unset <key>`: one setting of config.yaml changed from the command line, the
// rest of the file (comments, order) kept as written. The key is checked against the Schema first
// and the edited file as a whole after: a wrong key or value changes nothing and says why.

import * as path from "node:path"
import { parseDuration } from "@alisio/domain/Durations"
import * as Config from "@alisio/runtime/Config"
import * as ConfigEdits from "@alisio/runtime/ConfigEdits"
import * as Paths from "@alisio/runtime/Paths"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { usageError } from "./CliError.js"
import { homeRelative } from "./SessionsCommand.js"
import { checkWorkspace } from "./WorkspaceFlag.js"

interface Target {
  readonly key: string
  /** The project's `.alisio/config.yaml` instead of the global file. */
  readonly project: boolean
  readonly cwd: Option.Option<string>
}

/** The file the change goes to, and the key as a path into it. */
const target = (flags: Target) =>
  Effect.gen(function* () {
    const problem = Config.unknownSetting(flags.key)
    if (problem !== undefined) return yield* usageError(problem)
    const cwd = path.resolve(Option.getOrElse(flags.cwd, () => process.cwd()))
    if (Option.isSome(flags.cwd)) yield* checkWorkspace(flags.cwd.value, cwd)
    const file = flags.project ? Paths.projectConfigFile(cwd) : (yield* Paths.make).globalConfigFile
    return { file, path: flags.key.split(".") }
  })

const isSecret = (key: string) => /(apiKey|token|secret|password)$/i.test(key)

// Secrets are written to the file (made private, 0600), never echoed.
const shown = (key: string, value: unknown) =>
  isSecret(key) ? "<redacted>" : typeof value === "string" ? value : JSON.stringify(value)

/** A `…Ms` setting takes milliseconds; `2m` or `30s` given for one is written as the milliseconds it is. */
const valueFor = (key: string, text: string): { readonly value: unknown; readonly as?: string } => {
  const value = ConfigEdits.valueFromText(text)
  if (!key.endsWith("Ms") || typeof value !== "string") return { value }
  const ms = parseDuration(value.trim())
  return ms === undefined ? { value } : { value: ms, as: value.trim() }
}

export const setSetting = (flags: Target & { readonly value: string }) =>
  Effect.gen(function* () {
    const { file, path: keyPath } = yield* target(flags)
    const { as, value } = valueFor(flags.key, flags.value)
    yield* ConfigEdits.setIn(file, keyPath, value, { secret: isSecret(flags.key) }).pipe(
      Effect.mapError((error) => usageError(error.message))
    )
    const given = as === undefined ? "" : ` (${as})`
    process.stderr.write(`alisio: ${flags.key} = ${shown(flags.key, value)}${given} in ${homeRelative(file)}\n`)
    if (flags.project) {
      process.stderr.write("alisio: the project's file applies with --trust-project\n")
    }
  })

export const unsetSetting = (flags: Target) =>
  Effect.gen(function* () {
    const { file, path: keyPath } = yield* target(flags)
    const removed = yield* ConfigEdits.deleteIn(file, keyPath).pipe(
      Effect.mapError((error) => usageError(error.message))
    )
    process.stderr.write(
      removed
        ? `alisio: ${flags.key} removed from ${homeRelative(file)}\n`
        : `alisio: ${flags.key} was not set in ${homeRelative(file)}\n`
    )
  })
