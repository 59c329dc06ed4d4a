// Where a plugin's database file goes: a relative path kept inside the plugin's state folder.
import { constants as fsConstants } from "node:fs"
import { chmod, lstat, mkdir, open, realpath } from "node:fs/promises"
import * as path from "node:path"
import { PluginError } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import { makeFolders } from "../Folders.js"

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code

const detailOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const isInside = (root: string, candidate: string): boolean => {
  const rel = path.relative(root, candidate)
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel)
}

/**
 * Checks `relative` against `folder` and prepares it: missing parent folders are created 0700 and
 * the file itself 0600. Refused: an empty or absolute path, any `..` segment, a NUL byte, and a
 * symbolic link (folder or file) whose target lies outside the folder. Returns the real path.
 *
 * This keeps a plugin's files where the user expects them; it is not a sandbox (plugins run in
 * this process), so the check-then-open race with a hostile local process is out of scope.
 */
export const prepareDatabasePath = (
  pluginId: string,
  folder: string,
  relative: string
): Effect.Effect<string, PluginError> => {
  const refuse = (
    why: string,
    remedy = `Give a relative path inside the plugin's state folder, such as "memory.db".`
  ) => new PluginError({ pluginId, message: `storage.sqlite(${JSON.stringify(relative)}): ${why}. ${remedy}` })
  // Something on disk is in the way (a folder where the file goes, a link out): the path was fine.
  const inTheWay = (why: string) => refuse(why, "Move it aside (or remove it), and the file is made there.")
  return Effect.gen(function* () {
    if (typeof relative !== "string" || relative.trim() === "") return yield* refuse("the path is empty")
    if (relative.includes("\u0000")) return yield* refuse("the path holds a NUL byte")
    if (path.posix.isAbsolute(relative) || path.win32.isAbsolute(relative)) {
      return yield* refuse("the path is absolute")
    }
    const segments = relative.split(/[\\/]+/).filter((segment) => segment !== "" && segment !== ".")
    if (segments.includes("..")) return yield* refuse("the path climbs out with '..'")
    const name = /[\\/]$/.test(relative) ? undefined : segments.pop()
    if (name === undefined) return yield* refuse("the path names no file")

    const fsStep = <A>(what: string, run: () => Promise<A>) =>
      Effect.tryPromise({
        try: run,
        catch: (error) => refuse(`${what} (${detailOf(error)})`, "Check that folder and its permissions.")
      })
    const lstatOrMissing = (file: string) =>
      fsStep(`cannot inspect ${file}`, () =>
        lstat(file).catch((error: unknown) => {
          if (errnoOf(error) === "ENOENT") return undefined
          throw error
        })
      )
    yield* fsStep(`cannot create the folder ${folder}`, () => makeFolders(folder, 0o700))
    const root = yield* fsStep(`cannot resolve the folder ${folder}`, () => realpath(folder))

    const followInside = (link: string) =>
      Effect.flatMap(
        fsStep(`${link} is a symbolic link that leads nowhere`, () => realpath(link)),
        (target) =>
          isInside(root, target)
            ? Effect.succeed(target)
            : Effect.fail(inTheWay(`${link} is a symbolic link leading outside the folder`))
      )

    let current = root
    for (const segment of segments) {
      const next = path.join(current, segment)
      const stat = yield* lstatOrMissing(next)
      if (stat === undefined) {
        yield* fsStep(`cannot create the folder ${next}`, () => mkdir(next, { mode: 0o700 }))
        current = next
      } else if (stat.isSymbolicLink()) {
        current = yield* followInside(next)
      } else if (stat.isDirectory()) {
        current = next
      } else {
        return yield* inTheWay(`${next} is not a folder`)
      }
    }

    let file = path.join(current, name)
    const stat = yield* lstatOrMissing(file)
    if (stat?.isSymbolicLink() === true) file = yield* followInside(file)
    else if (stat !== undefined && !stat.isFile()) return yield* inTheWay(`${file} is not a file`)
    for (const companion of [`${file}-wal`, `${file}-shm`, `${file}-journal`]) {
      const companionStat = yield* lstatOrMissing(companion)
      if (companionStat?.isSymbolicLink() === true) return yield* inTheWay(`${companion} is a symbolic link`)
    }

    // SQLite gives the -wal and -shm files the mode of the database file, so 0600 here covers them.
    yield* fsStep(`cannot create ${file}`, async () => {
      const handle = await open(file, fsConstants.O_CREAT | fsConstants.O_RDWR | (fsConstants.O_NOFOLLOW ?? 0), 0o600)
      await handle.close()
      await chmod(file, 0o600)
    })
    return file
  })
}
