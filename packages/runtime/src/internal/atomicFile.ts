// The one atomic file writer of the runtime's state: a private temp file beside the target,
// fsynced, then renamed over it, so a reader (or a crash) never sees half a file.
import { randomUUID } from "node:crypto"
import { mkdir, open, rename, rm } from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { PRIVATE_FILE, PRIVATE_FOLDER, tightenNow } from "./privateFiles.js"

/** A write that did not happen; `cause` is the Node error (map it with `errno.ts`). */
export class FileWriteError extends Data.TaggedError("FileWriteError")<{
  readonly path: string
  readonly cause: unknown
}> {}

/**
 * Writes `data` to `file` atomically with mode 0600; missing folders are created 0700 and the
 * file's folder is narrowed to 0700 if it was wider (ST-6). Uninterruptible once started, so no
 * temp file is left behind; a failed write removes its temp file and leaves the target as it was.
 */
export const writeFileAtomic = (file: string, data: string | Uint8Array): Effect.Effect<void, FileWriteError> =>
  Effect.tryPromise({
    try: async () => {
      const folder = dirname(file)
      await mkdir(folder, { recursive: true, mode: PRIVATE_FOLDER })
      // mkdir's mode passes through the umask, and a folder made earlier may be wider.
      await tightenNow(folder)
      const temp = join(folder, `.${basename(file)}.${randomUUID()}.tmp`)
      try {
        const handle = await open(temp, "wx", PRIVATE_FILE)
        try {
          await handle.chmod(PRIVATE_FILE)
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
