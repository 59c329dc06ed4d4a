import { constants, type Stats } from "node:fs"
import * as fs from "node:fs/promises"
import { ToolError } from "@alisio/domain/Errors"
import * as Effect from "effect/Effect"
import * as Atomic from "../../internal/atomicFile.js"
import { errnoCode } from "../../internal/errno.js"
import { headOf } from "./outputBuffer.js"
import { fsError, type ResolvedPath, tryFs } from "./workspace.js"

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

/**
 * Opens a file to read it without ever waiting for data (TL-6). A regular file ignores the flag;
 * a stream that only looks like one, such as `/proc/kmsg`, or a pipe put in a file's place since
 * it was looked at, answers `EAGAIN` instead of blocking a thread of libuv's pool for ever, where
 * neither the run's timeout nor Ctrl-C could reach it.
 */
export const openForReading = (absolute: string, display: string): Effect.Effect<fs.FileHandle, ToolError> =>
  tryFs(display, () => fs.open(absolute, constants.O_RDONLY | constants.O_NONBLOCK))

/** Whether a failed read found no data yet on a stream opened by `openForReading`. */
export const wouldBlock = (error: unknown): boolean => {
  const code = errnoCode(error)
  return code === "EAGAIN" || code === "EWOULDBLOCK"
}

/**
 * Text in UTF-16, told by its byte order mark: its NUL bytes make it look binary, but it is text
 * (Windows tools write it) that `iconv` turns into UTF-8. The advice, naming the file.
 */
export const utf16Advice = (sample: Uint8Array, display: string): string | undefined => {
  const order =
    sample[0] === 0xff && sample[1] === 0xfe ? "LE" : sample[0] === 0xfe && sample[1] === 0xff ? "BE" : undefined
  if (order === undefined) return undefined
  const quoted = /^[\w./-]+$/.test(display) ? display : `'${display.replaceAll("'", "'\\''")}'`
  return (
    `${display} is UTF-16 text (${order}), not UTF-8; see it with bash: iconv -f UTF-16 -t UTF-8 ${quoted}, ` +
    "and convert it the same way (to a new file) before changing it"
  )
}

/** Reads up to `SNIFF_BYTES` from the start of a file. */
export const readSample = (absolute: string, display: string): Effect.Effect<Uint8Array, ToolError> =>
  Effect.acquireUseRelease(
    openForReading(absolute, display),
    (handle) =>
      tryFs(display, async () => {
        const buffer = new Uint8Array(SNIFF_BYTES)
        const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0)
        return buffer.subarray(0, bytesRead)
      }),
    (handle) => Effect.promise(() => handle.close())
  )

/**
 * The stat of a file that must exist. When it is missing because the path is a dangling symlink,
 * the error says so (a plain "does not exist" would contradict `ls`, which lists the link), and
 * gives `remedy`.
 */
export const statExisting = (target: ResolvedPath, remedy?: string | undefined): Effect.Effect<Stats, ToolError> =>
  Effect.tryPromise({ try: () => fs.stat(target.real), catch: (error) => error }).pipe(
    Effect.catchAll((error) =>
      Effect.promise(() =>
        errnoCode(error) === "ENOENT" ? fs.readlink(target.absolute).catch(() => undefined) : Promise.resolve(undefined)
      ).pipe(
        Effect.flatMap((link) =>
          Effect.fail(
            link === undefined
              ? fsError(target.display)(error)
              : new ToolError({
                  message: `${target.display} is a symlink to ${link}, which does not exist${remedy === undefined ? "" : `; ${remedy}`}`
                })
          )
        )
      )
    )
  )

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

/**
 * Writes a file of the workspace, `existing` being its stat when it exists. Atomically, through a
 * temporary sibling and a rename (readers never see half a file; missing parent folders are made,
 * a replaced file keeps its mode), except over a file with other hard links: the rename would give
 * this name a new inode and leave the other names on the old content, so that file is truncated
 * and written in place, keeping its inode, mode and owner, at the cost of atomicity (a reader may
 * see it half written, and a failure midway, such as a full disk, leaves it so).
 */
export const writeWorkspaceFile = (
  real: string,
  display: string,
  content: string,
  existing: { readonly nlink: number } | undefined
): Effect.Effect<void, ToolError> =>
  existing !== undefined && existing.nlink > 1
    ? Effect.uninterruptible(tryFs(display, () => writeInPlace(real, content)))
    : Atomic.writeFileAtomic(real, content, "workspace").pipe(Effect.mapError((error) => fsError(display)(error.cause)))

const writeInPlace = async (file: string, content: string): Promise<void> => {
  // No O_CREAT: a file removed since it was looked at is an error, not made anew.
  const handle = await fs.open(file, constants.O_WRONLY | constants.O_TRUNC)
  try {
    await handle.writeFile(content)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** How `read` and `edit` describe a file that is not UTF-8, `line` holding its first other byte. */
export const notUtf8 = (display: string, line: number): string =>
  `${display} is not UTF-8 text (line ${line} holds bytes of another encoding, such as Latin-1)`

/**
 * How many bytes at the end of a chunk begin a UTF-8 sequence the next chunk may complete (0 to
 * 3): `isUtf8` checks a chunk without them, and they are checked again at the head of the next one.
 */
export const incompleteUtf8Tail = (bytes: Uint8Array): number => {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!
    if ((byte & 0xc0) === 0x80) continue
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return length > back ? back : 0
  }
  return 0
}

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
  length <= max ? line : `${headOf(line, max)}… [${length - max} more characters]`

/** A size in bytes for people: `512 B`, `12.3 KiB`, `4.0 MiB`. */
export const formatBytes = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MiB`
