import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { EventId, RunId, SessionId, ToolCallId } from "./Ids.js"
import { ProviderRetryReason } from "./LanguageModel.js"
import { ContextInfo, ContextWindowSource, OutputBudgetSource, TimeoutInfo, TruncationInfo } from "./Limits.js"
import { Message } from "./Message.js"
import { onFirstRead, schemaOnFirstRead } from "./OnFirstUse.js"
import { ToolEffect } from "./Tool.js"
import { Usage } from "./Usage.js"

/** The version of the event stream; stays 1 while changes are additive (EV-2). */
export const RUN_EVENT_SCHEMA_VERSION = 1 as const

/** How a tool call ended. */
export const ToolCallStatus = Schema.Literal("completed", "error", "denied", "cancelled")
export type ToolCallStatus = typeof ToolCallStatus.Type

/** How a run ended, as stored in `runs.status` and reported for child sessions. */
export const RunStatus = Schema.Literal(
  "queued",
  "running",
  "completed",
  "turns_exceeded",
  "failed",
  "cancelled",
  "interrupted"
)
export type RunStatus = typeof RunStatus.Type

/**
 * Why a run failed. `interrupted`: the process running it ended (killed, crashed, the machine
 * stopped) before the run did; the next start of Alisio stores this ending for it (ST-4).
 */
export const RunFailureCode = Schema.Literal(
  "timeout",
  "output_truncated",
  "provider_error",
  "context_exhausted",
  "internal",
  "interrupted"
)
export type RunFailureCode = typeof RunFailureCode.Type

/** Where a plugin failed (PL-6): loading it, one of its hooks, or a tool it registered. */
export const PluginFailureStage = Schema.Literal(
  "discover",
  "import",
  "setup",
  "tool",
  "observer",
  "context",
  "command",
  "extension",
  "compaction",
  "close"
)
export type PluginFailureStage = typeof PluginFailureStage.Type

/**
 * Why a request was sent again: the runner's resend of a silent request (LIM-4), or the
 * provider's own retry of a transient failure (429, 5xx, a lost connection) before any part.
 */
export const RetryReason = Schema.Literal("first_token_timeout", ...ProviderRetryReason.literals)
export type RetryReason = typeof RetryReason.Type

/**
 * Why older turns were compacted (CTX-1): the next request would pass the threshold of the
 * context window, or the provider refused a request as too long for it.
 */
export const CompactionReason = Schema.Literal("threshold", "context_length_exceeded")
export type CompactionReason = typeof CompactionReason.Type

/** What a human wait was about. */
export const ApprovalKind = Schema.Literal("tool", "external_directory")
export type ApprovalKind = typeof ApprovalKind.Type

const Count = Schema.NonNegativeInt
const Millis = Schema.NonNegativeInt
const Tokens = Schema.Int.pipe(Schema.positive())

