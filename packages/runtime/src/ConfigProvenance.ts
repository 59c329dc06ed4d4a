// Where each setting of the effective configuration comes from (CFG-1, `alisio config`): the
// layers merge as `Config.mergeConfigs` merges them, and each value is credited to the layer that
// set it last — or, for the plugin list, which adds up, to the first layer that named the plugin.

import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { type ConfigLayer, formatPath, mergeConfigs, SourceKind } from "./Config.js"
import { ConfigFile } from "./ConfigSchema.js"

/** One effective setting, its value as JSON (secrets redacted) and where it came from. */
export const Setting = Schema.Struct({
  /** `limits.maxTurns`, `providers.openai.baseURL`, `plugins[0]`. */
  path: Schema.String,
  value: Schema.Unknown,
  source: SourceKind,
  /** The file, flag or environment variable. */
  detail: Schema.optionalWith(Schema.String, { exact: true })
})
export type Setting = typeof Setting.Type

const REDACTED = "<redacted>"

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** The value as JSON, with every secret replaced. */
const shown = (value: unknown): unknown => {
  if (Redacted.isRedacted(value)) return REDACTED
  if (Array.isArray(value)) return value.map(shown)
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shown(item)]))
  return value
}

type Path = ReadonlyArray<PropertyKey>

/** The settings a configuration holds, in its own order: a value is a leaf unless it is a plain mapping. */
const leaves = (config: unknown, path: Path = []): ReadonlyArray<readonly [Path, unknown]> => {
  // A plugin list adds up across layers and an MCP server is replaced whole: those are the units.
  if (path.length === 1 && path[0] === "plugins" && Array.isArray(config)) {
    return config.map((entry, index) => [[...path, index], entry] as const)
  }
  if (path.length === 2 && path[0] === "mcpServers") return [[path, config]]
  if (!isPlainObject(config) || (Object.keys(config).length === 0 && path.length > 0)) return [[path, config]]
  return Object.entries(config).flatMap(([key, value]) => (value === undefined ? [] : leaves(value, [...path, key])))
}

const valueAt = (config: unknown, path: Path): unknown => {
  let value = config
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return value
}

const pluginSource = (entry: unknown) =>
  typeof entry === "string" ? entry : isPlainObject(entry) ? String(entry.source) : undefined

const creditedLayer = (layers: ReadonlyArray<ConfigLayer>, path: Path, value: unknown): ConfigLayer | undefined => {
  if (path[0] === "plugins" && path.length === 2) {
    const source = pluginSource(value)
    return layers.find((layer) => (layer.config.plugins ?? []).some((entry) => pluginSource(entry) === source))
  }
  return [...layers].reverse().find((layer) => valueAt(layer.config, path) !== undefined)
}

// Settings are listed in the order the file format declares its keys, whatever layer set them first.
const keyOrder = Object.keys(ConfigFile.fields)
const rank = (path: Path) => {
  const index = keyOrder.indexOf(String(path[0]))
  return index === -1 ? keyOrder.length : index
}

/**
 * The effective configuration of `layers` (weakest first: defaults, global file, project file,
 * environment, flags) as settings, each with the layer that gave it its value.
 */
export const explain = (layers: ReadonlyArray<ConfigLayer>): ReadonlyArray<Setting> => {
  const effective: ConfigFile = mergeConfigs(...layers.map((layer) => layer.config))
  const ordered = [...leaves(effective)].sort(([a], [b]) => rank(a) - rank(b))
  return ordered.flatMap(([path, value]) => {
    const layer = creditedLayer(layers, path, value)
    if (layer === undefined) return []
    return [
      {
        path: formatPath(path),
        value: shown(value),
        source: layer.kind,
        ...(layer.detail === undefined ? {} : { detail: layer.detail })
      }
    ]
  })
}
