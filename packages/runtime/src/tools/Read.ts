import { isUtf8 } from "node:buffer"
import type { FileHandle } from "node:fs/promises"
import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  binaryKind,
  formatBytes,
  incompleteUtf8Tail,
  lineAt,
  looksBinary,
  notUtf8,
  openForReading,
  readSample,
  statExisting,
  utf16Advice,
  wouldBlock
} from "./internal/files.js"
import { headOf } from "./internal/outputBuffer.js"
import { integerAtLeast } from "./internal/schema.js"
import { resolvePath, tryFs } from "./internal/workspace.js"

export interface ReadOptions {
  /** Most lines returned by one call (default 2 000). */
  readonly maxLines?: number
  /**
   * Most bytes of output returned by one call (default 100 KiB, about 25 000 tokens, as Claude
   * Code's read takes): a call that fills a local model's window leaves no room to answer.
   */
  readonly maxBytes?: number
  /** Longer lines are cut (default 2 000 characters). */
  readonly maxLineLength?: number
}

const Input = Schema.Struct({
  path: Schema.String.annotations({ description: "The file, relative to the workspace (or absolute)." }),
  offset: Schema.optional(integerAtLeast(0, "The first line to return, counting from 1. Default 1.")),
  limit: Schema.optional(integerAtLeast(1, "How many lines to return at most."))
})

interface Window {
  readonly lines: ReadonlyArray<string>
  readonly first: number
  /** Lines seen, up to where reading stopped. */
  readonly seen: number
  readonly stoppedBy: "end" | "limit" | "bytes"
  /** The line of the first byte that is not UTF-8, among the bytes read. */
  readonly notUtf8Line: number | undefined
}

/** `read` (TL-1): a text file with line numbers, by line range, under a size cap; binary files are reported. */
export const make = (options: ReadOptions = {}): Tool => {
  const maxLines = options.maxLines ?? 2_000
  const maxBytes = options.maxBytes ?? 100 * 1024
  const maxLineLength = options.maxLineLength ?? 2_000

  return defineTool({
    name: "read",
    description:
      "Reads a text file, each line prefixed with its number. Long files come in windows of " +
      `at most ${maxLines} lines or ${formatBytes(maxBytes)}: pass offset and limit to read a range. ` +
      "Binary files are reported, not shown.",
    effect: "read",
    input: Input,
    run: (input, context) =>
      Effect.gen(function* () {
        const target = yield* resolvePath(context, input.path)
        const stat = yield* statExisting(target)
        if (stat.isDirectory()) {
          return yield* new ToolError({ message: `${target.display} is a directory; use ls to list it` })
        }
        if (!stat.isFile()) {
          return yield* new ToolError({ message: `${target.display} is not a regular file` })
        }
        // Read even at size 0: the files of /proc and /sys report no size and still hold text.
        const sample = yield* readSample(target.real, target.display)
        if (sample.length === 0) return textResult(`${target.display} is empty.`)
        if (looksBinary(sample)) {
          const utf16 = utf16Advice(sample, target.display)
          if (utf16 !== undefined) return textResult(`${utf16}.`)
          const kind = binaryKind(sample) ?? "binary data"
          const size = stat.size === 0 ? "" : `, ${formatBytes(stat.size)}`
          return textResult(`${target.display} is a binary file (${kind}${size}); its bytes are not shown.`)
        }
        const first = Math.max(1, input.offset ?? 1)
        const count = Math.min(input.limit ?? maxLines, maxLines)
        const window = yield* readWindow(target.real, target.display, first, count, maxBytes, maxLineLength)
        if (window.lines.length === 0) {
          return yield* new ToolError({
            message: `${target.display} has ${window.seen} line${window.seen === 1 ? "" : "s"}; offset ${first} is past the end`
          })
        }
        const last = first + window.lines.length - 1
        const numbered = window.lines.map((line, i) => `${String(first + i).padStart(6)}\t${line}`).join("\n")
        const footer =
          window.stoppedBy === "limit"
            ? `\n[lines ${first}-${last} shown; the file goes on: read with offset=${last + 1} for more]`
            : window.stoppedBy === "bytes"
              ? `\n[output cap of ${formatBytes(maxBytes)} reached after line ${last}; ` +
                `read with offset=${last + 1} for more]`
              : first > 1
                ? `\n[lines ${first}-${last} of ${window.seen}]`
                : ""
        const encoding =
          window.notUtf8Line === undefined
            ? ""
            : `\n[${notUtf8(target.display, window.notUtf8Line)}: they are shown as \uFFFD, and edit refuses ` +
              "the file; change it with bash (sed, iconv) instead]"
        return textResult(numbered + footer + encoding)
      })
  })
}

