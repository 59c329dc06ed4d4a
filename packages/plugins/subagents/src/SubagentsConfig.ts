// The plugin's settings, `builtinPlugins.subagents` in the configuration.
import { PluginError } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const Count = (min: number, max: number, fallback: number) =>
  Schema.optionalWith(Schema.Int.pipe(Schema.between(min, max)), { default: () => fallback })

export const SubagentsConfig = Schema.Struct({
  /** How deep delegation may go: a root's children are level 1. */
  maxDepth: Count(1, 10, 3),
  /** Subagents one session runs at once; more wait in the queue. */
  maxConcurrentPerParent: Count(1, 64, 4),
  /** Subagents a whole session tree runs at once. */
  maxConcurrentPerRoot: Count(1, 256, 8),
  /** Subagents waiting for a slot in one tree; beyond it `task` fails. */
  maxQueued: Count(0, 1024, 16),
  /** The turns a subagent may take (an agent's own `maxTurns` can only lower it). */
  maxTurns: Count(1, 10_000, 50),
  /** The active time a subagent may take (paused while a person is asked). */
  timeoutMs: Count(1_000, 24 * 3_600_000, 20 * 60_000),
  /** The longest answer returned to the parent; the rest is cut. */
  maxResultChars: Count(1_000, 1_000_000, 20_000),
  /**
   * Writing subagents: `shared` run in the workspace side by side, `worktree` each in a git
   * worktree of its own (as `isolation: worktree` asks for one agent), `serial` one at a time.
   */
  parallelWrites: Schema.optionalWith(Schema.Literal("shared", "worktree", "serial"), { default: () => "shared" })
})
export type SubagentsConfig = typeof SubagentsConfig.Type

const decode = Schema.decodeUnknownEither(SubagentsConfig, { onExcessProperty: "ignore" })

/** The settings, or a one-line error naming the key and what it expects. */
export const readConfig = (pluginId: string, raw: unknown): Effect.Effect<SubagentsConfig, PluginError> => {
  const decoded = decode(raw ?? {})
  if (Either.isRight(decoded)) return Effect.succeed(decoded.right)
  const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
  const key = ["builtinPlugins", pluginId, ...(issue?.path ?? []).map(String)].join(".")
  return Effect.fail(
    new PluginError({ pluginId, message: `${key}: ${issue?.message ?? "invalid value"}. Fix it in config.yaml.` })
  )
}
