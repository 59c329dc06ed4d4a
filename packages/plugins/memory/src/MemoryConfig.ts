// The plugin's settings, `builtinPlugins.memory` in the configuration.
import { closeMatches } from "@alisio/domain/CloseMatches"
import { PluginError } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

export const DEFAULT_INJECT_BUDGET_TOKENS = 800
export const DEFAULT_MAX_CONTENT_CHARS = 4000

const wholeNumber = (min: number, max: number) => ({
  schema: Schema.Int.pipe(Schema.between(min, max)),
  expected: `a whole number from ${min} to ${max}`
})
const injectBudgetTokens = wholeNumber(0, 100_000)
const maxContentChars = wholeNumber(100, 1_000_000)

export const MemoryConfig = Schema.Struct({
  /** How much of the system context the memories of a project may take at session start (~4 characters a token). */
  injectBudgetTokens: Schema.optionalWith(injectBudgetTokens.schema, { default: () => DEFAULT_INJECT_BUDGET_TOKENS }),
  /** Longer content is cut (the tool result says so). */
  maxContentChars: Schema.optionalWith(maxContentChars.schema, { default: () => DEFAULT_MAX_CONTENT_CHARS })
})
export type MemoryConfig = typeof MemoryConfig.Type

const expected: Record<keyof typeof MemoryConfig.fields, string> = {
  injectBudgetTokens: injectBudgetTokens.expected,
  maxContentChars: maxContentChars.expected
}

const decode = Schema.decodeUnknownEither(MemoryConfig, { onExcessProperty: "ignore" })

/** Where the person set a key: the configuration file, when the host can tell. */
export type ConfigSource = (path: ReadonlyArray<string>) => string | undefined

export interface ReadConfig {
  readonly config: MemoryConfig
  /** Unknown keys, one line each, naming the file and a close key when there is one. */
  readonly warnings: ReadonlyArray<string>
}

const describeValue = (value: unknown): string => {
  if (value === undefined || value === null) return "an empty value"
  if (Array.isArray(value)) return "a list"
  if (typeof value === "object") return "a mapping"
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/**
 * The settings, or a one-line error naming the file, the key and what it expects, as the rest of
 * the configuration's errors do: `<file>: builtinPlugins.memory.<key>: expected …, got …`.
 */
export const readConfig = (
  pluginId: string,
  raw: unknown,
  configSource: ConfigSource = () => undefined
): Effect.Effect<ReadConfig, PluginError> => {
  const settings = raw ?? {}
  const keyPath = (path: ReadonlyArray<string>) => ["builtinPlugins", pluginId, ...path].join(".")
  const inFile = (path: ReadonlyArray<string>, text: string) => {
    const file = configSource(path)
    return file === undefined ? `${text} (in config.yaml, global or project)` : `${file}: ${text}`
  }
  const decoded = decode(settings)
  if (Either.isLeft(decoded)) {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
    const path = (issue?.path ?? []).map(String)
    const field = path[0] as keyof typeof expected | undefined
    const wanted = field !== undefined && Object.hasOwn(expected, field) ? expected[field] : "a mapping of settings"
    const value = path.length === 0 ? settings : (settings as Record<string, unknown>)[path[0]!]
    return Effect.fail(
      new PluginError({
        pluginId,
        message: inFile(path, `${keyPath(path)}: expected ${wanted}, got ${describeValue(value)}`)
      })
    )
  }
  const known = Object.keys(MemoryConfig.fields)
  const unknown =
    typeof settings === "object" && !Array.isArray(settings)
      ? Object.keys(settings).filter((key) => !known.includes(key))
      : []
  const warnings = unknown.map((key) => {
    const [meant] = closeMatches(key, known, 1)
    const hint = meant === undefined ? "" : ` (did you mean ${meant}?)`
    return inFile([key], `unknown key ${keyPath([key])} is ignored${hint}`)
  })
  return Effect.succeed({ config: decoded.right, warnings })
}
