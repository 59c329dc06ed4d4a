// Which stored result answers which tool call. Ids are the provider's, and some providers give the
// calls of different turns the same one (`call_0` again and again): keyed by id alone, every such
// call would show the last result. A call's result is the first one with its id that follows it.
import type { Message, ToolResultMessage } from "@alisio/domain/Message"

/** The result of each tool call of `messages`, by the call's message index and id. */
export const toolResults = (
  messages: ReadonlyArray<Message>
): ((callAt: number, id: string) => ToolResultMessage | undefined) => {
  const byId = new Map<string, Array<{ readonly at: number; readonly message: ToolResultMessage }>>()
  messages.forEach((message, at) => {
    if (message.role !== "tool") return
    const results = byId.get(message.toolCallId)
    if (results === undefined) byId.set(message.toolCallId, [{ at, message }])
    else results.push({ at, message })
  })
  return (callAt, id) => byId.get(id)?.find((result) => result.at > callAt)?.message
}
