// `@<server>:<uri>` in a prompt (MCP-1): the resource is read on that server and goes to the model
// with the message, marked with its server and URI: text as text (capped like a tool result),
// images as image parts, other blobs as a line naming them. A `@word:thing` whose word is no
// enabled server is plain text. This module needs no SDK: the reads go through the service.
import type { ImagePart, TextPart } from "@alisio/domain/Message"
import * as Effect from "effect/Effect"
import { McpError } from "../../McpServers.js"
import { capped, MAX_IMAGE_CHARS, MAX_IMAGES, MAX_RESULT_CHARS } from "../resultBounds.js"
import type { McpResourceContent } from "./resourceRequests.js"
import { approximateBytes, base64Pattern, mediaTypePattern } from "./results.js"

export interface Mention {
  readonly server: string
  readonly uri: string
  /** As written: `@server:uri`. */
  readonly text: string
}

// As Claude Code reads them: after a space or at the start, up to the next space; punctuation that
// ends a sentence or closes a bracket is not part of the URI, a URI's own trailing `/` is.
const mentionPattern = /(^|\s)@([^\s:]+):(\S*[^\s.,;:!?)\]}'"])/g

/** The mentions of enabled servers in a text, each once, in order. */
export const findMentions = (text: string, servers: ReadonlyArray<string>): ReadonlyArray<Mention> => {
  const found: Array<Mention> = []
  for (const match of text.matchAll(mentionPattern)) {
    const server = match[2]!
    const uri = match[3]!
    if (!servers.includes(server)) continue
    if (found.some((each) => each.server === server && each.uri === uri)) continue
    found.push({ server, uri, text: `@${server}:${uri}` })
  }
  return found
}

const about = (mention: Mention, content: McpResourceContent) => {
  const uri = content.uri === mention.uri ? mention.uri : `${mention.uri} → ${content.uri}`
  return `MCP resource ${uri} from the server ${mention.server}${content.mimeType === undefined ? "" : ` (${content.mimeType})`}`
}

/** What one read returned, as parts of the user's message; `images` counts the images so far. */
export const partsOf = (
  mention: Mention,
  contents: ReadonlyArray<McpResourceContent>,
  images: { count: number }
): Array<TextPart | ImagePart> => {
  const parts: Array<TextPart | ImagePart> = []
  const line = (text: string) => parts.push({ _tag: "text", text })
  for (const content of contents) {
    if (typeof content.text === "string") {
      const text = content.text.length <= MAX_RESULT_CHARS ? content.text : capped(content.text, MAX_RESULT_CHARS)
      line(`[${about(mention, content)}]\n${text}`)
      continue
    }
    const blob = typeof content.blob === "string" ? content.blob : ""
    const mediaType = content.mimeType?.toLowerCase() ?? ""
    const bytes = approximateBytes(blob)
    if (mediaTypePattern.test(mediaType) && base64Pattern.test(blob)) {
      if (images.count < MAX_IMAGES && blob.length <= MAX_IMAGE_CHARS) {
        images.count += 1
        line(`[${about(mention, content)}: the image that follows]`)
        parts.push({ _tag: "image", mediaType, data: blob })
        continue
      }
      line(
        `[${about(mention, content)}: an image of ${bytes} bytes, left out: over ${MAX_IMAGES} images or ${MAX_IMAGE_CHARS / 1024 / 1024} MiB]`
      )
      continue
    }
    line(`[${about(mention, content)}: ${bytes} bytes of binary content, not attached]`)
  }
  if (contents.length === 0) line(`[MCP resource ${mention.uri} from the server ${mention.server}: empty]`)
  return parts
}

/**
 * The parts the mentions of a text attach, read side by side (a server starts on its first read). A mention that cannot be read fails it all: `Cannot attach @s:uri: <why>`.
 */
export const attachMentions = (
  text: string,
  servers: ReadonlyArray<string>,
  read: (server: string, uri: string) => Effect.Effect<ReadonlyArray<McpResourceContent>, McpError>
): Effect.Effect<ReadonlyArray<TextPart | ImagePart>, McpError> => {
  const mentions = findMentions(text, servers)
  if (mentions.length === 0) return Effect.succeed([])
  const images = { count: 0 }
  return Effect.map(
    Effect.forEach(
      mentions,
      (mention) =>
        read(mention.server, mention.uri).pipe(
          Effect.mapError(
            (error) =>
              new McpError({
                reason: error.reason,
                server: mention.server,
                message: `Cannot attach ${mention.text}: ${error.message.replace(/^The /, "the ")}`
              })
          ),
          Effect.map((contents) => ({ mention, contents }))
        ),
      // Servers start side by side; the parts keep the mentions' order.
      { concurrency: "unbounded" }
    ),
    (all) => all.flatMap(({ contents, mention }) => partsOf(mention, contents, images))
  )
}
