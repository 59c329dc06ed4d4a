import type { ModelInfo, ReasoningEffort } from "@alisio/domain/LanguageModel"

/** What the catalog knows of a model; every field is optional. */
export interface CatalogEntry {
  readonly contextWindow?: number
  readonly maxOutputTokens?: number
  readonly reasoningEfforts?: ReadonlyArray<ReasoningEffort>
}

const lowToHigh: ReadonlyArray<ReasoningEffort> = ["low", "medium", "high"]
const minimalToHigh: ReadonlyArray<ReasoningEffort> = ["minimal", "low", "medium", "high"]

/** Well-known models. A key also matches its dated or suffixed variants (`gpt-4o-2024-08-06`). */
const wellKnown: ReadonlyArray<readonly [string, CatalogEntry]> = [
  ["gpt-4o", { contextWindow: 128_000, maxOutputTokens: 16_384 }],
  ["gpt-4o-mini", { contextWindow: 128_000, maxOutputTokens: 16_384 }],
  ["gpt-4.1", { contextWindow: 1_047_576, maxOutputTokens: 32_768 }],
  ["gpt-4.1-mini", { contextWindow: 1_047_576, maxOutputTokens: 32_768 }],
  ["gpt-4.1-nano", { contextWindow: 1_047_576, maxOutputTokens: 32_768 }],
  ["o1", { contextWindow: 200_000, maxOutputTokens: 100_000, reasoningEfforts: lowToHigh }],
  ["o3", { contextWindow: 200_000, maxOutputTokens: 100_000, reasoningEfforts: lowToHigh }],
  ["o3-mini", { contextWindow: 200_000, maxOutputTokens: 100_000, reasoningEfforts: lowToHigh }],
  ["o4-mini", { contextWindow: 200_000, maxOutputTokens: 100_000, reasoningEfforts: lowToHigh }],
  ["gpt-5", { contextWindow: 400_000, maxOutputTokens: 128_000, reasoningEfforts: minimalToHigh }],
  ["gpt-5-mini", { contextWindow: 400_000, maxOutputTokens: 128_000, reasoningEfforts: minimalToHigh }],
  ["gpt-5-nano", { contextWindow: 400_000, maxOutputTokens: 128_000, reasoningEfforts: minimalToHigh }],
  ["gpt-5.1", { contextWindow: 400_000, maxOutputTokens: 128_000, reasoningEfforts: lowToHigh }],
  ["deepseek-chat", { contextWindow: 128_000, maxOutputTokens: 8_192 }],
  ["deepseek-reasoner", { contextWindow: 128_000, maxOutputTokens: 65_536 }]
]

const matches = (key: string, name: string): boolean => name === key || name.startsWith(`${key}-`)

const wellKnownEntry = (id: string): CatalogEntry | undefined => {
  // Routers prefix the vendor: `openai/gpt-4o`.
  const name = id.slice(id.lastIndexOf("/") + 1)
  let best: readonly [string, CatalogEntry] | undefined
  for (const entry of wellKnown) {
    if (matches(entry[0], name) && (best === undefined || entry[0].length > best[0].length)) best = entry
  }
  return best?.[1]
}

const overrideEntry = (overrides: Readonly<Record<string, CatalogEntry>>, id: string): CatalogEntry | undefined =>
  Object.hasOwn(overrides, id) ? overrides[id] : undefined

/** The entry for `id`: configured fields win over the longest well-known key it matches. */
export const lookup = (overrides: Readonly<Record<string, CatalogEntry>>, id: string): CatalogEntry | undefined => {
  const override = overrideEntry(overrides, id)
  const known = wellKnownEntry(id)
  if (override === undefined) return known
  return known === undefined ? override : { ...known, ...override }
}

/** `ModelInfo` for `id`, with whatever the catalog knows. */
export const modelInfo = (
  provider: string,
  overrides: Readonly<Record<string, CatalogEntry>>,
  id: string
): ModelInfo => {
  const entry = lookup(overrides, id)
  return {
    id,
    provider,
    ...(entry?.contextWindow === undefined ? {} : { contextWindow: entry.contextWindow }),
    ...(entry?.maxOutputTokens === undefined ? {} : { maxOutputTokens: entry.maxOutputTokens }),
    ...(entry?.reasoningEfforts === undefined ? {} : { reasoningEfforts: entry.reasoningEfforts })
  }
}

/** The discovered models, then the configured ones the server did not list, each with its catalog data. */
export const merge = (
  provider: string,
  overrides: Readonly<Record<string, CatalogEntry>>,
  discovered: ReadonlyArray<string>
): ReadonlyArray<ModelInfo> => {
  const ids = [...new Set(discovered)]
  for (const id of Object.keys(overrides)) if (!ids.includes(id)) ids.push(id)
  return ids.map((id) => modelInfo(provider, overrides, id))
}

/**
 * Whether `effort` may be sent for `model`: when the configuration or the well-known table lists the
 * model's efforts, only those; a well-known model without efforts takes none; unknown models get it.
 */
export const acceptsEffort = (
  overrides: Readonly<Record<string, CatalogEntry>>,
  model: string,
  effort: ReasoningEffort
): boolean => {
  const configured = overrideEntry(overrides, model)?.reasoningEfforts
  if (configured !== undefined) return configured.includes(effort)
  const known = wellKnownEntry(model)
  if (known !== undefined) return known.reasoningEfforts?.includes(effort) ?? false
  return true
}
