import * as Schema from "effect/Schema"

const TokenCount = Schema.NonNegativeInt

/** Token usage of one response or, summed, of a run. */
export const Usage = Schema.Struct({
  inputTokens: TokenCount,
  outputTokens: TokenCount,
  reasoningTokens: Schema.optional(TokenCount),
  cachedInputTokens: Schema.optional(TokenCount)
})
export type Usage = typeof Usage.Type

/** Usage with every count at zero. */
export const emptyUsage: Usage = { inputTokens: 0, outputTokens: 0 }

/** Adds two usages; optional counts stay absent unless either side has them. */
export const addUsage = (a: Usage, b: Usage): Usage => {
  const sum: { -readonly [K in keyof Usage]: Usage[K] } = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens
  }
  if (a.reasoningTokens !== undefined || b.reasoningTokens !== undefined) {
    sum.reasoningTokens = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0)
  }
  if (a.cachedInputTokens !== undefined || b.cachedInputTokens !== undefined) {
    sum.cachedInputTokens = (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0)
  }
  return sum
}
