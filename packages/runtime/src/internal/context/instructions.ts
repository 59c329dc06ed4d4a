// Project instructions (CTX-2): AGENTS.md — or, in a folder without one, CLAUDE.md — from the
// repository root down to the workspace, after the user's own. A few stats and small reads, never
// a walk of the workspace. Untrusted projects are read too: instructions are text, and text
// cannot turn on tools, plugins or servers.

import * as path from "node:path"
import * as Effect from "effect/Effect"
import { exists, fileSize, isInside, linksOutside, readPrefix, realFile } from "./files.js"
import { oneSafeLine } from "./frontMatter.js"

/** The total size of the instructions put into the system context, unless told otherwise. */
export const DEFAULT_INSTRUCTIONS_CAP = 32 * 1024

export interface InstructionSource {
  readonly file: string
  /** `user`: the person's own, for every project; `project`: a folder of the repository. */
  readonly scope: "user" | "project"
  /** Its size on disk. */
  readonly size: number
  /** Read because the folder has no AGENTS.md. */
  readonly fallback: boolean
  /**
   * Where a project's file links to, when that is outside the repository (or the workspace): such a
   * file is left unread, so a project cannot put the person's other files (`~/.ssh/…`) in the context.
   */
  readonly outside?: string | undefined
}

export interface InstructionFile extends InstructionSource {
  /** What goes into the system context: the whole file, or its start when the cap cut it. */
  readonly text: string
  readonly cut: boolean
}

export interface Instructions {
  /** In the order they go into the system context: the user's, then outermost to innermost folder. */
  readonly files: ReadonlyArray<InstructionFile>
  /** The repository root the folders start at (`undefined`: not in a repository, the workspace only). */
  readonly repositoryRoot: string | undefined
  /** Says which files the cap cut, when it cut any. */
  readonly notice: string | undefined
  readonly capBytes: number
}

/** The nearest folder at or above `cwd` holding `.git` (a folder, or a file in a worktree). */
export const findRepositoryRoot = (cwd: string): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    let folder = path.resolve(cwd)
    for (;;) {
      if (yield* exists(path.join(folder, ".git"))) return folder
      const parent = path.dirname(folder)
      if (parent === folder) return undefined
      folder = parent
    }
  })

/**
 * The repository a workspace's project files belong to: the nearest `.git` at or above it, unless
 * that repository holds the person's home folder (a dotfiles repository at `~`, or one above it):
 * such a repository is not a project, and taking it for one would count all of `~` (`~/.ssh`) as
 * inside the project. Then, as outside any repository, the workspace alone is the project.
 */
export const findProjectRoot = (workspace: string, home: string): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    const root = yield* findRepositoryRoot(workspace)
    if (root === undefined) return undefined
    const realHome = (yield* realFile(home)) ?? path.resolve(home)
    return isInside(realHome, root) ? undefined : root
  })

/**
 * The folder a project's files must stay in, links resolved: its repository's root (see
 * `findProjectRoot`), else the workspace. Instructions, templates and skills that link out of it
 * are left unread.
 */
export const projectBoundary = (cwd: string, home: string): Effect.Effect<string> =>
  Effect.flatMap(realFile(cwd), (real) => {
    const workspace = real ?? path.resolve(cwd)
    return Effect.map(findProjectRoot(workspace, home), (root) => root ?? workspace)
  })

/** The folders whose instructions apply, outermost first: the repository root down to the workspace. */
export const instructionFolders = (cwd: string, repositoryRoot: string | undefined): ReadonlyArray<string> => {
  const workspace = path.resolve(cwd)
  if (repositoryRoot === undefined) return [workspace]
  const relative = path.relative(repositoryRoot, workspace)
  if (relative.startsWith("..") || path.isAbsolute(relative)) return [workspace]
  const folders = [repositoryRoot]
  let current = repositoryRoot
  for (const part of relative.split(path.sep).filter((p) => p !== "")) {
    current = path.join(current, part)
    folders.push(current)
  }
  return folders
}

/** The first of `candidates` that is a file; with `within`, where it links to when that is outside. */
const firstFile = (candidates: ReadonlyArray<string>, within?: string | undefined) =>
  Effect.gen(function* () {
    for (const [index, file] of candidates.entries()) {
      const size = yield* fileSize(file)
      if (size === undefined) continue
      const outside = within === undefined ? undefined : yield* linksOutside(file, within)
      return { file, size, fallback: index > 0, ...(outside === undefined ? {} : { outside }) }
    }
    return undefined
  })

