// Small, bounded reads of the user's own files (instructions, templates, skills). A file or folder
// that is not there is simply absent; these never walk the workspace.

import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { terminalSafe } from "../../TerminalText.js"

/**
 * The text of bytes that start with a UTF-16 byte order mark (what Windows PowerShell 5's `>` and
 * Notepad's "Unicode" write), without it; `undefined` for any other bytes.
 */
const utf16Of = (bytes: Buffer): string | undefined => {
  const little = bytes[0] === 0xff && bytes[1] === 0xfe
  const big = bytes[0] === 0xfe && bytes[1] === 0xff
  if (!little && !big) return undefined
  const body = Buffer.from(bytes.subarray(2, 2 + ((bytes.length - 2) & ~1)))
  if (big) body.swap16()
  return body.toString("utf16le").replace(/[\uD800-\uDBFF]$/, "")
}

/**
 * Up to `bytes` bytes of a file as UTF-8 (or UTF-16 with its byte order mark), and its whole size; `undefined` when it cannot be read.
 * The text goes to the model, so escape sequences, control characters and the invisible ones that
 * reorder text are left out; `whole` says it was read to its end, `binary` that the file held NUL bytes (it is not text at all).
 */
export const readPrefix = (
  file: string,
  bytes: number
): Effect.Effect<
  { readonly text: string; readonly size: number; readonly whole: boolean; readonly binary: boolean } | undefined
> =>
  Effect.promise(async () => {
    let handle: fs.FileHandle | undefined
    try {
      // Checked before the open, which would wait for a writer if the file were a pipe.
      if (!(await fs.stat(file)).isFile()) return undefined
      handle = await fs.open(file, "r")
      const stat = await handle.stat()
      if (!stat.isFile()) return undefined
      const length = Math.min(stat.size, bytes)
      const buffer = Buffer.alloc(length)
      let read = 0
      while (read < length) {
        const { bytesRead } = await handle.read(buffer, read, length - read, read)
        if (bytesRead === 0) break
        read += bytesRead
      }
      // A cut in the middle of a character leaves a replacement character at the end: dropped.
      const bytesRead = buffer.subarray(0, read)
      const utf16 = utf16Of(bytesRead)
      const text = utf16 ?? bytesRead.toString("utf8")
      return {
        text: terminalSafe(read < stat.size ? text.replace(/\uFFFD+$/, "") : text),
        size: stat.size,
        whole: read >= stat.size,
        binary: utf16 === undefined ? bytesRead.includes(0) : utf16.includes("\u0000")
      }
    } catch {
      return undefined
    } finally {
      await handle?.close().catch(() => undefined)
    }
  })

/** The size of a regular file (following links), or `undefined`. */
export const fileSize = (file: string): Effect.Effect<number | undefined> =>
  Effect.promise(() =>
    fs.stat(file).then(
      (stat) => (stat.isFile() ? stat.size : undefined),
      () => undefined
    )
  )

/** The real path of `file` (every link resolved), or `undefined`. */
export const realFile = (file: string): Effect.Effect<string | undefined> =>
  Effect.promise(() =>
    fs.realpath(file).then(
      (real) => real,
      () => undefined
    )
  )

/** Whether `target` is `folder` or inside it. */
export const isInside = (target: string, folder: string): boolean => {
  const relative = path.relative(folder, target)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

/**
 * Where `file` really is (links resolved, its folders' included) when that is outside `within`, the
 * project's real folder; `undefined` when it stays inside or is not there. A project's file that
 * links out (`~/.ssh/id_rsa`) is never read into the model's context.
 */
export const linksOutside = (file: string, within: string): Effect.Effect<string | undefined> =>
  Effect.map(realFile(file), (real) => (real === undefined || isInside(real, within) ? undefined : real))

/** Whether anything is at `file`. */
export const exists = (file: string): Effect.Effect<boolean> =>
  Effect.promise(() =>
    fs.stat(file).then(
      () => true,
      () => false
    )
  )

/** The entries of a folder (names, sorted), with whether each is a folder (following links); none when absent. */
export const entries = (
  folder: string
): Effect.Effect<ReadonlyArray<{ readonly name: string; readonly folder: boolean }>> =>
  Effect.promise(async () => {
    try {
      const dirents = await fs.readdir(folder, { withFileTypes: true })
      const listed = await Promise.all(
        dirents.map(async (dirent) => {
          const isFolder = dirent.isSymbolicLink()
            ? await fs.stat(`${folder}/${dirent.name}`).then(
                (stat) => stat.isDirectory(),
                () => false
              )
            : dirent.isDirectory()
          return { name: dirent.name, folder: isFolder }
        })
      )
      return listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    } catch {
      return []
    }
  })
