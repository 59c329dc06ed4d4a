// Which project a memory belongs to: an id derived from the workspace's real path. A linked git
// worktree (a subagent's, or any `git worktree add` of the repository) is its main worktree: the
// same folder there (the same subfolder of the repository) is the same project. A repository with
// a separate git dir is known by that git dir's path, in its main worktree and in its linked ones.
import { createHash } from "node:crypto"
import { lstat, readdir, readFile, realpath } from "node:fs/promises"
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
  /**
   * In a main worktree, the own ids of the same folder in the linked worktrees the repository lists
   * now: a `topic_key` saved there before they were mapped is found by a save here.
   */
  readonly linkedIds: ReadonlyArray<string>
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
 * The path a repository's worktrees share, from its common git dir: the main worktree's folder for
 * a `.git` folder; the git dir itself for a separate git dir (`git init --separate-git-dir`, a
 * submodule's `modules/<name>`, a bare repository), since git records no main folder for it.
 */
const sharedPathOf = (commonDir: string) => (path.basename(commonDir) === ".git" ? path.dirname(commonDir) : commonDir)

/**
 * Where `real` lies in the main worktree when it lies in a linked worktree, read from the files
 * git keeps (no git process): `<root>/.git` names the worktree's git dir, whose `commondir` is the
 * repository's. The repository must list the worktree (`<common>/worktrees/<name>/gitdir` leads
 * back to it), so a folder cannot claim another project by writing a `.git` file. The main
 * worktree of a separate git dir (a `.git` file naming a git dir with no `commondir`, not named
 * `.git`) shares that git dir's path with its linked worktrees: git itself treats such a folder
 * as that repository. A `.git` file naming another folder's `.git` is ignored.
 */
const mainWorktreePathOf = async (real: string): Promise<string | undefined> => {
  const root = await worktreeRootOf(real)
  if (root === undefined) return undefined
  const link = /^gitdir:\s*(.+?)\s*$/m.exec((await readText(path.join(root, ".git"))) ?? "")
  if (link === null) return undefined
  const gitDir = await realpath(path.resolve(root, link[1]!)).catch(() => undefined)
  if (gitDir === undefined) return undefined
  const common = (await readText(path.join(gitDir, "commondir")))?.trim()
  if (common === undefined || common === "") {
    if (path.basename(gitDir) === ".git" || (await readText(path.join(gitDir, "HEAD"))) === undefined) return undefined
    return path.join(gitDir, path.relative(root, real))
  }
  const commonDir = await realpath(path.resolve(gitDir, common)).catch(() => undefined)
  if (commonDir === undefined || path.dirname(gitDir) !== path.join(commonDir, "worktrees")) return undefined
  const back = (await readText(path.join(gitDir, "gitdir")))?.trim()
  if (back === undefined || (await realOrResolved(path.resolve(gitDir, back))) !== path.join(root, ".git")) {
    return undefined
  }
  return path.join(sharedPathOf(commonDir), path.relative(root, real))
}

/** The same folder as `real` (in a main worktree whose `.git` is a folder) in each linked worktree. */
const linkedPathsOf = async (real: string): Promise<ReadonlyArray<string>> => {
  for (let dir = real; ; dir = path.dirname(dir)) {
    const found = await lstat(path.join(dir, ".git")).catch(() => undefined)
    if (found?.isDirectory()) {
      const listed = path.join(dir, ".git", "worktrees")
      const names = await readdir(listed).catch(() => [] as Array<string>)
      const roots = await Promise.all(names.map((name) => readText(path.join(listed, name, "gitdir"))))
      return roots.flatMap((gitFile) =>
        gitFile === undefined || gitFile.trim() === ""
          ? []
          : [path.join(path.dirname(gitFile.trim()), path.relative(dir, real))]
      )
    }
    if (found !== undefined || path.dirname(dir) === dir) return []
  }
}

/** The project of the workspace `cwd`; a path that cannot be resolved is used as given. */
export const projectOf = (cwd: string): Effect.Effect<Project> =>
  Effect.promise(async () => {
    const real = await realOrResolved(cwd)
    const main = await mainWorktreePathOf(real).catch(() => undefined)
    const linked = main === undefined ? await linkedPathsOf(real).catch(() => []) : []
    return { id: idOfPath(main ?? real), ownId: idOfPath(real), linkedIds: linked.map(idOfPath) }
  })

/** The first 16 hex digits of sha256 of the project's path (the main worktree's for a linked one). */
export const projectIdOf = (cwd: string): Effect.Effect<string> => Effect.map(projectOf(cwd), (project) => project.id)
