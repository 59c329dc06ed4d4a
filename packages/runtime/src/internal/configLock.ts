// One edit of a configuration file at a time: `config set` in two shells, or in a shell while the
// interactive UI runs `/model`, each read the file, changed it and renamed their copy over it, so
// the later one dropped the earlier one's change. An edit holds `<file>.lock` (made with O_EXCL,
// holding its process id) from its read to its rename; a lock whose process is gone, or older
// than any edit takes, is taken over.
import { randomUUID } from "node:crypto"
import { link, open, readFile, rename, rm, stat } from "node:fs/promises"
import { dirname } from "node:path"
import { ConfigError } from "@alisio/domain/Errors"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { makeFolders } from "../Folders.js"
import { errnoCode, errnoReason, errorDetail } from "./errno.js"
import { PRIVATE_FOLDER } from "./privateFiles.js"

/** An edit reads, checks and writes a small file: a lock this old was left by a process that hung. */
const STALE_MS = 30_000
const POLL = "25 millis"
const POLLS = 400

class Held extends Data.TaggedError("Held")<{ readonly pid: number | undefined }> {}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errnoCode(error) === "EPERM"
  }
}

/** A lock as it was seen: what it holds and which file it is. */
interface SeenLock {
  readonly text: string
  readonly ino: number | undefined
}

/**
 * Removes a lock judged stale, unless it is no longer the one judged: two processes that find the
 * same stale lock both try, and the later one would otherwise remove the fresh lock the earlier
 * one has just made, so both would edit. Renaming is atomic, so only one of them moves the stale
 * lock away; one that moved a fresh lock instead puts it back.
 */
export const takeOver = async (lock: string, seen: SeenLock): Promise<void> => {
  const moved = `${lock}.${process.pid}.${randomUUID().slice(0, 8)}`
  const took = await rename(lock, moved).then(
    () => true,
    () => false
  )
  if (!took) return
  const text = await readFile(moved, "utf8").catch(() => "")
  const ino = await stat(moved).then(
    (found) => found.ino,
    () => undefined
  )
  if (text !== seen.text || ino !== seen.ino) await link(moved, lock).catch(() => undefined)
  await rm(moved, { force: true })
}

/** Makes the lock; when it is there already, the process holding it, unless it is stale (then removed). */
const attempt = (lock: string, now: number, again = 2): Promise<"taken" | Held> =>
  open(lock, "wx", 0o600).then(
    async (handle) => {
      try {
        await handle.writeFile(`${process.pid}\n`)
      } catch (error) {
        // A full disk: an empty lock left behind would hold off every edit as "another alisio".
        await handle.close()
        await rm(lock, { force: true })
        throw error
      }
      await handle.close()
      return "taken" as const
    },
    async (error: unknown) => {
      if (errnoCode(error) === "ENOENT" && again > 0) {
        await makeFolders(dirname(lock), PRIVATE_FOLDER)
        return attempt(lock, now, again - 1)
      }
      if (errnoCode(error) !== "EEXIST") throw error
      const text = await readFile(lock, "utf8").catch(() => "")
      const pid = Number.parseInt(text.trim(), 10)
      const holder = Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
      const found = await stat(lock).catch(() => undefined)
      const age = found === undefined ? 0 : now - found.mtimeMs
      if (again > 0 && ((holder !== undefined && holder !== process.pid && !isAlive(holder)) || age > STALE_MS)) {
        await takeOver(lock, { text, ino: found?.ino })
        return attempt(lock, now, again - 1)
      }
      return new Held({ pid: holder })
    }
  )

/** Why `file` could not be written, in one line with the remedy; the file is as it was. */
export const writeFailure = (file: string, error: unknown): ConfigError => {
  const reason = errnoReason(error)
  const remedy =
    reason === "disk_full"
      ? "the disk is full; free some space and try again"
      : reason === "read_only"
        ? `its folder cannot be written (${errorDetail(error)}); make it writable, or set ALISIO_HOME to a folder you can write`
        : errorDetail(error)
  return new ConfigError({ message: `Could not write ${file}: ${remedy} (it is unchanged)`, file })
}

/**
 * Edits within this process take turns first: fibers share the process id a lock holds, and two
 * of them taking over the same stale lock at once would each remove the other's.
 */
const turns = new Map<string, Effect.Semaphore>()

const turnOf = (target: string): Effect.Semaphore => {
  let turn = turns.get(target)
  if (turn === undefined) {
    turn = Effect.unsafeMakeSemaphore(1)
    turns.set(target, turn)
  }
  return turn
}

/**
 * Holds `<target>.lock` for the scope, waiting up to ten seconds for another edit to end. The
 * waits can be interrupted (Ctrl-C): only taking and making the lock are not.
 */
export const lockForEdit = (target: string, file: string): Effect.Effect<void, ConfigError, Scope.Scope> =>
  Effect.zipRight(
    Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(
        restore(turnOf(target).take(1)),
        Effect.addFinalizer(() => turnOf(target).release(1))
      )
    ),
    holdLock(target, file)
  )

const holdLock = (target: string, file: string): Effect.Effect<void, ConfigError, Scope.Scope> => {
  const lock = `${target}.lock`
  const take = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.tryPromise({
      try: () => attempt(lock, now),
      catch: (error) => writeFailure(file, error)
    })
  ).pipe(Effect.flatMap((result) => (result === "taken" ? Effect.void : Effect.fail(result))))
  return Effect.acquireRelease(take, () => Effect.promise(() => rm(lock, { force: true }))).pipe(
    Effect.retry({
      while: (error) => error._tag === "Held",
      schedule: Schedule.recurs(POLLS).pipe(Schedule.addDelay(() => POLL))
    }),
    Effect.catchTag("Held", ({ pid }) =>
      Effect.fail(
        new ConfigError({
          message: `${file} is being changed by another alisio${pid === undefined ? "" : ` (process ${pid})`}; try again when it has finished, or remove ${lock} if no alisio is running`,
          file
        })
      )
    )
  )
}
