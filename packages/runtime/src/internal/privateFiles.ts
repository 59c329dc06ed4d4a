// State is private (ST-6): folders 0700 and files 0600, and what already exists is narrowed to
// that — group and other bits removed — rather than left as an older Alisio (or a umask) made it.
import { chmod, stat } from "node:fs/promises"
import * as Effect from "effect/Effect"

export const PRIVATE_FOLDER = 0o700
export const PRIVATE_FILE = 0o600

/** A path whose mode was narrowed: what it was and what it is now. */
export interface Tightened {
  readonly path: string
  readonly from: number
  readonly to: number
}

/**
 * Removes the group and other bits of `path` when it has any; a missing path, or one this user
 * cannot change, is left alone (opening it will say what is wrong, if anything is).
 */
export const tightenNow = async (path: string): Promise<Tightened | undefined> => {
  const mode = await stat(path).then(
    (found) => found.mode & 0o7777,
    () => undefined
  )
  if (mode === undefined || (mode & 0o077) === 0) return undefined
  const to = mode & ~0o077
  return chmod(path, to).then(
    () => ({ path, from: mode, to }),
    () => undefined
  )
}

/** `tightenNow` for each path, in order; the ones that changed. */
export const tighten = (paths: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Tightened>> =>
  Effect.promise(async () => {
    const changed: Array<Tightened> = []
    for (const path of paths) {
      const tightened = await tightenNow(path)
      if (tightened !== undefined) changed.push(tightened)
    }
    return changed
  })

export const formatMode = (mode: number): string => `0${(mode & 0o777).toString(8)}`
