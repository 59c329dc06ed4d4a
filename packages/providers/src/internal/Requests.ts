import type { ModelRequest } from "@alisio/domain/LanguageModel"
import type { ImagePart, Message } from "@alisio/domain/Message"
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall
} from "openai/resources/chat/completions"
import type {
  ResponseCreateParamsStreaming,
  ResponseFunctionCallOutputItemList,
  ResponseInputItem,
  ResponseInputMessageContentList
} from "openai/resources/responses/responses"

export type OutputTokensParam = "max_completion_tokens" | "max_tokens"

const dataUrl = (image: ImagePart): string => `data:${image.mediaType};base64,${image.data}`

type Part = Message["content"] extends infer C ? (C extends ReadonlyArray<infer P> ? P : never) : never

const texts = (content: ReadonlyArray<Part>): Array<string> =>
  content.flatMap((part) => (part._tag === "text" ? [part.text] : []))

const images = (content: ReadonlyArray<Part>): Array<ImagePart> =>
  content.filter((part): part is ImagePart => part._tag === "image")

/**
 * Domain messages → Chat Completions messages. Text-only user content is sent as a string (older
 * servers reject arrays); reasoning is not sent back; images returned by tools, which a `tool`
 * message cannot carry, follow the tool results in a user message.
 */
export const chatMessages = (
  system: string | undefined,
  messages: ReadonlyArray<Message>
): Array<ChatCompletionMessageParam> => {
  const out: Array<ChatCompletionMessageParam> = []
  if (system !== undefined && system.length > 0) out.push({ role: "system", content: system })
  let toolImages: Array<ImagePart> = []
  const flushToolImages = () => {
    if (toolImages.length === 0) return
    out.push({
      role: "user",
      content: toolImages.map(
        (image): ChatCompletionContentPart => ({ type: "image_url", image_url: { url: dataUrl(image) } })
      )
    })
    toolImages = []
  }
  for (const message of messages) {
    if (message.role !== "tool") flushToolImages()
    switch (message.role) {
      case "system":
        out.push({ role: "system", content: message.content })
        break
      case "user": {
        const pictures = images(message.content)
        if (pictures.length === 0) {
          out.push({ role: "user", content: texts(message.content).join("\n") })
        } else {
          out.push({
            role: "user",
            content: message.content.flatMap(
              (part): Array<ChatCompletionContentPart> =>
                part._tag === "text"
                  ? [{ type: "text", text: part.text }]
                  : [{ type: "image_url", image_url: { url: dataUrl(part) } }]
            )
          })
        }
        break
      }
      case "assistant": {
        const calls = message.content.flatMap(
          (part): Array<ChatCompletionMessageToolCall> =>
            part._tag === "tool_call"
              ? [{ id: part.id, type: "function", function: { name: part.name, arguments: part.arguments } }]
              : []
        )
        const text = texts(message.content).join("")
        out.push(
          calls.length === 0
            ? { role: "assistant", content: text }
            : { role: "assistant", content: text.length > 0 ? text : null, tool_calls: calls }
        )
        break
      }
      case "tool": {
        const pictures = images(message.content)
        const text = texts(message.content).join("\n")
        out.push({
          role: "tool",
          tool_call_id: message.toolCallId,
          content: pictures.length === 0 || text.length > 0 ? text : "(the result is the image that follows)"
        })
        toolImages = toolImages.concat(pictures)
        break
      }
    }
  }
  flushToolImages()
  return out
}

export const chatBody = (
  request: ModelRequest,
  options: { readonly outputTokensParam: OutputTokensParam; readonly sendEffort: boolean }
): ChatCompletionCreateParamsStreaming => ({
  model: request.model,
  messages: chatMessages(request.system, request.messages),
  stream: true,
  stream_options: { include_usage: true },
  ...(options.outputTokensParam === "max_tokens"
    ? { max_tokens: request.maxOutputTokens }
    : { max_completion_tokens: request.maxOutputTokens }),
  ...(request.tools.length === 0
    ? {}
    : {
        tools: request.tools.map((tool) => ({
          type: "function" as const,
          function: { name: tool.name, description: tool.description, parameters: { ...tool.parameters } }
        }))
      }),
  ...(options.sendEffort && request.effort !== undefined ? { reasoning_effort: request.effort } : {})
})

/** Domain messages → Responses input items; the system prompt goes in `instructions`. */
export const responsesInput = (messages: ReadonlyArray<Message>): Array<ResponseInputItem> => {
  const out: Array<ResponseInputItem> = []
  for (const message of messages) {
    switch (message.role) {
      case "system":
        out.push({ role: "system", content: message.content })
        break
      case "user":
        out.push({
          role: "user",
          content: message.content.map((part): ResponseInputMessageContentList[number] =>
            part._tag === "text"
              ? { type: "input_text", text: part.text }
              : { type: "input_image", image_url: dataUrl(part), detail: "auto" }
          )
        })
        break
      case "assistant": {
        let text = ""
        const flush = () => {
          if (text.length > 0) out.push({ role: "assistant", content: text })
          text = ""
        }
        for (const part of message.content) {
          if (part._tag === "text") text += part.text
          else if (part._tag === "tool_call") {
            flush()
            out.push({ type: "function_call", call_id: part.id, name: part.name, arguments: part.arguments })
          }
        }
        flush()
        break
      }
      case "tool": {
        const pictures = images(message.content)
        const output: string | ResponseFunctionCallOutputItemList =
          pictures.length === 0
            ? texts(message.content).join("\n")
            : message.content.map((part): ResponseFunctionCallOutputItemList[number] =>
                part._tag === "text"
                  ? { type: "input_text", text: part.text }
                  : { type: "input_image", image_url: dataUrl(part), detail: "auto" }
              )
        out.push({ type: "function_call_output", call_id: message.toolCallId, output })
        break
      }
    }
  }
  return out
}

export const responsesBody = (
  request: ModelRequest,
  options: { readonly sendEffort: boolean }
): ResponseCreateParamsStreaming => ({
  model: request.model,
  input: responsesInput(request.messages),
  stream: true,
  max_output_tokens: request.maxOutputTokens,
  ...(request.system === undefined || request.system.length === 0 ? {} : { instructions: request.system }),
  ...(request.tools.length === 0
    ? {}
    : {
        tools: request.tools.map((tool) => ({
          type: "function" as const,
          name: tool.name,
          description: tool.description,
          parameters: { ...tool.parameters },
          strict: false
        }))
      }),
  ...(options.sendEffort && request.effort !== undefined
    ? { reasoning: { effort: request.effort, summary: "auto" as const } }
    : {})
})
