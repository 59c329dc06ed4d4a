// Git worktrees for writing subagents: one per task under the plugin's state folder, on a branch
// `alisio/<task id>` from the current HEAD. Each step is one short `git` command; none of them is
// left half-done by an interruption (they run uninterruptibly).
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { isRegenerable } from "./internal/regenerable.js"

/** A git command failed; `missing` when git itself is not installed. */
export class GitError extends Data.TaggedError("GitError")<{
  readonly message: string
  readonly missing?: boolean
}> {}

const environment = () => ({ ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", GIT_OPTIONAL_LOCKS: "0" })

/** Runs `git args` in `cwd` and returns its standard output. */
export const git = (cwd: string, args: ReadonlyArray<string>): Effect.Effect<string, GitError> =>
  Effect.uninterruptible(
    Effect.async<string, GitError>((resume) => {
      execFile("git", [...args], { cwd, env: environment(), maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error === null) return resume(Effect.succeed(stdout))
        // Node says ENOENT both when git is missing and when the folder it runs in is.
        const notFound = (error as NodeJS.ErrnoException).code === "ENOENT"
        const missing = notFound && existsSync(cwd)
        const said = `${stderr}`.trim().split("\n").slice(-3).join(" ").trim()
        resume(
          Effect.fail(
            new GitError({
              message: missing
                ? "git is not installed"
                : notFound
                  ? `git ${args[0]} failed: the folder ${cwd} does not exist`
                  : `git ${args[0]} failed: ${said || error.message}`,
              missing
            })
          )
        )
      })
    })
  )

/** Where a workspace stands in git, or why it has no usable repository. */
export type Repository =
  | {
      readonly _tag: "Repository"
      readonly root: string
      /** The commit a worktree starts from. */
      readonly head: string
      /** The branch checked out, when not detached. */
      readonly branch?: string | undefined
      /** The workspace relative to the repository root (`""` at the root). */
      readonly subdir: string
      /** Changed or untracked paths in the workspace's tree, which a worktree does not see. */
      readonly uncommitted: number
    }
  | { readonly _tag: "Unavailable"; readonly reason: string }

const realPath = (target: string) => Effect.promise(() => fs.realpath(target).catch(() => target))

export const repositoryOf = (cwd: string): Effect.Effect<Repository> =>
  Effect.gen(function* () {
    const top = yield* Effect.either(git(cwd, ["rev-parse", "--show-toplevel"]))
    if (top._tag === "Left") {
      return {
        _tag: "Unavailable",
        reason: top.left.missing === true ? "git is not installed" : "the workspace is not a git repository"
      } as const
    }
    const root = top.right.trim()
    const head = yield* Effect.either(git(cwd, ["rev-parse", "--verify", "-q", "HEAD"]))
    if (head._tag === "Left") return { _tag: "Unavailable", reason: "the git repository has no commit yet" } as const
    const branch = yield* Effect.orElseSucceed(git(cwd, ["symbolic-ref", "--short", "-q", "HEAD"]), () => "")
    const status = yield* Effect.orElseSucceed(git(cwd, ["status", "--porcelain"]), () => "")
    const subdir = path.relative(yield* realPath(root), yield* realPath(cwd))
    return {
      _tag: "Repository",
      root,
      head: head.right.trim(),
      branch: branch.trim() === "" ? undefined : branch.trim(),
      subdir: subdir.startsWith("..") ? "" : subdir,
      uncommitted: status.split("\n").filter((line) => line.trim() !== "").length
    } as const
  })

/** The identity git commits with when the person has none configured. */
const identity = (cwd: string) =>
  Effect.map(Effect.either(git(cwd, ["config", "--get", "user.email"])), (found) =>
    found._tag === "Right" && found.right.trim() !== ""
      ? []
      : ["-c", "user.name=Alisio", "-c", "user.email=alisio@localhost"]
  )

/** A new worktree at `dir` on a new branch from `from`. */
export const addWorktree = (repoRoot: string, dir: string, branch: string, from: string) =>
  Effect.zipRight(
    Effect.promise(() => fs.mkdir(path.dirname(dir), { recursive: true, mode: 0o700 })),
    git(repoRoot, ["worktree", "add", "--quiet", "-b", branch, dir, from])
  )

/** What a worktree holds when its subagent ends. */
export interface WorktreeChanges {
  readonly changed: boolean
  /** Paths changed since the worktree started, relative to the repository root. */
  readonly files: ReadonlyArray<string>
  /** Submodule folders with files in them: git commits none of those, and removing the worktree would delete them. */
  readonly unseen: ReadonlyArray<string>
  /** Files and folders the repository ignores that are work (a `.env`, notes): not committed either. */
  readonly ignored: ReadonlyArray<string>
  /** Ignored folders and files a build or an install makes again (`node_modules/`): they do not keep a worktree. */
  readonly regenerable: ReadonlyArray<string>
}

/** What the worktree holds that its ignore rules keep out of git, a wholly ignored folder as one entry (`dist/`). */
export interface IgnoredPaths {
  readonly kept: ReadonlyArray<string>
  readonly regenerable: ReadonlyArray<string>
}

export const ignoredFiles = (dir: string): Effect.Effect<IgnoredPaths, GitError> =>
  Effect.map(git(dir, ["status", "--porcelain", "-z", "--ignored=matching"]), (out) => {
    const entries = out
      .split("\0")
      .filter((entry) => entry.startsWith("!! "))
      .map((entry) => entry.slice(3))
    return {
      kept: entries.filter((entry) => !isRegenerable(entry)),
      regenerable: entries.filter(isRegenerable)
    }
  })

/**
 * The submodule folders of a worktree that hold anything. `git worktree add` checks out no
 * submodule, so each is an empty folder git does not look into: whatever a subagent writes there
 * is neither reported by `git status` nor committed.
 */
export const filledSubmodules = (dir: string): Effect.Effect<ReadonlyArray<string>, GitError> =>
  Effect.gen(function* () {
    const gitlinks = (yield* git(dir, ["ls-files", "--stage", "-z"]))
      .split("\0")
      .filter((entry) => entry.startsWith("160000 "))
      .map((entry) => entry.slice(entry.indexOf("\t") + 1))
    const filled = yield* Effect.forEach(gitlinks, (link) =>
      Effect.promise(() =>
        fs.readdir(path.join(dir, link)).then(
          (entries) => (entries.some((name) => name !== ".git") ? [link] : []),
          () => []
        )
      )
    )
    return filled.flat()
  })

/**
 * Commits what is left uncommitted in the worktree on its branch, then compares the branch with
 * where it started.
 */
export const commitWorktree = (dir: string, base: string, message: string): Effect.Effect<WorktreeChanges, GitError> =>
  Effect.gen(function* () {
    const status = yield* git(dir, ["status", "--porcelain"])
    if (status.trim() !== "") {
      yield* git(dir, ["add", "-A"])
      // A bookkeeping commit on the task's own branch: a signing key git cannot use (or a pinentry
      // nobody answers) would otherwise fail it, or hang it, and the work would stay uncommitted.
      yield* git(dir, [
        ...(yield* identity(dir)),
        "-c",
        "commit.gpgsign=false",
        "commit",
        "--quiet",
        "--no-verify",
        "-m",
        message
      ])
    }
    const files = (yield* git(dir, ["diff", "--name-only", base, "HEAD"]))
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "")
    const commits = Number((yield* git(dir, ["rev-list", "--count", `${base}..HEAD`])).trim())
    const unseen = yield* filledSubmodules(dir)
    const ignored = yield* ignoredFiles(dir)
    return {
      changed: files.length > 0 || commits > 0 || unseen.length > 0 || ignored.kept.length > 0,
      files,
      unseen,
      ignored: ignored.kept,
      regenerable: ignored.regenerable
    }
  })