/**
 * Which files apply: the first of `userFiles` that exists, then AGENTS.md (else CLAUDE.md) of each
 * folder. Sizes only; nothing is read yet.
 */
export const locateInstructions = (options: {
  readonly userFiles: ReadonlyArray<string>
  readonly folders: ReadonlyArray<string>
  /** The folder a project's files must stay in, links resolved: the repository root, else the workspace. */
  readonly within?: string | undefined
}): Effect.Effect<ReadonlyArray<InstructionSource>> =>
  Effect.gen(function* () {
    const user = yield* firstFile(options.userFiles)
    const folders = yield* Effect.forEach(
      options.folders,
      (folder) => firstFile([path.join(folder, "AGENTS.md"), path.join(folder, "CLAUDE.md")], options.within),
      { concurrency: "unbounded" }
    )
    const sources: Array<InstructionSource> = []
    if (user !== undefined) sources.push({ ...user, scope: "user" })
    for (const found of folders) if (found !== undefined) sources.push({ ...found, scope: "project" })
    return sources
  })

/**
 * The bytes each file may put in, within `cap` in all: smaller files whole, the cap shared evenly
 * among the larger ones, so one long file never pushes a short, closer one out.
 */
export const allot = (sizes: ReadonlyArray<number>, cap: number): ReadonlyArray<number> => {
  const allotted = new Array<number>(sizes.length).fill(0)
  const order = sizes.map((size, index) => ({ size, index })).sort((a, b) => a.size - b.size)
  let remaining = cap
  order.forEach(({ size, index }, position) => {
    const share = Math.floor(remaining / (order.length - position))
    allotted[index] = Math.min(size, share)
    remaining -= allotted[index]!
  })
  return allotted
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`

/** Reads the located files within the cap; a file cut ends at a line, and the notice names it. */
export const readInstructions = (
  sources: ReadonlyArray<InstructionSource>,
  capBytes: number = DEFAULT_INSTRUCTIONS_CAP,
  repositoryRoot?: string | undefined
): Effect.Effect<Instructions> =>
  Effect.gen(function* () {
    const unread = sources.filter((source) => source.outside !== undefined)
    const readable = sources.filter((source) => source.outside === undefined)
    const allotted = allot(
      readable.map((source) => source.size),
      capBytes
    )
    const read = yield* Effect.forEach(
      readable,
      (source, index) =>
        Effect.map(readPrefix(source.file, allotted[index]!), (result): InstructionFile | string | undefined => {
          if (result === undefined) return undefined
          if (result.binary) return `${source.file} was left unread: it holds NUL bytes, so it is not text.`
          if (result.whole) {
            const text = result.text.trim()
            return text === "" ? undefined : { ...source, size: result.size, text, cut: false }
          }
          // Cut: at the last line break, unless that would lose much more than the cap asks.
          const lineEnd = result.text.lastIndexOf("\n")
          const text = lineEnd > result.text.length * 0.8 ? result.text.slice(0, lineEnd) : result.text
          return { ...source, size: result.size, text: text.trim(), cut: true }
        }),
      { concurrency: "unbounded" }
    )
    const files = read.filter((file): file is InstructionFile => typeof file === "object")
    const notText = read.filter((file): file is string => typeof file === "string")
    const cut = files.filter((file) => file.cut)
    const notices = [
      ...unread.map(
        (source) =>
          `${source.file} was left unread: it links to ${source.outside}, outside ${repositoryRoot === undefined ? "the workspace" : "the repository"}.`
      ),
      ...notText,
      ...(cut.length === 0
        ? []
        : [
            `The instruction files pass the ${kib(capBytes)} limit, so ${cut
              .map((file) => `${file.file} was cut to ${kib(Buffer.byteLength(file.text))} of ${kib(file.size)}`)
              .join(", ")}.`
          ])
    ]
    const notice = notices.length === 0 ? undefined : oneSafeLine(notices.join(" "))
    return { files, repositoryRoot, notice, capBytes }
  })

/** The instructions as the system context holds them, each under the file it comes from. */
export const instructionsSection = (instructions: Instructions): string | undefined => {
  if (instructions.files.length === 0) return undefined
  const lines = [
    "# Instructions",
    "The person keeps these instructions for this work (AGENTS.md files). Follow them; where they " +
      "disagree, the later ones, closer to the workspace, take precedence."
  ]
  for (const file of instructions.files) {
    lines.push("", `## ${file.file}${file.scope === "user" ? " (the person's own, for every project)" : ""}`, file.text)
  }
  if (instructions.notice !== undefined) lines.push("", `[${instructions.notice}]`)
  return lines.join("\n")
}
