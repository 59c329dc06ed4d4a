import { RunId, SessionId } from "@alisio/domain/Ids"
import { textOf } from "@alisio/domain/Message"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import { type KnownRunEvent, RunEventData, RunStatus } from "@alisio/domain/RunEvent"
import { addUsage, emptyUsage, Usage } from "@alisio/domain/Usage"
import * as Schema from "effect/Schema"
import { formatDuration } from "./Durations.js"
import type { Paint } from "./Terminal.js"

// How a run ended, gathered from its events (live, replayed or followed alike): the one JSON
// object of `alisio run --json --final`, the text of `--output-last-message`, and the last line
// a person sees on a terminal.

const Millis = Schema.NonNegativeInt

/** The outcome of one run as `alisio run --json --final` prints it (for scripts). */
export const RunResult = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  status: RunStatus,
  sessionId: SessionId,
  runId: RunId,
  /** The final answer; for a run that did not complete, the text of its last assistant message. */
  text: Schema.String,
  turns: Schema.NonNegativeInt,
  usage: Usage,
  /** How the model ended its last turn: `stop`, `tool_calls`, `length`, `content_filter`, `other`. */
  finishReason: Schema.optional(Schema.String),
  /** Why the run did not complete, as a sentence. */
  error: Schema.optional(Schema.String),
  /** The `run_failed` payload: code, provider code, timeout or truncation details. */
  failure: Schema.optional(RunEventData.run_failed),
  /** From the run's first event to its last. */
  durationMs: Millis,
  /** Spent in model requests (the turns' durations). */
  modelMs: Millis,
  /** Spent in tool calls, summed over calls (they may overlap). */
  toolMs: Millis
})
export type RunResult = typeof RunResult.Type

export const encodeRunResult = onFirstCall(() => Schema.encodeSync(RunResult))

/** The length of a short session id, as `alisio sessions list` prints it and `-s` accepts it. */
export const SHORT_ID_LENGTH = 8

export const shortId = (id: string): string => id.slice(0, SHORT_ID_LENGTH)

/**
 * The status a terminal event ends its run with, as the run's row says it; `undefined` for any
 * other event. A run whose process died is stored ended by `run_failed` with code `interrupted`.
 */
export const statusOfEnding = (event: KnownRunEvent): RunStatus | undefined => {
  switch (event.type) {
    case "run_completed":
      return "completed"
    case "run_failed":
      return event.data.code === "interrupted" ? "interrupted" : "failed"
    case "run_cancelled":
      return "cancelled"
    case "turns_exceeded":
      return "turns_exceeded"
    default:
      return undefined
  }
}

/** Gathers a run's outcome from its events. */
export interface Outcome {
  readonly observe: (event: KnownRunEvent) => void
  /** The outcome so far; `undefined` before any event. `status` stands in when no terminal event came. */
  readonly result: (status?: RunStatus) => RunResult | undefined
}

const timeOf = (event: KnownRunEvent): number | undefined => {
  const ms = Date.parse(event.time)
  return Number.isNaN(ms) ? undefined : ms
}

export const makeOutcome = (): Outcome => {
  let ids: { readonly sessionId: SessionId; readonly runId: RunId } | undefined
  let status: RunStatus | undefined
  let finalText: string | undefined
  let lastAssistantText = ""
  let turns = 0
  let finishReason: string | undefined
  let turnUsage: Usage = emptyUsage
  let endUsage: Usage | undefined
  let endTurns: number | undefined
  let error: string | undefined
  let failure: RunResult["failure"]
  let firstAt: number | undefined
  let lastAt: number | undefined
  let modelMs = 0
  let toolMs = 0
  // A stream's deltas mostly share their time string: it is parsed once.
  let parsedTime: string | undefined
  let parsedAt: number | undefined
  const observe = (event: KnownRunEvent): void => {
    ids ??= { sessionId: event.sessionId, runId: event.runId }
    if (event.time !== parsedTime) {
      parsedTime = event.time
      parsedAt = timeOf(event)
    }
    const at = parsedAt
    if (at !== undefined) {
      firstAt ??= at
      lastAt = at
    }
    status = statusOfEnding(event) ?? status
    switch (event.type) {
      case "message":
        if (event.data.message.role === "assistant") {
          const text = textOf(event.data.message.content)
          if (text !== "") lastAssistantText = text
        }
        return
      case "turn_completed":
        turns += 1
        finishReason = event.data.finishReason
        modelMs += event.data.durationMs
        if (event.data.usage !== undefined) turnUsage = addUsage(turnUsage, event.data.usage)
        return
      case "tool_call_completed":
        toolMs += event.data.durationMs
        return
      case "run_completed":
        finalText = event.data.text
        endTurns = event.data.turns
        endUsage = event.data.usage
        return
      case "run_failed":
        error = event.data.error
        failure = event.data
        return
      case "run_cancelled":
        error = event.data.reason
        return
      case "turns_exceeded":
        endTurns = event.data.turns
        error = `The run reached its limit of ${event.data.maxTurns} turns.`
        return
      default:
        return
    }
  }
  const result = (fallback?: RunStatus): RunResult | undefined => {
    if (ids === undefined) return undefined
    return {
      schemaVersion: 1,
      status: status ?? fallback ?? "interrupted",
      sessionId: ids.sessionId,
      runId: ids.runId,
      text: finalText ?? lastAssistantText,
      turns: endTurns ?? turns,
      usage: endUsage ?? turnUsage,
      ...(finishReason === undefined ? {} : { finishReason }),
      ...(error === undefined ? {} : { error }),
      ...(failure === undefined ? {} : { failure }),
      durationMs: firstAt === undefined || lastAt === undefined ? 0 : Math.max(0, lastAt - firstAt),
      modelMs,
      toolMs
    }
  }
  return { observe, result }
}

const statusWords: Record<RunStatus, string> = {
  queued: "queued",
  running: "running",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  interrupted: "interrupted",
  turns_exceeded: "stopped at the turn limit"
}

const count = (n: number) => n.toLocaleString("en-US")

/**
 * The last line of a run on a terminal: status, turns, tokens in/out, time, and the command that
 * goes on in the same session.
 */
export const summaryLine = (result: RunResult, p: Paint): string => {
  const mark =
    result.status === "completed"
      ? p.green("✓")
      : result.status === "failed" || result.status === "turns_exceeded"
        ? p.red("✗")
        : p.yellow("■")
  const parts = [
    `${mark} ${statusWords[result.status]}`,
    `${result.turns} ${result.turns === 1 ? "turn" : "turns"}`,
    `${count(result.usage.inputTokens)} in / ${count(result.usage.outputTokens)} out tokens`,
    formatDuration(result.durationMs)
  ]
  return `${parts.join(" · ")} · ${p.dim("go on with")} alisio run -s ${shortId(result.sessionId)} "…"`
}
