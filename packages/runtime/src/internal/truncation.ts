import type { ToolCallPart } from "@alisio/domain/Message"

/** A tool call as assembled from a stream; `ended` when the provider closed it. */
export interface AssembledCall {
  readonly id: ToolCallPart["id"]
  readonly name: string
  readonly arguments: string
  readonly ended: boolean
}

/** Whether tool-call arguments are one complete JSON value (empty counts as `{}`). */
export const isCompleteJson = (text: string): boolean => {
  if (text.trim() === "") return true
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** How a finished response is to be handled (LIM-6, LIM-7). */
export type Classification =
  | { readonly _tag: "Complete" }
  | { readonly _tag: "Cut"; readonly reason: "tool_call_cut" | "empty_response" }
  | { readonly _tag: "UsefulText" }

/**
 * Classifies a response by its finish reason, text and calls. At `length`: any call whose
 * arguments are not complete JSON is cut; no text and no call is empty; text alone is useful;
 * complete calls just run.
 */
export const classify = (
  finish: string,
  text: string,
  calls: ReadonlyArray<AssembledCall>
): { readonly classification: Classification; readonly complete: ReadonlyArray<AssembledCall> } => {
  if (finish !== "length") return { classification: { _tag: "Complete" }, complete: calls }
  const complete = calls.filter((call) => isCompleteJson(call.arguments))
  if (complete.length < calls.length) return { classification: { _tag: "Cut", reason: "tool_call_cut" }, complete }
  if (calls.length === 0 && text.trim() === "")
    return { classification: { _tag: "Cut", reason: "empty_response" }, complete }
  if (calls.length === 0) return { classification: { _tag: "UsefulText" }, complete }
  return { classification: { _tag: "Complete" }, complete }
}

/** The legacy text some older plugins put in an error instead of a typed truncation. */
export const isLegacyTruncationText = (message: string): boolean => /\boutput_truncated\b/.test(message)
