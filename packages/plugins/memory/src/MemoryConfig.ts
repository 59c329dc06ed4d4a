// The plugin's settings, `builtinPlugins.memory` in the configuration.
import { PluginError } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

export const DEFAULT_INJECT_BUDGET_TOKENS = 800
export const DEFAULT_MAX_CONTENT_CHARS = 4000

export const MemoryConfig = Schema.Struct({
  /** How much of the system context the memories of a project may take at session start (~4 characters a token). */
  injectBudgetTokens: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 100_000)), {
    default: () => DEFAULT_INJECT_BUDGET_TOKENS
  }),
  /** Longer content is cut (the tool result says so). */
  maxContentChars: Schema.optionalWith(Schema.Int.pipe(Schema.between(100, 1_000_000)), {
    default: () => DEFAULT_MAX_CONTENT_CHARS
  })
})
export type MemoryConfig = typeof MemoryConfig.Type

const decode = Schema.decodeUnknownEither(MemoryConfig, { onExcessProperty: "ignore" })

/** The settings, or a one-line error naming the key and what it expects. */
export const readConfig = (pluginId: string, raw: unknown): Effect.Effect<MemoryConfig, PluginError> => {
  const decoded = decode(raw ?? {})
  if (Either.isRight(decoded)) return Effect.succeed(decoded.right)
  const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
  const key = ["builtinPlugins", pluginId, ...(issue?.path ?? []).map(String)].join(".")
  return Effect.fail(
    new PluginError({ pluginId, message: `${key}: ${issue?.message ?? "invalid value"}. Fix it in config.yaml.` })
  )
}