// Every Schema of this module is made when first used: a run meets a few of the ~30 event types, and
// making them all (payloads, events, their union) cost every process that loads it ~1.2 MB and
// 5-10 ms (bench/README.md).
const payloads = {
  run_started: () =>
    Schema.Struct({
      provider: Schema.String,
      model: Schema.String,
      requestId: Schema.optional(Schema.String),
      parentSessionId: Schema.optional(SessionId),
      readOnly: Schema.Boolean
    }),
  message: () => Schema.Struct({ message: Message }),
  text_delta: () => Schema.Struct({ text: Schema.String }),
  reasoning_delta: () => Schema.Struct({ text: Schema.String }),
  tool_call_started: () =>
    Schema.Struct({
      toolCallId: ToolCallId,
      name: Schema.String,
      arguments: Schema.String,
      effect: ToolEffect
    }),
  tool_progress: () => Schema.Struct({ toolCallId: ToolCallId, text: Schema.String }),
  tool_call_completed: () =>
    Schema.Struct({
      toolCallId: ToolCallId,
      name: Schema.String,
      status: ToolCallStatus,
      result: Schema.String,
      /** The whole result's length, when `result` is only its head (the store and the model have it all). */
      resultChars: Schema.optional(Count),
      /** How long the call took, without the time its approvals waited for a person. */
      durationMs: Millis
    }),
  approval_requested: () =>
    Schema.Struct({
      approvalId: Schema.String,
      kind: ApprovalKind,
      toolCallId: Schema.optional(ToolCallId),
      tool: Schema.optional(Schema.String),
      effect: Schema.optional(ToolEffect),
      path: Schema.optional(Schema.String),
      summary: Schema.String,
      /** The path of the child session asking, e.g. "general › explore" (absent in a root run). */
      label: Schema.optional(Schema.String)
    }),
  approval_resolved: () =>
    Schema.Struct({
      approvalId: Schema.String,
      approved: Schema.Boolean,
      by: Schema.Literal("person", "policy"),
      /** The run stopped before an answer came: the request was withdrawn (`approved` is false). */
      cancelled: Schema.optional(Schema.Boolean)
    }),
  turn_completed: () =>
    Schema.Struct({
      turn: Schema.Int.pipe(Schema.positive()),
      durationMs: Millis,
      ttftMs: Schema.optional(Millis),
      usage: Schema.optional(Usage),
      finishReason: Schema.String
    }),
  request_retry: () =>
    Schema.Struct({
      attempt: Schema.Int.pipe(Schema.positive()),
      of: Count,
      reason: RetryReason,
      /** The HTTP status retried (429, 5xx), when there was one. */
      status: Schema.optional(Schema.Int),
      /**
       * `first_token_timeout`: the silence after which the request is sent again (at once);
       * otherwise the wait before it is sent again (backoff, or the server's `Retry-After`).
       */
      afterMs: Millis
    }),
  truncation_recovery: () =>
    Schema.Struct({
      attempt: Schema.Int.pipe(Schema.positive()),
      of: Count,
      reason: Schema.Literal("tool_call_cut", "empty_response"),
      maxOutputTokens: Tokens,
      effort: Schema.optional(Schema.String)
    }),
  response_truncated: () =>
    Schema.Struct({
      maxOutputTokens: Tokens,
      source: OutputBudgetSource,
      model: Schema.String
    }),
  compaction_started: () =>
    Schema.Struct({
      reason: CompactionReason,
      /** Estimated tokens of the request as it would have been sent. */
      tokens: Count,
      /** The context window and where it came from (`limits.maxContextTokens`, the model, the default). */
      contextWindow: Tokens,
      source: ContextWindowSource,
      /** The estimate past which older turns are compacted. */
      threshold: Count
    }),
  compaction_completed: () =>
    Schema.Struct({
      /** Estimated tokens of the request before and after. */
      tokensBefore: Count,
      tokensAfter: Count,
      /** Stored messages the summary now stands for (they stay stored, marked compacted). */
      messagesCompacted: Count,
      /** Of them, the ones compacted by this compaction. */
      newlyCompacted: Count,
      durationMs: Millis,
      /** Tokens the summary request used. */
      usage: Schema.optional(Usage)
    }),
  compaction_failed: () =>
    Schema.Struct({
      error: Schema.String,
      /** The run goes on with the uncompacted history, which still fits; otherwise it fails. */
      continued: Schema.Boolean,
      /** The run stopped while the summary was written. */
      cancelled: Schema.optional(Schema.Boolean)
    }),
  run_completed: () =>
    Schema.Struct({
      text: Schema.String,
      turns: Count,
      usage: Usage
    }),
  run_failed: () =>
    Schema.Struct({
      code: RunFailureCode,
      error: Schema.String,
      providerCode: Schema.optional(Schema.String),
      timeout: Schema.optional(TimeoutInfo),
      truncation: Schema.optional(TruncationInfo),
      context: Schema.optional(ContextInfo)
    }),
  run_cancelled: () => Schema.Struct({ reason: Schema.String }),
  turns_exceeded: () => Schema.Struct({ maxTurns: Schema.Int.pipe(Schema.positive()), turns: Count }),
  child_session_started: () =>
    Schema.Struct({
      childSessionId: SessionId,
      childRunId: RunId,
      title: Schema.optional(Schema.String),
      narrowed: Schema.optional(Schema.Array(Schema.String)),
      /** The child's path of labels, e.g. "general › explore" (a subagent's agent names). */
      label: Schema.optional(Schema.String)
    }),
  child_session_ended: () =>
    Schema.Struct({
      childSessionId: SessionId,
      childRunId: RunId,
      status: RunStatus
    }),
  decision_completed: () =>
    Schema.Struct({
      decisionId: Schema.String,
      pack: Schema.optional(Schema.String),
      provider: Schema.String,
      latencyMs: Millis,
      decisionCount: Count,
      rejectedCount: Count,
      confidenceMin: Schema.Number
    }),
  decision_fallback: () =>
    Schema.Struct({
      decisionId: Schema.String,
      pack: Schema.optional(Schema.String),
      provider: Schema.String,
      latencyMs: Millis,
      reason: Schema.String
    }),
  plugin_failed: () =>
    Schema.Struct({
      pluginId: Schema.String,
      stage: PluginFailureStage,
      message: Schema.String,
      tool: Schema.optional(Schema.String)
    }),
  /** An MCP server could not start, or its connection closed (MCP-1); the run goes on without its tools. */
  mcp_server_failed: () =>
    Schema.Struct({
      server: Schema.String,
      /** `start`: it never connected; `closed`: it was connected and went away. */
      stage: Schema.Literal("start", "closed"),
      message: Schema.String,
      /** True when the next call of one of its tools starts it again (once); its tools stay offered until then. */
      willRestart: Schema.optional(Schema.Boolean),
      /** The file its stderr and lifecycle go to. */
      log: Schema.optional(Schema.String)
    })
}

