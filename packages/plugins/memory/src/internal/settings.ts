// The plugin's settings at setup. Without any (the usual case) they are the defaults, known without
// building or running a Schema (issue 17); otherwise `MemoryConfig.ts`, imported then, decodes them.
// A test keeps these defaults equal to the Schema's.
import type { PluginError } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import type { ConfigSource, MemoryConfig, ReadConfig } from "../MemoryConfig.js"

export const defaultMemoryConfig: MemoryConfig = { injectBudgetTokens: 800, maxContentChars: 4000 }

const isUnset = (raw: unknown) =>
  raw === undefined || raw === null || (typeof raw === "object" && !Array.isArray(raw) && Object.keys(raw).length === 0)

/** The settings and warnings of unknown keys, or a one-line error naming the file, the key and what it expects. */
export const readSettings = (
  pluginId: string,
  raw: unknown,
  configSource?: ConfigSource | undefined
): Effect.Effect<ReadConfig, PluginError> =>
  isUnset(raw)
    ? Effect.succeed({ config: defaultMemoryConfig, warnings: [] })
    : Effect.flatMap(
        Effect.promise(() => import("../MemoryConfig.js")),
        (module) => module.readConfig(pluginId, raw, configSource)
      )
