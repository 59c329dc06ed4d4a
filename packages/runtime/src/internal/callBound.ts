// The bound on the tool calls of one response (TL-4, MAX_TOOL_CALLS_PER_RESPONSE).
import { MAX_TOOL_CALLS_PER_RESPONSE } from "@alisio/domain/Limits"
import type { AssembledCall } from "./truncation.js"

/** The calls of a response that are kept, and the refusal that answers the last one when some were left out. */
export interface BoundedCalls {
  readonly calls: ReadonlyArray<AssembledCall>
  readonly refusal?: string
}

const NAMES_SHOWN = 5

/** How many calls of each name (the most asked first, a few names at most), e.g. `ls ×19936`. */
export const countsByName = (calls: ReadonlyArray<{ readonly name: string }>): string => {
  const counts = new Map<string, number>()
  for (const call of calls) counts.set(call.name, (counts.get(call.name) ?? 0) + 1)
  const sorted = [...counts].sort((a, b) => b[1] - a[1])
  const shown = sorted.slice(0, NAMES_SHOWN).map(([name, count]) => `${name.slice(0, 64)} ×${count}`)
  return sorted.length > NAMES_SHOWN
    ? `${shown.join(", ")} and ${sorted.length - NAMES_SHOWN} other tools`
    : shown.join(", ")
}

/**
 * Keeps the first `MAX_TOOL_CALLS_PER_RESPONSE` calls to run and the one after them, which is not
 * run but answered with a refusal naming every call left out; the rest are dropped before they are
 * journaled or stored, so the session and the next request stay bounded and every stored call has
 * its result. Under the bound the calls are returned as they are.
 */
export const boundCalls = (calls: ReadonlyArray<AssembledCall>): BoundedCalls => {
  if (calls.length <= MAX_TOOL_CALLS_PER_RESPONSE) return { calls }
  const left = calls.slice(MAX_TOOL_CALLS_PER_RESPONSE)
  return {
    calls: calls.slice(0, MAX_TOOL_CALLS_PER_RESPONSE + 1),
    refusal:
      `Not run: this response asked for ${calls.length} tool calls and at most ${MAX_TOOL_CALLS_PER_RESPONSE} ` +
      `run per response. The first ${MAX_TOOL_CALLS_PER_RESPONSE} ran; this call and the ${left.length - 1} after it ` +
      `were not run and are left out of the conversation (${countsByName(left)}). ` +
      `Ask for at most ${MAX_TOOL_CALLS_PER_RESPONSE} calls in one response.`
  }
}
