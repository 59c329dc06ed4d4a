import type { Message } from "@alisio/domain/Message"

/**
 * Stored history → the messages of a model request. One replaceable step (CTX-1): compaction
 * will swap older turns for a summary here. Reasoning is not sent back.
 */
export const toRequestMessages = (stored: ReadonlyArray<Message>): ReadonlyArray<Message> =>
  stored.flatMap((message): ReadonlyArray<Message> => {
    if (message.role !== "assistant") return [message]
    const content = message.content.filter((part) => part._tag !== "reasoning")
    return content.length === 0 ? [] : [{ ...message, content }]
  })

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
