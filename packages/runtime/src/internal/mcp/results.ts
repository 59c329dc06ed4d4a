// What an MCP tool returned, as the model reads it: text as text, images as image parts, resource
// links and embedded resources as text naming their URI, the rest described in a line. Text is
// capped like `bash` output (head and tail kept), images by count and size.
import type { ImagePart, TextPart, ToolResultContent } from "@alisio/domain/Message"
import type { ToolResult } from "@alisio/domain/Tool"
import { capped, imagesLeftOut, MAX_IMAGE_CHARS, MAX_IMAGES, MAX_RESULT_CHARS } from "../resultBounds.js"

/** The content blocks of a `tools/call` result, as far as Alisio reads them. */
export type McpContent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image" | "audio"; readonly data: string; readonly mimeType: string }
  | {
      readonly type: "resource_link"
      readonly uri: string
      readonly name?: string | undefined
      readonly title?: string | undefined
      readonly description?: string | undefined
      readonly mimeType?: string | undefined
    }
  | {
      readonly type: "resource"
      readonly resource: {
        readonly uri: string
        readonly mimeType?: string | undefined
        readonly text?: string | undefined
        readonly blob?: string | undefined
      }
    }
  | { readonly type: string }

export interface McpCallResult {
  readonly content?: ReadonlyArray<McpContent> | undefined
  readonly structuredContent?: unknown
  readonly isError?: boolean | undefined
}

export const mediaTypePattern = /^image\/[a-z0-9.+-]+$/
export const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/

export const approximateBytes = (base64: string) => Math.floor((base64.length * 3) / 4)

const describeResource = (uri: string, mimeType: string | undefined) =>
  mimeType === undefined ? uri : `${uri} (${mimeType})`

/** A server's string shown in a line of ours: quoted, and short. */
const shown = (value: string) => JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value)

/**
 * One content block as text, or as an image part. The SDK does not check a call's result (a
 * block it finds malformed would fail the whole result): a block without the fields its type
 * needs is a line saying it was left out.
 */
const partOf = (block: McpContent): { readonly text: string } | { readonly image: ImagePart } => {
  if (typeof block !== "object" || block === null || typeof block.type !== "string") {
    return { text: "[a content block that is not valid MCP was left out]" }
  }
  const fields = block as { readonly [key: string]: unknown }
  const invalid = { text: `[a content block of type ${shown(block.type)} that is not valid MCP was left out]` }
  switch (block.type) {
    case "text":
      return typeof fields.text === "string" ? { text: fields.text } : invalid
    case "image": {
      const { data, mimeType } = fields
      if (typeof data !== "string" || typeof mimeType !== "string") return invalid
      const mediaType = mimeType.toLowerCase()
      if (!mediaTypePattern.test(mediaType)) {
        return { text: `[an image of type ${shown(mimeType)}, which is not an image type, was left out]` }
      }
      if (base64Pattern.test(data)) return { image: { _tag: "image", mediaType, data } }
      return { text: `[an image (${mediaType}) that is not valid base64 was left out]` }
    }
    case "audio": {
      const { data, mimeType } = fields
      if (typeof data !== "string") return invalid
      return {
        text: `[audio (${typeof mimeType === "string" ? mimeType.slice(0, 100) : "no type"}), ${approximateBytes(data)} bytes, left out: audio is not sent to the model]`
      }
    }
    case "resource_link": {
      const link = block as Extract<McpContent, { readonly type: "resource_link" }>
      if (typeof link.uri !== "string") return invalid
      const name = text(link.title) ?? text(link.name)
      const description = text(link.description)
      const about = description === undefined ? "" : ` — ${description}`
      return {
        text: `[resource link${name === undefined ? "" : ` "${name}"`}: ${describeResource(link.uri, text(link.mimeType))}${about}]`
      }
    }
    case "resource": {
      const { resource } = block as Extract<McpContent, { readonly type: "resource" }>
      if (typeof resource !== "object" || resource === null || typeof resource.uri !== "string") return invalid
      const where = describeResource(resource.uri, text(resource.mimeType))
      if (typeof resource.text === "string") return { text: `[resource ${where}]\n${resource.text}` }
      const bytes = typeof resource.blob === "string" ? approximateBytes(resource.blob) : 0
      return { text: `[resource ${where}: ${bytes} bytes of binary content, left out]` }
    }
    default:
      return { text: `[content of type ${shown(block.type)} left out]` }
  }
}

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/**
 * The result as the model sees it: texts joined (a blank line between blocks) and capped at
 * `maxChars`, images after them; structured content when the server sent no content blocks.
 * `isError` makes it a tool error.
 */
export const toToolResult = (result: McpCallResult, maxChars: number = MAX_RESULT_CHARS): ToolResult => {
  const blocks = result.content
  if (blocks !== undefined && !Array.isArray(blocks)) {
    return {
      content: [
        {
          _tag: "text",
          text: "The server answered with a result that is not valid MCP: its content is not a list of blocks."
        }
      ],
      isError: true
    }
  }
  // The common result, one text block, without the lists below (every MCP call makes one).
  if (
    blocks !== undefined &&
    blocks.length === 1 &&
    blocks[0]?.type === "text" &&
    typeof (blocks[0] as { readonly text?: unknown }).text === "string"
  ) {
    const text = (blocks[0] as { readonly text: string }).text
    const shown = text === "" ? "(no output)" : text.length <= maxChars ? text : capped(text, maxChars)
    const content: Array<ToolResultContent> = [{ _tag: "text", text: shown }]
    return result.isError === true ? { content, isError: true } : { content }
  }
  const texts: Array<string> = []
  const images: Array<ImagePart> = []
  let leftOut = 0
  for (const block of result.content ?? []) {
    const part = partOf(block)
    if ("text" in part) {
      texts.push(part.text)
    } else if (images.length < MAX_IMAGES && part.image.data.length <= MAX_IMAGE_CHARS) {
      images.push(part.image)
    } else {
      leftOut += 1
    }
  }
  if ((result.content ?? []).length === 0 && result.structuredContent !== undefined) {
    texts.push(JSON.stringify(result.structuredContent, null, 2))
  }
  if (leftOut > 0) texts.push(imagesLeftOut(leftOut))
  const joined = texts.length === 1 ? texts[0]! : texts.join("\n\n")
  const text = joined.length <= maxChars ? joined : capped(joined, maxChars)
  const content: Array<ToolResultContent> = [
    ...(text === "" && images.length > 0 ? [] : [{ _tag: "text" as const, text: text === "" ? "(no output)" : text }]),
    ...images
  ]
  return result.isError === true ? { content, isError: true } : { content }
}

/** Content blocks as message parts (a prompt's messages): the same conversions as a result's. */
export const toParts = (blocks: ReadonlyArray<McpContent>): Array<TextPart | ImagePart> =>
  blocks.map((block) => {
    const part = partOf(block)
    return "text" in part ? { _tag: "text" as const, text: part.text } : part.image
  })
