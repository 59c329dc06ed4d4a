import type { Dirent } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { ToolError } from "@alisio/domain/Errors"
import * as Effect from "effect/Effect"
import { tryFs } from "./workspace.js"

/** Folders a walk does not enter unless asked: version-control data and installed packages. */
export const IGNORED_DIRECTORIES: ReadonlySet<string> = new Set([".git", "node_modules"])

export interface WalkEntry {
  /** `/`-separated, relative to the walk's root. */
  readonly relative: string
  readonly name: string
  readonly kind: "file" | "directory" | "symlink" | "other"
  /** A folder the walk does not enter (see `IGNORED_DIRECTORIES`). */
  readonly ignored: boolean
}

export interface WalkOptions<E = never> {
  readonly includeIgnored: boolean
  /** Whether to enter a folder; everything is entered when absent. Symlinked folders never are. */
  readonly descend?: (relativeDirectory: string) => boolean
  /** Called for each entry in sorted depth-first order; `false` stops the walk. */
  readonly visit: (entry: WalkEntry) => Effect.Effect<boolean, E>
}

/**
 * Walks a folder tree in a stable order (names sorted by code unit, depth first). Folders that
 * cannot be read below the root are passed over; the root itself must be readable.
 * Returns whether the walk was stopped by `visit`.
 */
export const walk = <E = never>(
  root: string,
  display: string,
  options: WalkOptions<E>
): Effect.Effect<boolean, ToolError | E> => {
  const kindOf = (entry: Dirent): WalkEntry["kind"] =>
    entry.isFile() ? "file" : entry.isDirectory() ? "directory" : entry.isSymbolicLink() ? "symlink" : "other"

  const visitDirectory = (relativeDirectory: string): Effect.Effect<boolean, ToolError | E> =>
    Effect.gen(function* () {
      const read = tryFs(display, () => fs.readdir(path.join(root, relativeDirectory), { withFileTypes: true }))
      const entries = relativeDirectory === "" ? yield* read : yield* Effect.orElseSucceed(read, () => [])
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      for (const dirent of entries) {
        const relative = relativeDirectory === "" ? dirent.name : `${relativeDirectory}/${dirent.name}`
        const kind = kindOf(dirent)
        const ignored = kind === "directory" && !options.includeIgnored && IGNORED_DIRECTORIES.has(dirent.name)
        if (!(yield* options.visit({ relative, name: dirent.name, kind, ignored }))) return true
        if (kind === "directory" && !ignored && (options.descend?.(relative) ?? true)) {
          if (yield* visitDirectory(relative)) return true
        }
      }
      return false
    })

  return visitDirectory("")
}
