import * as Schema from "effect/Schema"
import { BlobHash, ToolCallId } from "./Ids.js"

/** Visible text written by a person or the model. */
export const TextPart = Schema.TaggedStruct("text", { text: Schema.String })
export type TextPart = typeof TextPart.Type

/** The model's reasoning, as the provider streamed it (a summary on some APIs). */
export const ReasoningPart = Schema.TaggedStruct("reasoning", { text: Schema.String })
export type ReasoningPart = typeof ReasoningPart.Type

/** An image attachment carried inline as base64 bytes with its media type. */
export const ImagePart = Schema.TaggedStruct("image", {
  mediaType: Schema.String.pipe(Schema.pattern(/^image\/[a-z0-9.+-]+$/)),
  data: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9+/]*={0,2}$/))
})
export type ImagePart = typeof ImagePart.Type

/** A complete tool call: `arguments` is the JSON text the model wrote. */
export const ToolCallPart = Schema.TaggedStruct("tool_call", {
  id: ToolCallId,
  name: Schema.String,
  arguments: Schema.String
})
export type ToolCallPart = typeof ToolCallPart.Type

/** A reference to attachment bytes held by the BlobStore; turned into an ImagePart before a run. */
export const BlobRef = Schema.TaggedStruct("blob", {
  hash: BlobHash,
  mediaType: Schema.String
})
export type BlobRef = typeof BlobRef.Type

export const UserContent = Schema.Union(TextPart, ImagePart)
export type UserContent = typeof UserContent.Type

export const AssistantContent = Schema.Union(TextPart, ReasoningPart, ToolCallPart)
export type AssistantContent = typeof AssistantContent.Type

export const ToolResultContent = Schema.Union(TextPart, ImagePart)
export type ToolResultContent = typeof ToolResultContent.Type

/** What a person (or a host on their behalf) said. */
export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.Array(UserContent)
})
export type UserMessage = typeof UserMessage.Type

/** What the model answered: text, reasoning and complete tool calls. */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.Array(AssistantContent)
})
export type AssistantMessage = typeof AssistantMessage.Type

/** The result of one tool call, sent back to the model. */
export const ToolResultMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  toolCallId: ToolCallId,
  toolName: Schema.String,
  content: Schema.Array(ToolResultContent),
  isError: Schema.Boolean
})
export type ToolResultMessage = typeof ToolResultMessage.Type

/** Instructions for the model; stored for the system prompt, or transient (never stored) for notices. */
export const SystemMessage = Schema.Struct({
  role: Schema.Literal("system"),
  content: Schema.String
})
export type SystemMessage = typeof SystemMessage.Type

/** Any message of a conversation. */
export const Message = Schema.Union(UserMessage, AssistantMessage, ToolResultMessage, SystemMessage)
export type Message = typeof Message.Type

/** The concatenated visible text of a message's parts. */
export const textOf = (content: ReadonlyArray<{ readonly _tag: string }>): string =>
  content.flatMap((part) => (part._tag === "text" ? [(part as TextPart).text] : [])).join("")

/** The tool calls of an assistant message. */
export const toolCallsOf = (message: AssistantMessage): ReadonlyArray<ToolCallPart> =>
  message.content.filter((part): part is ToolCallPart => part._tag === "tool_call")
