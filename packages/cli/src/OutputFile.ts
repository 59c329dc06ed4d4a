import { randomUUID } from "node:crypto"
import { open, realpath, rename, rm, stat, writeFile } from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { CliError, ExitCode, usageError } from "./CliError.js"

// `--output-last-message <file>`: a file of the person's choosing, written whole or not at all.
// Not the runtime's atomic writer: that one keeps Alisio's state private (0600, folders narrowed
// to 0700), which is wrong for a file in someone's project. Here the file gets the usual mode.

// The system's codes, said as a person would (ENOSPC means nothing to most).
const reasons: Readonly<Record<string, string>> = {
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  EFBIG: "the file is too large",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "the file system is read-only",
  EIO: "an input/output error"
}

const reason = (cause: unknown): string => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined
  return code === undefined ? String(cause) : (reasons[code] ?? code)
}

/**
 * Fails before the work when its file could not be written after it: its folder must exist, and it
 * must not be one. `flag` names the option in the message.
 */
export const checkFolder = (file: string, flag = "--output-last-message"): Effect.Effect<void, CliError> =>
  Effect.tryPromise({
    try: () => stat(path.dirname(path.resolve(file))),
    catch: () => usageError(`${flag}: the folder of ${file} does not exist`)
  }).pipe(
    Effect.filterOrFail(
      (folder) => folder.isDirectory(),
      () => usageError(`${flag}: ${path.dirname(file)} is not a folder`)
    ),
    Effect.zipRight(
      Effect.promise(() => stat(path.resolve(file)).catch(() => undefined)).pipe(
        Effect.filterOrFail(
          (existing) => existing === undefined || !existing.isDirectory(),
          () => usageError(`${flag}: ${file} is a folder; give the path of a file to write`)
        )
      )
    ),
    Effect.asVoid
  )

/**
 * Writes `text` to `file` through a temporary file renamed over it, so no reader sees half of it;
 * `mode` is the new file's (the umask applies). A link is followed (the file it names is replaced,
 * the link stays), and what is no file (`/dev/stdout`, a pipe, a device) is written to as it is:
 * a rename would put a file in its place.
 */
export const writeAtomically = (file: string, text: string, mode = 0o666): Effect.Effect<void, CliError> =>
  Effect.tryPromise({
    try: async () => {
      const existing = await stat(path.resolve(file)).catch(() => undefined)
      if (existing !== undefined && !existing.isFile()) return writeFile(path.resolve(file), text)
      const target = existing === undefined ? path.resolve(file) : await realpath(path.resolve(file))
      const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}.tmp`)
      try {
        const handle = await open(temp, "wx", mode)
        try {
          await handle.writeFile(text)
          await handle.sync()
        } finally {
          await handle.close()
        }
        await rename(temp, target)
      } catch (error) {
        await rm(temp, { force: true })
        throw error
      }
    },
    catch: (cause) => new CliError({ message: `could not write ${file} (${reason(cause)})`, exitCode: ExitCode.failed })
  }).pipe(Effect.uninterruptible)

/**
 * As `writeAtomically`, for output made piece by piece (an export larger than a string can hold):
 * `body` gets `append`, whose pieces go to the temporary file as they come; the file is renamed
 * over `file` only when `body` succeeds, and removed otherwise.
 */
export const writeAtomicallyWith = <E, R>(
  file: string,
  mode: number,
  body: (append: (text: string) => Effect.Effect<void, CliError>) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | CliError, R> => {
  const failed = (cause: unknown) =>
    new CliError({ message: `could not write ${file} (${reason(cause)})`, exitCode: ExitCode.failed })
  return Effect.gen(function* () {
    const existing = yield* Effect.promise(() => stat(path.resolve(file)).catch(() => undefined))
    const direct = existing !== undefined && !existing.isFile()
    const target = direct
      ? path.resolve(file)
      : existing === undefined
        ? path.resolve(file)
        : yield* Effect.tryPromise({ try: () => realpath(path.resolve(file)), catch: failed })
    const temp = direct ? target : path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}.tmp`)
    const removeTemp = direct ? Effect.void : Effect.promise(() => rm(temp, { force: true }))
    yield* Effect.acquireUseRelease(
      Effect.tryPromise({ try: () => open(temp, direct ? "w" : "wx", mode), catch: failed }),
      (handle) =>
        Effect.gen(function* () {
          yield* body((text) => Effect.tryPromise({ try: () => handle.write(text), catch: failed }))
          if (!direct) yield* Effect.tryPromise({ try: () => handle.sync(), catch: failed })
        }),
      (handle) => Effect.promise(() => handle.close())
    ).pipe(Effect.onError(() => removeTemp))
    if (!direct) {
      yield* Effect.tryPromise({ try: () => rename(temp, target), catch: failed }).pipe(
        Effect.onError(() => removeTemp)
      )
    }
  })
}
