// How much of a tool's result the model reads: text capped like `bash` output (head and tail
// kept), images by count and size. MCP results, mentions and plugins' tools keep to the same bounds.
import type { ImagePart, TextPart } from "@alisio/domain/Message"
import type { ToolResult } from "@alisio/domain/Tool"
import { OutputBuffer } from "../tools/internal/outputBuffer.js"

export const MAX_RESULT_CHARS = 30_000
export const MAX_IMAGES = 8
export const MAX_IMAGE_CHARS = 4 * 1024 * 1024

export const capped = (text: string, maxChars: number): string => {
  const buffer = new OutputBuffer(maxChars)
  buffer.append(text)
  return buffer.toString()
}

/**
 * An error message as the model reads it: bounded as a result's text is, so a tool that fails
 * with megabytes of text does not fill the context.
 */
export const boundedMessage = (message: string, maxChars: number = MAX_RESULT_CHARS): string =>
  message.length <= maxChars ? message : capped(message, maxChars)

/** The line that says how many images were left out. */
export const imagesLeftOut = (count: number): string =>
  `[${count} image${count === 1 ? "" : "s"} left out: more than ${MAX_IMAGES}, or over ${MAX_IMAGE_CHARS / 1024 / 1024} MiB]`

/** `result` within the bounds: its texts joined and capped when they are too long, images past the bounds left out. */
export const boundedResult = (result: ToolResult): ToolResult => {
  let chars = 0
  let images = 0
  for (const part of result.content) {
    if (part._tag === "text") chars += part.text.length
    else if (images < MAX_IMAGES && part.data.length <= MAX_IMAGE_CHARS) images += 1
    else return rebuilt(result)
  }
  return chars <= MAX_RESULT_CHARS ? result : rebuilt(result)
}

const rebuilt = (result: ToolResult): ToolResult => {
  const texts: Array<string> = []
  const images: Array<ImagePart> = []
  let leftOut = 0
  for (const part of result.content) {
    if (part._tag === "text") texts.push(part.text)
    else if (images.length < MAX_IMAGES && part.data.length <= MAX_IMAGE_CHARS) images.push(part)
    else leftOut += 1
  }
  if (leftOut > 0) texts.push(imagesLeftOut(leftOut))
  const joined = texts.join("\n\n")
  const text: TextPart = {
    _tag: "text",
    text: joined.length <= MAX_RESULT_CHARS ? joined : capped(joined, MAX_RESULT_CHARS)
  }
  const content = [text, ...images]
  return result.isError === true ? { content, isError: true } : { content }
}
