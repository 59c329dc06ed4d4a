import * as Schema from "effect/Schema"

const Millis = Schema.Int.pipe(Schema.positive())

/** The smallest context window Alisio accepts: below it a request cannot hold a summary and a turn. */
export const MIN_CONTEXT_TOKENS = 1_024
const Count = Schema.NonNegativeInt

/**
 * Per-run limits. Every field is optional; `resolveLimits` fills the documented defaults.
 * - `maxTurns` (default 100): model requests that may be answered with tool calls (LIM-8).
 * - `timeoutMs` (default none): active time of the run; paused while a person is awaited (LIM-1).
 * - `firstTokenTimeoutMs` (default 120 000): silence allowed before a request's first part (LIM-4).
 * - `firstTokenRetries` (default 1): resends of a request that stayed silent (LIM-4).
 * - `streamIdleTimeoutMs` (default 120 000): silence allowed between parts once a stream started.
 * - `maxOutputTokens` (default: model catalog value capped at 65 536, else 16 384) (LIM-5).
 * - `truncationRecoveries` (default 2): re-requests after an output-budget cut (LIM-6).
 * - `toolConcurrency` (default 4): tool calls of one response run at once.
 * - `maxContextTokens` (default: the model catalog's `contextWindow`, else 128 000): the context
 *   window requests are kept within; older turns are compacted before a request would pass it (CTX-1).
 */
export const Limits = Schema.Struct({
  maxTurns: Schema.optional(Schema.Int.pipe(Schema.positive())),
  timeoutMs: Schema.optional(Millis),
  firstTokenTimeoutMs: Schema.optional(Millis),
  firstTokenRetries: Schema.optional(Count),
  streamIdleTimeoutMs: Schema.optional(Millis),
  maxOutputTokens: Schema.optional(Schema.Int.pipe(Schema.positive())),
  truncationRecoveries: Schema.optional(Count),
  toolConcurrency: Schema.optional(Schema.Int.pipe(Schema.positive())),
  maxContextTokens: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(MIN_CONTEXT_TOKENS)))
})
export type Limits = typeof Limits.Type

/** Limits with every default applied; `timeoutMs`, `maxOutputTokens` and `maxContextTokens` stay optional. */
export interface ResolvedLimits {
  readonly maxTurns: number
  readonly timeoutMs?: number
  readonly firstTokenTimeoutMs: number
  readonly firstTokenRetries: number
  readonly streamIdleTimeoutMs: number
  readonly maxOutputTokens?: number
  readonly truncationRecoveries: number
  readonly toolConcurrency: number
  readonly maxContextTokens?: number
}

/** The documented defaults of `Limits`. */
export const defaultLimits = {
  maxTurns: 100,
  firstTokenTimeoutMs: 120_000,
  firstTokenRetries: 1,
  streamIdleTimeoutMs: 120_000,
  truncationRecoveries: 2,
  toolConcurrency: 4
} as const satisfies ResolvedLimits

/**
 * The tool calls of one model response that run (TL-4). Past it, calls are not run: the first one
 * past the bound is answered with one result saying how many were left out and why, and the rest
 * are dropped, so a broken or hostile server cannot make a run execute, journal and store
 * thousands of calls from one answer. No real model asks for more in one response.
 */
export const MAX_TOOL_CALLS_PER_RESPONSE = 64

/** The output budget used when neither the user nor the model catalog gives one (LIM-5). */
export const DEFAULT_OUTPUT_BUDGET = 16_384
/** The highest catalog `maxOutputTokens` used without the user asking for more (LIM-5). */
export const MODEL_OUTPUT_CAP = 65_536

/** Merges layers of limits, later ones winning, over the defaults. */
export const resolveLimits = (...layers: ReadonlyArray<Limits | undefined>): ResolvedLimits => {
  const merged: Record<string, number> = { ...defaultLimits }
  for (const layer of layers) {
    if (layer === undefined) continue
    for (const [key, value] of Object.entries(layer)) {
      if (value !== undefined) merged[key] = value
    }
  }
  return merged as unknown as ResolvedLimits
}

