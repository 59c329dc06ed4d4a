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

/** One content block as text, or as an image part. */
const partOf = (block: McpContent): { readonly text: string } | { readonly image: ImagePart } => {
  switch (block.type) {
    case "text":
      return { text: (block as { readonly text: string }).text }
    case "image": {
      const { data, mimeType } = block as { readonly data: string; readonly mimeType: string }
      const mediaType = mimeType.toLowerCase()
      if (mediaTypePattern.test(mediaType) && base64Pattern.test(data))
        return { image: { _tag: "image", mediaType, data } }
      return { text: `[an image (${mimeType}) that is not valid base64 was left out]` }
    }
    case "audio": {
      const { data, mimeType } = block as { readonly data: string; readonly mimeType: string }
      return {
        text: `[audio (${mimeType}), ${approximateBytes(data)} bytes, left out: audio is not sent to the model]`
      }
    }
    case "resource_link": {
      const link = block as Extract<McpContent, { readonly type: "resource_link" }>
      const name = link.title ?? link.name
      const about = link.description === undefined ? "" : ` — ${link.description}`
      return {
        text: `[resource link${name === undefined ? "" : ` "${name}"`}: ${describeResource(link.uri, link.mimeType)}${about}]`
      }
    }
    case "resource": {
      const { resource } = block as Extract<McpContent, { readonly type: "resource" }>
      const where = describeResource(resource.uri, resource.mimeType)
      if (typeof resource.text === "string") return { text: `[resource ${where}]\n${resource.text}` }
      const bytes = typeof resource.blob === "string" ? approximateBytes(resource.blob) : 0
      return { text: `[resource ${where}: ${bytes} bytes of binary content, left out]` }
    }
    default:
      return { text: `[content of type "${block.type}" left out]` }
  }
}

/**
 * The result as the model sees it: texts joined (a blank line between blocks) and capped at
 * `maxChars`, images after them; structured content when the server sent no content blocks.
 * `isError` makes it a tool error.
 */
export const toToolResult = (result: McpCallResult, maxChars: number = MAX_RESULT_CHARS): ToolResult => {
  const blocks = result.content
  // The common result, one text block, without the lists below (every MCP call makes one).
  if (blocks !== undefined && blocks.length === 1 && blocks[0]!.type === "text") {
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
