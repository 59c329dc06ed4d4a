// Which ignored paths of a subagent's worktree are regenerable, so they do not keep the worktree:
// an ignored path inside (or being) a folder a package manager, build or tool recreates, and
// compiled files next to their sources. Everything else ignored (a `.env`, notes, a folder not in
// the list) is kept and named. A fixed list, so a person can tell beforehand what goes.

/** Folder names whose content an install, a build or a tool writes again. */
export const regenerableFolders: ReadonlyArray<string> = [
  "node_modules",
  "bower_components",
  ".pnpm-store",
  ".venv",
  "venv",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache",
  ".tox",
  ".nox",
  ".eggs",
  "target",
  "dist",
  "build",
  ".cache",
  ".next",
  ".nuxt",
  ".svelte-kit",
  ".turbo",
  ".parcel-cache",
  ".gradle",
  ".dart_tool",
  "coverage"
]

/** File name endings of compiled files. */
export const regenerableFileEndings: ReadonlyArray<string> = [".pyc", ".pyo", ".class", ".o", ".tsbuildinfo"]

const folders = new Set(regenerableFolders)

/** Whether the ignored path (`dir/` for a folder) is regenerable. */
export const isRegenerable = (entry: string): boolean => {
  const isFolder = entry.endsWith("/")
  const parts = entry.split("/").filter((part) => part !== "")
  const folderParts = isFolder ? parts : parts.slice(0, -1)
  if (folderParts.some((part) => folders.has(part) || part.endsWith(".egg-info"))) return true
  const name = parts.at(-1) ?? ""
  return !isFolder && regenerableFileEndings.some((ending) => name.endsWith(ending))
}

/** The rule in one clause, for the messages that apply it. */
export const regenerableRule =
  "ignored dependency, build and cache folders (node_modules, dist, build, target, .venv, __pycache__, .cache and the like) " +
  "and compiled files do not keep a worktree; other ignored files do"