/** One payload Schema per event type: the `data` of the envelope. */
export const RunEventData = onFirstRead(payloads)

type DataSchemas = typeof RunEventData

/** Every event type the core emits. */
export type RunEventType = keyof DataSchemas

/** Event type → payload type (EV-5). */
export type RunEventDataMap = { readonly [K in RunEventType]: DataSchemas[K]["Type"] }

/** The types streamed to observers and never stored (EV-3). */
export type EphemeralRunEventType = "text_delta" | "reasoning_delta" | "tool_progress"
export const ephemeralRunEventTypes: ReadonlySet<string> = new Set<EphemeralRunEventType>([
  "text_delta",
  "reasoning_delta",
  "tool_progress"
])
export const isEphemeralType = (type: string): type is EphemeralRunEventType => ephemeralRunEventTypes.has(type)

/** The events that end a run: exactly one per run. */
export type TerminalRunEventType = "run_completed" | "run_failed" | "run_cancelled" | "turns_exceeded"
export const terminalRunEventTypes: ReadonlySet<string> = new Set<TerminalRunEventType>([
  "run_completed",
  "run_failed",
  "run_cancelled",
  "turns_exceeded"
])
export const isTerminalType = (type: string): type is TerminalRunEventType => terminalRunEventTypes.has(type)

export const runEventTypes = Object.keys(payloads) as ReadonlyArray<RunEventType>

/** The fields every event carries (EV-2). `time` is an ISO-8601 timestamp. */
export const RunEventEnvelope = {
  schemaVersion: Schema.Literal(RUN_EVENT_SCHEMA_VERSION),
  runId: RunId,
  seq: Schema.Int.pipe(Schema.positive()),
  eventId: Schema.optional(EventId),
  correlationId: Schema.optional(Schema.String),
  sessionId: SessionId,
  time: Schema.String
}