const CHUNK_BYTES = 64 * 1024

/** Reads lines `first … first+count-1` in chunks, so neither a huge file nor a huge line is held whole. */
const readWindow = (
  absolute: string,
  display: string,
  first: number,
  count: number,
  maxBytes: number,
  maxLineLength: number
): Effect.Effect<Window, ToolError> =>
  Effect.acquireUseRelease(
    openForReading(absolute, display),
    (handle) =>
      Effect.gen(function* () {
        // A stream (see openForReading) ends, for this call, where it has nothing more to give now.
        const readAt = (handle: FileHandle, into: Uint8Array, offset: number, length: number, position: number) =>
          tryFs(display, () =>
            handle
              .read(into, offset, length, position)
              .catch((error: unknown) => (wouldBlock(error) ? { bytesRead: 0 } : Promise.reject(error)))
          )
        const decoder = new TextDecoder("utf-8")
        // The head holds the bytes of a sequence cut by the previous chunk, so isUtf8 sees it whole.
        const buffer = new Uint8Array(CHUNK_BYTES + 3)
        let cut = 0
        let notUtf8Line: number | undefined
        const lines: Array<string> = []
        let bytes = 0
        let seen = 0
        let current = ""
        let currentLength = 0
        let position = 0
        let stoppedBy: Window["stoppedBy"] | undefined

        // Returns false once the window is full.
        const endLine = (): boolean => {
          seen++
          if (seen >= first) {
            if (current.endsWith("\r") && currentLength === current.length) current = current.slice(0, -1)
            const line =
              currentLength > maxLineLength
                ? `${headOf(current, maxLineLength)}… [${currentLength - maxLineLength} more characters]`
                : current
            const size = Buffer.byteLength(line) + 8
            if (bytes + size > maxBytes && lines.length > 0) {
              stoppedBy = "bytes"
              return false
            }
            lines.push(line)
            bytes += size
            if (lines.length >= count) {
              stoppedBy = "limit"
              return false
            }
          }
          current = ""
          currentLength = 0
          return true
        }
        // Text decoded but not consumed when the window filled up.
        let leftover = ""
        const addText = (text: string): void => {
          let start = 0
          for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
            append(text.slice(start, newline))
            start = newline + 1
            if (!endLine()) {
              leftover = text.slice(start)
              return
            }
          }
          append(text.slice(start))
        }
        const append = (piece: string) => {
          // Lines before the window are only counted; long lines keep just what is shown.
          if (seen + 1 >= first && current.length <= maxLineLength) current += piece.slice(0, maxLineLength + 1)
          currentLength += piece.length
        }

        // Where decoding put U+FFFD for bytes that are not UTF-8, before addText counts the lines.
        const noteNotUtf8 = (text: string): void => {
          const at = text.indexOf("\uFFFD")
          notUtf8Line = seen + lineAt(text, at === -1 ? text.length : at)
        }

        while (stoppedBy === undefined) {
          const { bytesRead } = yield* readAt(handle, buffer, cut, CHUNK_BYTES, position)
          position += bytesRead
          if (bytesRead === 0) {
            const text = decoder.decode()
            if (notUtf8Line === undefined && cut > 0) noteNotUtf8(text)
            addText(text)
            if (stoppedBy === undefined && currentLength > 0) endLine()
            stoppedBy = stoppedBy ?? "end"
            break
          }
          const text = decoder.decode(buffer.subarray(cut, cut + bytesRead), { stream: true })
          if (notUtf8Line === undefined) {
            const chunk = buffer.subarray(0, cut + bytesRead)
            const tail = incompleteUtf8Tail(chunk)
            if (isUtf8(chunk.subarray(0, chunk.length - tail))) {
              buffer.copyWithin(0, chunk.length - tail, chunk.length)
              cut = tail
            } else {
              noteNotUtf8(text)
              cut = 0
            }
          }
          addText(text)
        }
        if (stoppedBy === "limit" && leftover === "") {
          // A window that ends exactly at the last line is the whole rest of the file.
          const { bytesRead } = yield* readAt(handle, buffer, 0, 1, position)
          if (bytesRead === 0) stoppedBy = "end"
        }
        return { lines, first, seen, stoppedBy: stoppedBy ?? "end", notUtf8Line }
      }),
    (handle) => Effect.promise(() => handle.close())
  )
