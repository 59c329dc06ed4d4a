// The one atomic file writer of the runtime's state: a private temp file beside the target,
// fsynced, then renamed over it, so a reader (or a crash) never sees half a file.
import { randomUUID } from "node:crypto"
import { open, readdir, rename, rm, stat } from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { makeFolders } from "../Folders.js"
import { signalZero } from "../ProcessOwner.js"
import { PRIVATE_FILE, PRIVATE_FOLDER, tightenNow } from "./privateFiles.js"

/** A write that did not happen; `cause` is the Node error (map it with `errno.ts`). */
export class FileWriteError extends Data.TaggedError("FileWriteError")<{
  readonly path: string
  readonly cause: unknown
}> {}

/**
 * How the written file is kept: `private` state (0600, its folder created or narrowed to 0700:
 * ST-6, the default), or a `workspace` file (an existing file keeps its mode, a new one gets the
 * umask's; folders are created as usual).
 */
export type AtomicWriteKind = "private" | "workspace"

const currentMode = (file: string) =>
  stat(file).then(
    (found) => found.mode & 0o7777,
    () => undefined
  )

/**
 * Removes the temp files of `file` that processes killed mid-write (kill -9, a power cut) left
 * beside it (`.<name>.<pid>.<uuid>.tmp`, the pid gone); those of live writers stay.
 */
const removeLeftTemps = async (folder: string, name: string): Promise<void> => {
  const prefix = `.${name}.`
  const entries = await readdir(folder).catch(() => [] as Array<string>)
  for (const entry of entries) {
    if (!entry.startsWith(prefix) || !entry.endsWith(".tmp")) continue
    const pid = Number(/^(\d+)\.[0-9a-f-]{36}\.tmp$/.exec(entry.slice(prefix.length))?.[1])
    if (Number.isSafeInteger(pid) && pid > 0 && !signalZero(pid)) await rm(join(folder, entry), { force: true })
  }
}

/**
 * Writes `data` to `file` atomically: a temp file beside it, fsynced, renamed over it.
 * Uninterruptible once started, so no temp file is left behind; a failed write removes its temp
 * file and leaves the target as it was.
 */
export const writeFileAtomic = (
  file: string,
  data: string | Uint8Array,
  kind: AtomicWriteKind = "private"
): Effect.Effect<void, FileWriteError> =>
  Effect.tryPromise({
    try: async () => {
      const folder = dirname(file)
      const isPrivate = kind === "private"
      await makeFolders(folder, isPrivate ? PRIVATE_FOLDER : undefined)
      // mkdir's mode passes through the umask, and a folder made earlier may be wider.
      if (isPrivate) await tightenNow(folder)
      const mode = isPrivate ? PRIVATE_FILE : await currentMode(file)
      await removeLeftTemps(folder, basename(file))
      const temp = join(folder, `.${basename(file)}.${process.pid}.${randomUUID()}.tmp`)
      try {
        const handle = await open(temp, "wx", mode ?? 0o666)
        try {
          if (mode !== undefined) await handle.chmod(mode)
          await handle.writeFile(data)
          await handle.sync()
        } finally {
          await handle.close()
        }
        await rename(temp, file)
      } catch (error) {
        await rm(temp, { force: true })
        throw error
      }
    },
    catch: (cause) => new FileWriteError({ path: file, cause })
  }).pipe(Effect.uninterruptible)
