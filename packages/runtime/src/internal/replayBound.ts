// The bound on the tool calls of one response (TL-4) applied to history sent again: a session stored
// before the bound may hold thousands of calls in one assistant message, each with its result, and
// resending them all makes every later request of that session huge (or refused by the server).
import { MAX_TOOL_CALLS_PER_RESPONSE } from "@alisio/domain/Limits"
import { type AssistantMessage, type Message, type ToolCallPart, toolCallsOf } from "@alisio/domain/Message"
import { countsByName } from "./callBound.js"

/** The most calls one stored response may carry as the runner stores it now: the bound and its refusal. */
const KEPT_WITH_NOTE = MAX_TOOL_CALLS_PER_RESPONSE + 1

const callCount = (message: AssistantMessage): number => {
  let count = 0
  for (const part of message.content) if (part._tag === "tool_call") count++
  return count
}

/** What the model reads in place of the result of the first call left out. */
const noteFor = (calls: ReadonlyArray<ToolCallPart>): string => {
  const left = calls.slice(MAX_TOOL_CALLS_PER_RESPONSE)
  return (
    `Left out of this request: this response, stored before at most ${MAX_TOOL_CALLS_PER_RESPONSE} tool calls ` +
    `ran per response, asked for ${calls.length}. The first ${MAX_TOOL_CALLS_PER_RESPONSE} are sent with their ` +
    `results; this call and the ${left.length - 1} after it (${countsByName(left)}) were answered then, but they ` +
    `and their results are not sent again. Ask for at most ${MAX_TOOL_CALLS_PER_RESPONSE} calls in one response.`
  )
}

/** Takes one from a count of ids; whether there was one. */
const take = (counts: Map<string, number>, id: string): boolean => {
  const left = counts.get(id) ?? 0
  if (left === 0) return false
  counts.set(id, left - 1)
  return true
}

/**
 * The messages with each assistant message over the bound cut to its first
 * `MAX_TOOL_CALLS_PER_RESPONSE` calls and the one after them, whose result is replaced by a note
 * naming what was left out; the results of the calls left out are dropped, so every call sent has
 * its result and no result lacks its call. Results are matched within the tool messages that
 * follow their assistant message, by count, since some providers repeat call ids. Messages within
 * the bound (every one the runner stores now) are returned as they are.
 */
export const boundReplayedCalls = (messages: ReadonlyArray<Message>): ReadonlyArray<Message> => {
  if (!messages.some((message) => message.role === "assistant" && callCount(message) > KEPT_WITH_NOTE)) {
    return messages
  }
  const out: Array<Message> = []
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    if (message.role !== "assistant" || callCount(message) <= KEPT_WITH_NOTE) {
      out.push(message)
      continue
    }
    const calls = toolCallsOf(message)
    const kept = new Set<ToolCallPart>(calls.slice(0, KEPT_WITH_NOTE))
    out.push({ ...message, content: message.content.filter((part) => part._tag !== "tool_call" || kept.has(part)) })
    const answered = new Map<string, number>()
    for (const call of calls.slice(0, MAX_TOOL_CALLS_PER_RESPONSE)) {
      answered.set(call.id, (answered.get(call.id) ?? 0) + 1)
    }
    const leftOut = new Map<string, number>()
    for (const call of calls.slice(KEPT_WITH_NOTE)) leftOut.set(call.id, (leftOut.get(call.id) ?? 0) + 1)
    const carrier = calls[MAX_TOOL_CALLS_PER_RESPONSE]!
    const note: Message = {
      role: "tool",
      toolCallId: carrier.id,
      toolName: carrier.name,
      content: [{ _tag: "text", text: noteFor(calls) }],
      isError: false
    }
    let noted = false
    while (messages[i + 1]?.role === "tool") {
      const result = messages[++i]!
      if (result.role !== "tool") break
      if (take(answered, result.toolCallId)) out.push(result)
      else if (!noted && result.toolCallId === carrier.id) {
        out.push(note)
        noted = true
      } else if (!take(leftOut, result.toolCallId)) out.push(result)
    }
    if (!noted) out.push(note)
  }
  return out
}