/** Whether a worktree's folder is still there (a person may have deleted it). */
export const folderExists = (dir: string) =>
  Effect.promise(() =>
    fs.stat(dir).then(
      (stat) => stat.isDirectory(),
      () => false
    )
  )

/** Removes the worktree and deletes its branch (a worktree folder already gone is pruned). */
export const removeWorktree = (repoRoot: string, dir: string, branch: string) =>
  Effect.gen(function* () {
    if (yield* folderExists(dir)) yield* git(repoRoot, ["worktree", "remove", "--force", dir])
    else yield* git(repoRoot, ["worktree", "prune"])
    yield* git(repoRoot, ["branch", "-D", branch])
  })

export type MergeResult =
  | { readonly _tag: "Merged"; readonly files: ReadonlyArray<string> }
  | { readonly _tag: "Dirty"; readonly paths: ReadonlyArray<string> }
  | { readonly _tag: "Conflict"; readonly paths: ReadonlyArray<string> }

/** Merges `branch` into the tree at `target`; refuses a tree with uncommitted changes, aborts on conflict. */
export const mergeBranch = (target: string, branch: string, message: string): Effect.Effect<MergeResult, GitError> =>
  Effect.gen(function* () {
    const lines = (text: string) =>
      text
        .split("\n")
        .map((line) => line.trimEnd())
        .filter((line) => line.trim() !== "")
    const dirty = lines(yield* git(target, ["status", "--porcelain"]))
    if (dirty.length > 0) return { _tag: "Dirty", paths: dirty.map((line) => line.slice(3)) } as const
    const before = (yield* git(target, ["rev-parse", "HEAD"])).trim()
    const merged = yield* Effect.either(
      git(target, [...(yield* identity(target)), "merge", "--no-ff", "--no-edit", "-m", message, branch])
    )
    if (merged._tag === "Left") {
      const conflicts = lines(
        yield* Effect.orElseSucceed(git(target, ["diff", "--name-only", "--diff-filter=U"]), () => "")
      )
      yield* Effect.ignore(git(target, ["merge", "--abort"]))
      if (conflicts.length === 0) return yield* merged.left
      return { _tag: "Conflict", paths: conflicts } as const
    }
    const files = lines(yield* git(target, ["diff", "--name-only", before, "HEAD"]))
    return { _tag: "Merged", files } as const
  })
