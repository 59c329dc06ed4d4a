import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type { OutputTruncatedError, ProviderError } from "./Errors.js"
import { ToolCallId } from "./Ids.js"
import type { Message } from "./Message.js"
import type { ToolSpec } from "./Tool.js"
import { Usage } from "./Usage.js"

/** Reasoning effort levels a model may accept. */
export const ReasoningEffort = Schema.Literal("minimal", "low", "medium", "high")
export type ReasoningEffort = typeof ReasoningEffort.Type

/** What the runner knows of a model (discovery merged with the catalog). */
export const ModelInfo = Schema.Struct({
  id: Schema.String,
  provider: Schema.String,
  contextWindow: Schema.optional(Schema.Int.pipe(Schema.positive())),
  maxOutputTokens: Schema.optional(Schema.Int.pipe(Schema.positive())),
  reasoningEfforts: Schema.optional(Schema.Array(ReasoningEffort))
})
export type ModelInfo = typeof ModelInfo.Type

/** One request to a model. */
export interface ModelRequest {
  readonly model: string
  readonly system?: string
  readonly messages: ReadonlyArray<Message>
  readonly tools: ReadonlyArray<ToolSpec>
  readonly maxOutputTokens: number
  readonly effort?: ReasoningEffort
}

/** Why a response ended, mapped from each server's words. */
export const FinishReason = Schema.Literal("stop", "tool_calls", "length", "content_filter", "other")
export type FinishReason = typeof FinishReason.Type

/** Why a provider sends a request again by itself: a transient failure before any part (PRV-2). */
export const ProviderRetryReason = Schema.Literal("rate_limited", "server_error", "network")
export type ProviderRetryReason = typeof ProviderRetryReason.Type

/**
 * The provider failed transiently before anything arrived and sends the request again after
 * `afterMs` (its backoff, or the server's `Retry-After`): retry `attempt` of at most `of`. Neither
 * content nor progress; a provider reports it only before any other part of the response.
 */
export const Retrying = Schema.TaggedStruct("Retrying", {
  reason: ProviderRetryReason,
  /** The HTTP status retried (429, 5xx), when there was one. */
  status: Schema.optional(Schema.Int),
  afterMs: Schema.NonNegativeInt,
  attempt: Schema.Int.pipe(Schema.positive()),
  of: Schema.NonNegativeInt
})
export type Retrying = typeof Retrying.Type

/**
 * The pieces a provider streams back. Tool calls are announced, fed argument fragments, then
 * ended; `Retrying` parts may come first, before anything else.
 */
export const ResponsePart = Schema.Union(
  Schema.TaggedStruct("TextDelta", { text: Schema.String }),
  Schema.TaggedStruct("ReasoningDelta", { text: Schema.String }),
  Schema.TaggedStruct("ToolCallStart", { id: ToolCallId, name: Schema.String }),
  Schema.TaggedStruct("ToolCallDelta", { id: ToolCallId, argumentsDelta: Schema.String }),
  Schema.TaggedStruct("ToolCallEnd", { id: ToolCallId }),
  Schema.TaggedStruct("Finish", { reason: FinishReason, usage: Schema.optional(Usage) }),
  Retrying
)
export type ResponsePart = typeof ResponsePart.Type

/** The errors a model stream can end with. */
export type ModelError = ProviderError | OutputTruncatedError

/** A language model provider: a request in, a stream of response parts out. */
export interface LanguageModelService {
  /** The provider id, e.g. `openai`. */
  readonly provider: string
  readonly stream: (request: ModelRequest) => Stream.Stream<ResponsePart, ModelError>
  /** The models the provider serves, discovery merged with its catalog. */
  readonly models: Effect.Effect<ReadonlyArray<ModelInfo>, ProviderError>
  /** Where the context windows its refusals named are kept between runs; absent: not kept. */
  readonly learnedWindows?: LearnedWindows
}

/**
 * The context window a provider named when it refused a request as too long (CTX-1), kept so the
 * next run starts within it instead of being refused once more. Neither part fails.
 */
export interface LearnedWindows {
  readonly read: (model: string) => Effect.Effect<number | undefined>
  readonly write: (model: string, tokens: number) => Effect.Effect<void>
}

export class LanguageModel extends Context.Tag("@alisio/domain/LanguageModel")<LanguageModel, LanguageModelService>() {}
