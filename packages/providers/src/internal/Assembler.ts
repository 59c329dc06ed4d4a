import type { ToolCallId } from "@alisio/domain/Ids"
import type { FinishReason, ResponsePart } from "@alisio/domain/LanguageModel"
import type { Usage } from "@alisio/domain/Usage"
import type { Failure } from "./ErrorMapping.js"
import type { SseEvent } from "./Sse.js"

/** What one event did to the response: nothing final, completed it, or failed it. */
export type Step = undefined | "done" | Failure

/** Turns one API's stream events into response parts; state lives inside, one instance per request. */
export interface Assembler {
  /** Feeds one event; parts it produced are pushed to `out`. */
  readonly onEvent: (event: SseEvent, out: Array<ResponsePart>) => Step
  /** The body ended (EOF) before `onEvent` returned "done". */
  readonly onEnd: (out: Array<ResponsePart>) => "done" | Failure
  /**
   * Whether the response already has its finish, and only an end marker (Chat's `[DONE]`, the end
   * of the body) or trailing usage is still expected.
   */
  readonly finishing?: () => boolean
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null

/**
 * The largest token count taken from a server. The longest context windows are a few million
 * tokens; a count past this is garbage (1e300, 2^64), which the run's `Usage` (safe integers)
 * refused as an internal error, and which summed over a run's turns would pass the safe integers.
 */
const MAX_TOKEN_COUNT = 1_000_000_000

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= MAX_TOKEN_COUNT ? value : undefined

/** Token usage from Chat (`prompt_tokens`…) or Responses (`input_tokens`…) field names. */
export const usageOf = (value: unknown): Usage | undefined => {
  if (!isRecord(value)) return undefined
  const input = count(value.prompt_tokens) ?? count(value.input_tokens)
  const output = count(value.completion_tokens) ?? count(value.output_tokens)
  if (input === undefined && output === undefined) return undefined
  const outputDetails = value.completion_tokens_details ?? value.output_tokens_details
  const inputDetails = value.prompt_tokens_details ?? value.input_tokens_details
  const reasoning = isRecord(outputDetails) ? count(outputDetails.reasoning_tokens) : undefined
  // DeepSeek reports cache hits at the top level.
  const cached =
    (isRecord(inputDetails) ? count(inputDetails.cached_tokens) : undefined) ?? count(value.prompt_cache_hit_tokens)
  return {
    inputTokens: input ?? 0,
    outputTokens: output ?? 0,
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
    ...(cached === undefined ? {} : { cachedInputTokens: cached })
  }
}

/** One tool call being assembled. */
export interface CallState {
  /** The id the server gave, if any. */
  serverId: string | undefined
  name: string | undefined
  /** Set once `ToolCallStart` went out. */
  id: ToolCallId | undefined
  /** Argument text that arrived before the name did. */
  pending: string
  ended: boolean
}

export const newCall = (serverId: string | undefined): CallState => ({
  serverId,
  name: undefined,
  id: undefined,
  pending: "",
  ended: false
})

/** Emits `ToolCallStart` once the name is known, then any argument text held back until then. */
export const startCall = (call: CallState, makeId: () => string, out: Array<ResponsePart>): void => {
  if (call.id !== undefined || call.name === undefined) return
  const id = (call.serverId ?? makeId()) as ToolCallId
  call.id = id
  out.push({ _tag: "ToolCallStart", id, name: call.name })
  if (call.pending.length > 0) {
    out.push({ _tag: "ToolCallDelta", id, argumentsDelta: call.pending })
    call.pending = ""
  }
}

export const appendArguments = (call: CallState, text: string, out: Array<ResponsePart>): void => {
  if (text.length === 0) return
  if (call.id === undefined) call.pending += text
  else out.push({ _tag: "ToolCallDelta", id: call.id, argumentsDelta: text })
}

/**
 * Ends every call not yet ended. A call that got arguments but never a name is announced with an
 * empty name, so the runner reports it instead of losing it; one that got nothing is dropped.
 */
export const endCalls = (calls: ReadonlyArray<CallState>, makeId: () => string, out: Array<ResponsePart>): void => {
  for (const call of calls) {
    if (call.ended) continue
    if (call.id === undefined && call.name === undefined && call.pending.length === 0) {
      call.ended = true
      continue
    }
    if (call.id === undefined) {
      call.name ??= ""
      startCall(call, makeId, out)
    }
    call.ended = true
    out.push({ _tag: "ToolCallEnd", id: call.id! })
  }
}

export const finish = (reason: FinishReason, usage: Usage | undefined): ResponsePart =>
  usage === undefined ? { _tag: "Finish", reason } : { _tag: "Finish", reason, usage }