/** Where an effective output budget came from. */
export const OutputBudgetSource = Schema.Literal("user", "model", "default")
export type OutputBudgetSource = typeof OutputBudgetSource.Type

/** The output-token budget of one request and its source (LIM-5). */
export const OutputBudget = Schema.Struct({
  maxOutputTokens: Schema.Int.pipe(Schema.positive()),
  source: OutputBudgetSource
})
export type OutputBudget = typeof OutputBudget.Type

/** Resolves a request's output budget: explicit > catalog (capped at 65 536) > 16 384. */
export const resolveOutputBudget = (explicit: number | undefined, catalog: number | undefined): OutputBudget =>
  explicit !== undefined
    ? { maxOutputTokens: explicit, source: "user" }
    : catalog !== undefined
      ? { maxOutputTokens: Math.min(catalog, MODEL_OUTPUT_CAP), source: "model" }
      : { maxOutputTokens: DEFAULT_OUTPUT_BUDGET, source: "default" }

/** The context window used when neither the user nor the model catalog gives one (CTX-1). */
export const DEFAULT_CONTEXT_WINDOW = 128_000

/**
 * Where an effective context window came from: `limits.maxContextTokens`, the model catalog, the
 * default, or the provider (a refusal that named the model's window, CTX-1).
 */
export const ContextWindowSource = Schema.Literal("user", "model", "default", "provider")
export type ContextWindowSource = typeof ContextWindowSource.Type

/** The context window requests are kept within, and its source (CTX-1). */
export interface ContextWindow {
  readonly tokens: number
  readonly source: ContextWindowSource
}

/** Resolves the context window: explicit `maxContextTokens` > catalog `contextWindow` > 128 000. */
export const resolveContextWindow = (explicit: number | undefined, catalog: number | undefined): ContextWindow =>
  explicit !== undefined
    ? { tokens: explicit, source: "user" }
    : catalog !== undefined
      ? { tokens: catalog, source: "model" }
      : { tokens: DEFAULT_CONTEXT_WINDOW, source: "default" }

/** `window`, or the smaller one a provider named in an earlier refusal (kept between runs). */
export const withLearnedWindow = (window: ContextWindow, learned: number | undefined): ContextWindow =>
  learned !== undefined && learned < window.tokens ? { tokens: learned, source: "provider" } : window

/** The `context` object of a `run_failed` event with `code: "context_exhausted"` (CTX-1). */
export const ContextInfo = Schema.Struct({
  /** The estimated tokens of the request that could not be sent. */
  tokens: Schema.NonNegativeInt,
  contextWindow: Schema.Int.pipe(Schema.positive()),
  source: ContextWindowSource,
  model: Schema.String
})
export type ContextInfo = typeof ContextInfo.Type

/** Which limit stopped a run. */
export const TimeoutKind = Schema.Literal("run", "first_token", "stream_idle", "tool")
export type TimeoutKind = typeof TimeoutKind.Type

/** What the run was doing when the limit struck. */
export const TimeoutStage = Schema.Literal("model_request", "first_token", "streaming", "tool")
export type TimeoutStage = typeof TimeoutStage.Type

/** The `timeout` object of a `run_failed` event with `code: "timeout"` (LIM-3). */
export const TimeoutInfo = Schema.Struct({
  kind: TimeoutKind,
  ms: Millis,
  model: Schema.String,
  provider: Schema.String,
  stage: TimeoutStage,
  tool: Schema.optional(Schema.String),
  firstRequest: Schema.Boolean,
  attempts: Count
})
export type TimeoutInfo = typeof TimeoutInfo.Type

/** The `truncation` object of a `run_failed` event with `code: "output_truncated"` (LIM-6). */
export const TruncationInfo = Schema.Struct({
  attempts: Count,
  maxOutputTokens: Schema.Int.pipe(Schema.positive()),
  source: OutputBudgetSource,
  model: Schema.String
})
export type TruncationInfo = typeof TruncationInfo.Type
