import type { Message, UserContent, UserMessage } from "@alisio/domain/Message"
import { type CompactionSnapshot, type HistoryEntry, indexAfter, pinnedIndex } from "./compaction/plan.js"
import { boundReplayedCalls } from "./replayBound.js"

/** How a stored message is sent: reasoning is not sent back; an assistant message left empty is dropped. */
const forRequest = (message: Message): Message | undefined => {
  if (message.role !== "assistant") return message
  if (!message.content.some((part) => part._tag === "reasoning")) return message
  const content = message.content.filter((part) => part._tag !== "reasoning")
  return content.length === 0 ? undefined : { ...message, content }
}

/** The text standing for the compacted messages at the head of a request. */
export const summaryText = (compaction: CompactionSnapshot): string =>
  `[Earlier conversation, compacted] The ${compaction.messagesCompacted} earlier messages of this session ` +
  "were summarised to fit the model's context window; this summary stands for them.\n\n" +
  compaction.summary

const pinnedHeader = "\n\n[The person's current request, word for word]\n"

/**
 * Stored history → the messages of a model request: the one replaceable step of the runner (CTX-1).
 * Without a compaction, every stored message. With one, the summary stands for the messages up to
 * its `lastPosition`, followed by the later ones as stored; the last user message (the current
 * run's prompt) is always sent whole, after the summary when the summary covers it. The summary
 * opens a user message of its own, or the first kept one when that is a user message, so roles
 * still alternate. The cut is never between a tool call and its result: compaction cuts between
 * units only (`plan.ts`). Reasoning is not sent back. A response stored before the bound on its tool
 * calls is sent within it (`replayBound.ts`).
 */
export const toRequestMessages = (
  history: ReadonlyArray<HistoryEntry>,
  compaction?: CompactionSnapshot | undefined
): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  const start = compaction === undefined ? 0 : indexAfter(history, compaction.lastPosition)
  if (compaction !== undefined) {
    const head: Array<UserContent> = [{ _tag: "text", text: summaryText(compaction) }]
    const pinned = pinnedIndex(history)
    if (pinned >= 0 && pinned < start) {
      head.push({ _tag: "text", text: pinnedHeader }, ...(history[pinned]!.message as UserMessage).content)
    }
    const first = history[start]?.message
    if (first?.role === "user") {
      out.push({ role: "user", content: [...head, { _tag: "text", text: "\n\n" }, ...first.content] })
    } else {
      out.push({ role: "user", content: head })
      if (first !== undefined) {
        const sent = forRequest(first)
        if (sent !== undefined) out.push(sent)
      }
    }
    for (let i = start + 1; i < history.length; i++) {
      const sent = forRequest(history[i]!.message)
      if (sent !== undefined) out.push(sent)
    }
    return boundReplayedCalls(out)
  }
  for (const entry of history) {
    const sent = forRequest(entry.message)
    if (sent !== undefined) out.push(sent)
  }
  return boundReplayedCalls(out)
}

/** The transient notice sent after a truncated response; never stored (LIM-6). */
export const continuationNotice = (maxOutputTokens: number): Message => ({
  role: "user",
  content: [
    {
      _tag: "text",
      text:
        `[notice] Your previous response was cut off by the output limit of ${maxOutputTokens} tokens and its ` +
        "incomplete part was discarded. Continue the task. Keep each response shorter: write large files " +
        "in several smaller tool calls."
    }
  ]
})
