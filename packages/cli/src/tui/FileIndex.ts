// The workspace's files for `@path` completion: a breadth-first walk bounded in entries, depth and
// time, that skips what .gitignore (its simple patterns) and habit leave out, and never enters a
// symbolic link, so it can neither leave the workspace nor loop (TL-5).
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { performance } from "node:perf_hooks"

export interface FileIndexLimits {
  readonly maxEntries: number
  readonly maxDepth: number
  readonly maxMs: number
}

export const defaultLimits: FileIndexLimits = { maxEntries: 20_000, maxDepth: 16, maxMs: 400 }

const ALWAYS_SKIPPED = new Set([".git", "node_modules", ".hg", ".svn", ".venv", "__pycache__", ".DS_Store"])

/** A .gitignore pattern this walk understands: a name or a simple glob, anchored or not, folders only or not. */
interface Ignore {
  readonly test: (relative: string, isDirectory: boolean) => boolean
}

const globToRegExp = (glob: string): RegExp =>
  new RegExp(
    `^${glob
      .split("")
      .map((c) => (c === "*" ? "[^/]*" : c === "?" ? "[^/]" : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
      .join("")}$`
  )

/** The patterns of a .gitignore that are cheap to honour; negations and `**` are left out (shown, not hidden). */
export const parseGitignore = (text: string): ReadonlyArray<Ignore> =>
  text.split("\n").flatMap((raw): ReadonlyArray<Ignore> => {
    const line = raw.trim()
    if (line === "" || line.startsWith("#") || line.startsWith("!") || line.includes("**")) return []
    const dirOnly = line.endsWith("/")
    const body = line.replace(/\/+$/, "")
    const anchored = body.includes("/")
    const pattern = globToRegExp(body.replace(/^\//, ""))
    return [
      {
        test: (relative, isDirectory) => {
          if (dirOnly && !isDirectory) return false
          return anchored ? pattern.test(relative) : pattern.test(path.posix.basename(relative))
        }
      }
    ]
  })

/** Workspace paths relative to `root`, folders ending with `/`, nearest first. */
export const walkFiles = async (root: string, limits: FileIndexLimits = defaultLimits): Promise<Array<string>> => {
  const started = performance.now()
  let ignores: ReadonlyArray<Ignore> = []
  try {
    // A cloned repository may hold `.gitignore` as a link to a device (`/dev/zero` never ends).
    const gitignore = path.join(root, ".gitignore")
    if ((await fs.stat(gitignore)).isFile()) ignores = parseGitignore(await fs.readFile(gitignore, "utf8"))
  } catch {
    ignores = []
  }
  const found: Array<string> = []
  let level: Array<string> = [""]
  for (let depth = 0; depth < limits.maxDepth && level.length > 0; depth++) {
    const next: Array<string> = []
    for (const folder of level) {
      if (found.length >= limits.maxEntries || performance.now() - started > limits.maxMs) return found
      let entries: Array<import("node:fs").Dirent>
      try {
        entries = await fs.readdir(path.join(root, folder), { withFileTypes: true })
      } catch {
        continue
      }
      entries.sort((a, b) => a.name.localeCompare(b.name))
      for (const entry of entries) {
        if (ALWAYS_SKIPPED.has(entry.name)) continue
        const relative = folder === "" ? entry.name : `${folder}/${entry.name}`
        // A link is listed as what it is called, never followed: it may lead out of the workspace.
        const isDirectory = entry.isDirectory() && !entry.isSymbolicLink()
        if (ignores.some((ignore) => ignore.test(relative, isDirectory))) continue
        found.push(isDirectory ? `${relative}/` : relative)
        if (isDirectory) next.push(relative)
        if (found.length >= limits.maxEntries) return found
      }
    }
    level = next
  }
  return found
}

/** The index, walked again when older than `maxAgeMs` (files come and go while a session runs). */
export class FileIndex {
  private files: Promise<Array<string>> | undefined
  private builtAt = 0

  constructor(
    private readonly root: string,
    private readonly maxAgeMs = 10_000,
    private readonly limits: FileIndexLimits = defaultLimits
  ) {}

  list(): Promise<Array<string>> {
    const now = performance.now()
    if (this.files === undefined || now - this.builtAt > this.maxAgeMs) {
      this.builtAt = now
      this.files = walkFiles(this.root, this.limits)
    }
    return this.files
  }
}
