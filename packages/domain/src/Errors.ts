import * as Schema from "effect/Schema"
import { ContextInfo, TimeoutInfo, TruncationInfo } from "./Limits.js"

/** A provider stopped because the output budget ran out (LIM-6). */
export class OutputTruncatedError extends Schema.TaggedError<OutputTruncatedError>()("OutputTruncatedError", {
  message: Schema.String,
  maxOutputTokens: Schema.optional(Schema.Number)
}) {}

/** Why a provider request failed. */
export const ProviderErrorCode = Schema.Literal(
  "auth",
  "rate_limited",
  "server",
  "network",
  "bad_request",
  "output_truncated",
  "invalid_response",
  /** The request did not fit the model's context window (CTX-1): compacting may help. */
  "context_length_exceeded"
)
export type ProviderErrorCode = typeof ProviderErrorCode.Type

/** A provider request failed; `message` keeps the server's words where there were any. */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  code: ProviderErrorCode,
  message: Schema.String,
  provider: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Number),
  retryAfterMs: Schema.optional(Schema.Number),
  /** With `context_length_exceeded`: the context window the server named, when it named one. */
  contextWindow: Schema.optional(Schema.Number)
}) {}

/** Whether a provider failure may succeed when the same request is sent again. */
export const isTransientProviderError = (error: ProviderError): boolean =>
  error.code === "rate_limited" || error.code === "server" || error.code === "network"

/** A run stopped by one of its time limits (LIM-3). */
export class RunTimeoutError extends Schema.TaggedError<RunTimeoutError>()("RunTimeoutError", {
  message: Schema.String,
  timeout: TimeoutInfo
}) {}

/** A run whose truncation recoveries ran out (LIM-6). */
export class OutputBudgetExhaustedError extends Schema.TaggedError<OutputBudgetExhaustedError>()(
  "OutputBudgetExhaustedError",
  {
    message: Schema.String,
    truncation: TruncationInfo
  }
) {}

/** A run whose requests no longer fit the model's context window, even compacted (CTX-1). */
export class ContextExhaustedError extends Schema.TaggedError<ContextExhaustedError>()("ContextExhaustedError", {
  message: Schema.String,
  context: ContextInfo,
  /** The provider's code when the provider refused the request (`context_length_exceeded`). */
  providerCode: Schema.optional(Schema.String)
}) {}

/**
 * A prompt that alone cannot fit the model's known context window beside the system prompt, the
 * tools and the answer: refused before anything is stored (CTX-1, CLI-1). `context.tokens` is
 * the prompt's estimate.
 */
export class PromptTooLargeError extends Schema.TaggedError<PromptTooLargeError>()("PromptTooLargeError", {
  message: Schema.String,
  context: ContextInfo,
  /** The tokens left for a prompt once the system prompt, the tools and the answer's reserve are counted. */
  room: Schema.NonNegativeInt
}) {}

/** No session with that id exists. */
export class SessionNotFoundError extends Schema.TaggedError<SessionNotFoundError>()("SessionNotFoundError", {
  sessionId: Schema.String,
  message: Schema.String
}) {}

/** Another live process is writing to the session. */
export class SessionLockedError extends Schema.TaggedError<SessionLockedError>()("SessionLockedError", {
  sessionId: Schema.String,
  holderPid: Schema.Number,
  holderHost: Schema.optional(Schema.String),
  message: Schema.String
}) {}

/** The session database or blob folder could not be used. */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  reason: Schema.Literal(
    "not_a_database",
    "newer_version",
    "read_only",
    "disk_full",
    "corrupt",
    "not_found",
    "busy",
    "io"
  ),
  message: Schema.String,
  path: Schema.optional(Schema.String)
}) {}

/** Attachment bytes could not be stored, or did not come back intact (ST-5). */
export class BlobError extends Schema.TaggedError<BlobError>()("BlobError", {
  reason: Schema.Literal("bad_hash", "bad_media_type", "not_found", "altered", "read_only", "disk_full", "io"),
  message: Schema.String,
  hash: Schema.optional(Schema.String),
  path: Schema.optional(Schema.String)
}) {}

/** A tool call could not run or failed; the model sees `message` as the tool's result. */
export class ToolError extends Schema.TaggedError<ToolError>()("ToolError", {
  message: Schema.String
}) {}

/** The configuration is invalid; `message` names the file, the key path and what was expected. */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  message: Schema.String,
  file: Schema.optional(Schema.String),
  path: Schema.optional(Schema.String),
  line: Schema.optional(Schema.Number)
}) {}

/** A provider or model name that is not registered; `message` lists what is available. */
export class UnknownModelError extends Schema.TaggedError<UnknownModelError>()("UnknownModelError", {
  message: Schema.String,
  available: Schema.Array(Schema.String)
}) {}
