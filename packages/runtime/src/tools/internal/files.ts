import { constants } from "node:fs"
import * as fs from "node:fs/promises"
import { ToolError } from "@alisio/domain/Errors"
import * as Effect from "effect/Effect"
import * as Atomic from "../../internal/atomicFile.js"
import { fsError, tryFs } from "./workspace.js"

/** How many leading bytes decide whether a file is binary. */
export const SNIFF_BYTES = 8192

/**
 * A NUL byte, or over 10 % control characters, in the first `SNIFF_BYTES` of `length` bytes mark
 * a file as binary (backspace, tab, line feed, vertical tab, form feed, carriage return and escape
 * appear in text). Self-contained, with nothing from outside its body: grep's search thread runs
 * its text (`searchWorker.ts`).
 */
export function looksBinary(bytes: Uint8Array, length: number = bytes.length): boolean {
  const end = Math.min(length, 8192)
  let control = 0
  for (let i = 0; i < end; i++) {
    const byte = bytes[i]!
    if (byte === 0) return true
    if (byte < 32 && byte !== 8 && (byte < 9 || byte > 13) && byte !== 27) control++
  }
  return end > 0 && control / end > 0.1
}

const signatures: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
  ["a PNG image", [0x89, 0x50, 0x4e, 0x47]],
  ["a JPEG image", [0xff, 0xd8, 0xff]],
  ["a GIF image", [0x47, 0x49, 0x46, 0x38]],
  ["a PDF document", [0x25, 0x50, 0x44, 0x46]],
  ["a zip archive", [0x50, 0x4b, 0x03, 0x04]],
  ["a gzip archive", [0x1f, 0x8b]],
  ["an ELF executable", [0x7f, 0x45, 0x4c, 0x46]],
  ["a WebAssembly module", [0x00, 0x61, 0x73, 0x6d]],
  ["an SQLite database", [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65]]
]

/** A short description of a binary file's kind from its magic bytes, when known. */
export const binaryKind = (sample: Uint8Array): string | undefined =>
  signatures.find(([, magic]) => magic.every((byte, i) => sample[i] === byte))?.[0]

/** Reads up to `SNIFF_BYTES` from the start of a file. */
export const readSample = (absolute: string, display: string): Effect.Effect<Uint8Array, ToolError> =>
  Effect.acquireUseRelease(
    tryFs(display, () => fs.open(absolute, "r")),
    (handle) =>
      tryFs(display, async () => {
        const buffer = new Uint8Array(SNIFF_BYTES)
        const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0)
        return buffer.subarray(0, bytesRead)
      }),
    (handle) => Effect.promise(() => handle.close())
  )

/**
 * Writes a file through a temporary sibling and a rename, so readers never see half a file.
 * Creates missing parent folders; keeps the mode of a file it replaces.
 */
/**
 * Refuses to replace an existing file that is read-only (no write bit), or that this user may not
 * write: the rename of an atomic write needs only the folder's permission, so it would replace the
 * file where writing it in place would fail.
 */
export const checkWritable = (
  real: string,
  display: string,
  mode: number,
  tool: string
): Effect.Effect<void, ToolError> => {
  const remedy = "make it writable first (chmod u+w) if it is meant to change"
  if ((mode & 0o222) === 0) {
    const octal = (mode & 0o7777).toString(8).padStart(4, "0")
    return Effect.fail(
      new ToolError({ message: `${display} is read-only (mode ${octal}); ${tool} leaves it as it is: ${remedy}` })
    )
  }
  return Effect.tryPromise({
    try: () => fs.access(real, constants.W_OK),
    catch: () =>
      new ToolError({ message: `${display} may not be written by this user; ${tool} leaves it as it is: ${remedy}` })
  })
}

export const writeFileAtomic = (target: string, display: string, content: string): Effect.Effect<void, ToolError> =>
  Atomic.writeFileAtomic(target, content, "workspace").pipe(Effect.mapError((error) => fsError(display)(error.cause)))

/** Counts lines the way editors do: a trailing newline does not start another line. */
export const countLines = (text: string): number => {
  if (text.length === 0) return 0
  let lines = 1
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++
  return text.endsWith("\n") ? lines - 1 : lines
}

/** The 1-based line number at a character offset. */
export const lineAt = (text: string, offset: number): number => {
  let line = 1
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++
  return line
}

/** Cuts an over-long line for display; `length` is the whole line's when `line` is already its head. */
export const clipLine = (line: string, max: number, length: number = line.length): string =>
  length <= max ? line : `${line.slice(0, max)}… [${length - max} more characters]`

/** A size in bytes for people: `512 B`, `12.3 KiB`, `4.0 MiB`. */
export const formatBytes = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MiB`
