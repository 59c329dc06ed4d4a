import type { ToolCallPart } from "@alisio/domain/Message"

/** A tool call as assembled from a stream; `ended` when the provider closed it. */
export interface AssembledCall {
  readonly id: ToolCallPart["id"]
  readonly name: string
  readonly arguments: string
  readonly ended: boolean
}

/**
 * Whether the arguments of a call in a cut response are whole: one complete JSON object. Empty
 * arguments are not (a call cut right after its name would otherwise run as `{}`), nor is a bare
 * number or string, which may itself be a cut prefix (`12` of `123`).
 */
export const isWholeArguments = (text: string): boolean => {
  const start = text.trimStart()
  if (start[0] !== "{") return false
  try {
    const value: unknown = JSON.parse(start)
    return typeof value === "object" && value !== null && !Array.isArray(value)
  } catch {
    return false
  }
}

/** How a finished response is to be handled (LIM-6, LIM-7). */
export type Classification =
  | { readonly _tag: "Complete" }
  | { readonly _tag: "Cut"; readonly reason: "tool_call_cut" | "empty_response" }
  | { readonly _tag: "UsefulText" }

export interface Classified {
  readonly classification: Classification
  /** The calls that may run. */
  readonly complete: ReadonlyArray<AssembledCall>
}

/**
 * Classifies a response by its finish reason, text and calls. At `length`: any call whose
 * arguments are not whole is cut; no text and no call is empty; text alone is useful;
 * complete calls just run.
 */
export const classify = (finish: string, text: string, calls: ReadonlyArray<AssembledCall>): Classified => {
  if (finish !== "length") return { classification: { _tag: "Complete" }, complete: calls }
  const complete = calls.filter((call) => isWholeArguments(call.arguments))
  if (complete.length < calls.length) return { classification: { _tag: "Cut", reason: "tool_call_cut" }, complete }
  if (calls.length === 0 && text.trim() === "")
    return { classification: { _tag: "Cut", reason: "empty_response" }, complete }
  if (calls.length === 0) return { classification: { _tag: "UsefulText" }, complete }
  return { classification: { _tag: "Complete" }, complete }
}

/**
 * A response the provider itself reported as cut (`OutputTruncatedError`, `output_truncated`, the
 * legacy text): always recovered; only calls the provider ended, with whole arguments, may run.
 */
export const classifyProviderTruncated = (calls: ReadonlyArray<AssembledCall>): Classified => ({
  classification: { _tag: "Cut", reason: calls.length > 0 ? "tool_call_cut" : "empty_response" },
  complete: calls.filter((call) => call.ended && isWholeArguments(call.arguments))
})

/** The legacy text some older plugins put in an error instead of a typed truncation. */
export const isLegacyTruncationText = (message: string): boolean => /\boutput_truncated\b/.test(message)
