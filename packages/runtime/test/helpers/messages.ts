// Messages as tests write them: one text part.
import type { Message } from "@alisio/domain/Message"

export const user = (text: string): Message => ({ role: "user", content: [{ _tag: "text", text }] })
export const said = (text: string): Message => ({ role: "assistant", content: [{ _tag: "text", text }] })
