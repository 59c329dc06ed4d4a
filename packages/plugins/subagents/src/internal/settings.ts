// The plugin's settings at setup. Without any (the usual case) they are the defaults, known without
// building or running a Schema (issue 17); otherwise `SubagentsConfig.ts`, imported then, decodes
// them. A test keeps these defaults equal to the Schema's.
import type { PluginError } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import type { SubagentsConfig } from "../SubagentsConfig.js"

export const defaultSubagentsConfig: SubagentsConfig = {
  maxDepth: 3,
  maxConcurrentPerParent: 4,
  maxConcurrentPerRoot: 8,
  maxQueued: 16,
  maxTurns: 50,
  timeoutMs: 20 * 60_000,
  maxResultChars: 20_000,
  parallelWrites: "shared"
}

const isUnset = (raw: unknown) =>
  raw === undefined || raw === null || (typeof raw === "object" && !Array.isArray(raw) && Object.keys(raw).length === 0)

/** The settings, or a one-line error naming the key and what it expects. */
export const readSettings = (pluginId: string, raw: unknown): Effect.Effect<SubagentsConfig, PluginError> =>
  isUnset(raw)
    ? Effect.succeed(defaultSubagentsConfig)
    : Effect.flatMap(
        Effect.promise(() => import("../SubagentsConfig.js")),
        (module) => module.readConfig(pluginId, raw)
      )