const eventSchema = <K extends RunEventType>(type: K) =>
  Schema.Struct({ ...RunEventEnvelope, type: Schema.Literal(type), data: RunEventData[type] })

type EventSchemas = { readonly [K in RunEventType]: ReturnType<typeof eventSchema<K>> }

/** One Schema per event type, keyed by type. */
export const RunEventSchemas: EventSchemas = onFirstRead(
  Object.fromEntries(runEventTypes.map((type) => [type, () => eventSchema(type)]))
) as unknown as EventSchemas

/** The envelope fields as a type. */
export type RunEventHeader = Schema.Struct.Type<typeof RunEventEnvelope>

/** An event of type K. */
export type RunEventOf<K extends RunEventType> = Schema.Simplify<
  RunEventHeader & { readonly type: K; readonly data: RunEventDataMap[K] }
>

/** The discriminated union of every known event (EV-5). */
export const KnownRunEvent = schemaOnFirstRead(() =>
  Schema.Union(...runEventTypes.map((type) => RunEventSchemas[type]))
) as unknown as Schema.Schema<
  { [K in RunEventType]: EventSchemas[K]["Type"] }[RunEventType],
  { [K in RunEventType]: EventSchemas[K]["Encoded"] }[RunEventType]
>
export type KnownRunEvent = typeof KnownRunEvent.Type

/** An event whose type this version does not know; consumers must ignore it. */
export const UnknownRunEvent = Schema.Struct({
  ...RunEventEnvelope,
  type: Schema.String,
  data: Schema.optional(Schema.Unknown)
})
export type UnknownRunEvent = typeof UnknownRunEvent.Type

/** A decoded line: a known event, or one to ignore. */
export type DecodedRunEvent =
  | { readonly _tag: "Known"; readonly event: KnownRunEvent }
  | { readonly _tag: "Unknown"; readonly event: UnknownRunEvent }

type AnyEventSchema = Schema.Schema<KnownRunEvent, unknown>

// A type's decoder and encoder are compiled when an event of that type is first met: a run meets a
// few of the types, and compiling them all cost every process that loads this module ~25 ms.
const knownTypes: ReadonlySet<string> = new Set(runEventTypes)
const decoders = new Map<string, (u: unknown) => Either.Either<KnownRunEvent, ParseResult.ParseError>>()
const decoderOf = (type: RunEventType) => {
  let decode = decoders.get(type)
  if (decode === undefined) {
    decode = Schema.decodeUnknownEither(RunEventSchemas[type] as unknown as AnyEventSchema)
    decoders.set(type, decode)
  }
  return decode
}
let decodeUnknownEvent: ((u: unknown) => Either.Either<UnknownRunEvent, ParseResult.ParseError>) | undefined

/**
 * Decodes one event as read from JSON. Extra fields are ignored; a type this version does not
 * know decodes as `Unknown` instead of failing; a known type with a bad payload fails.
 */
export const decodeRunEvent = (input: unknown): Either.Either<DecodedRunEvent, ParseResult.ParseError> => {
  const type = typeof input === "object" && input !== null ? (input as { type?: unknown }).type : undefined
  if (typeof type === "string" && knownTypes.has(type)) {
    return Either.map(decoderOf(type as RunEventType)(input), (event) => ({ _tag: "Known", event }))
  }
  decodeUnknownEvent ??= Schema.decodeUnknownEither(UnknownRunEvent)
  return Either.map(decodeUnknownEvent(input), (event) => ({ _tag: "Unknown", event }))
}

const encoders = new Map<string, (event: KnownRunEvent) => unknown>()

/** The JSON form of an event (what `alisio run --json` writes, one per line). */
export const encodeRunEvent = (event: KnownRunEvent): unknown => {
  let encode = encoders.get(event.type)
  if (encode === undefined) {
    encode = Schema.encodeSync(RunEventSchemas[event.type] as unknown as AnyEventSchema)
    encoders.set(event.type, encode)
  }
  return encode(event)
}
