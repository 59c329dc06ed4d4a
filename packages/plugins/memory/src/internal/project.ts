// Which project a memory belongs to: an id derived from the workspace's real path. A linked git
// worktree (a subagent's, or any `git worktree add` of the repository) is its main worktree: the
// same folder there (the same subfolder of the repository) is the same project.
import { createHash } from "node:crypto"
import { lstat, readFile, realpath } from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"

/** The project of a workspace. */
export interface Project {
  /** Where its memories are saved and found. */
  readonly id: string
  /**
   * The id of the workspace's own path, which a linked worktree had before it was mapped to its
   * main worktree: what was saved under it stays readable there. Equal to `id` elsewhere.
   */
  readonly ownId: string
}

const idOfPath = (real: string) => createHash("sha256").update(real).digest("hex").slice(0, 16)

const realOrResolved = (target: string) => realpath(target).catch(() => path.resolve(target))

const readText = (file: string) => readFile(file, "utf8").catch(() => undefined)

/** The folder holding `.git` above `real` and whether `.git` there is a file (a link to a git dir). */
const worktreeRootOf = async (real: string): Promise<string | undefined> => {
  for (let dir = real; ; dir = path.dirname(dir)) {
    const found = await lstat(path.join(dir, ".git")).catch(() => undefined)
    if (found?.isDirectory()) return undefined
    if (found?.isFile()) return dir
    if (path.dirname(dir) === dir) return undefined
  }
}

/**
 * Where `real` lies in the main worktree when it lies in a linked worktree, read from the files
 * git keeps (no git process): `<root>/.git` names the worktree's git dir, whose `commondir` is the
 * repository's. The repository must list the worktree (`<common>/worktrees/<name>/gitdir` leads
 * back to it), so a folder cannot claim another project by writing a `.git` file. A submodule or
 * a separate git dir has no `commondir`: it is a project of its own. A bare repository's worktrees
 * share the repository's path.
 */
const mainWorktreePathOf = async (real: string): Promise<string | undefined> => {
  const root = await worktreeRootOf(real)
  if (root === undefined) return undefined
  const link = /^gitdir:\s*(.+?)\s*$/m.exec((await readText(path.join(root, ".git"))) ?? "")
  if (link === null) return undefined
  const gitDir = await realpath(path.resolve(root, link[1]!)).catch(() => undefined)
  if (gitDir === undefined) return undefined
  const common = (await readText(path.join(gitDir, "commondir")))?.trim()
  if (common === undefined || common === "") return undefined
  const commonDir = await realpath(path.resolve(gitDir, common)).catch(() => undefined)
  if (commonDir === undefined || path.dirname(gitDir) !== path.join(commonDir, "worktrees")) return undefined
  const back = (await readText(path.join(gitDir, "gitdir")))?.trim()
  if (back === undefined || (await realOrResolved(path.resolve(gitDir, back))) !== path.join(root, ".git")) {
    return undefined
  }
  const mainRoot = path.basename(commonDir) === ".git" ? path.dirname(commonDir) : commonDir
  return path.join(mainRoot, path.relative(root, real))
}

/** The project of the workspace `cwd`; a path that cannot be resolved is used as given. */
export const projectOf = (cwd: string): Effect.Effect<Project> =>
  Effect.promise(async () => {
    const real = await realOrResolved(cwd)
    const main = await mainWorktreePathOf(real).catch(() => undefined)
    return { id: idOfPath(main ?? real), ownId: idOfPath(real) }
  })

/** The first 16 hex digits of sha256 of the project's path (the main worktree's for a linked one). */
export const projectIdOf = (cwd: string): Effect.Effect<string> => Effect.map(projectOf(cwd), (project) => project.id)
