// Where agent definitions come from, first found wins: the project's `.alisio/agents/` and
// `.claude/agents/` (only in a trusted project), `<config>/agents/`, `~/.claude/agents/`, the
// `agents/` folders of the loaded external plugins, then the builtins.
import { type Dirent, statSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type { AgentDefinition, AgentDiagnostic, AgentSource } from "./AgentDefinition.js"
import { builtinAgents } from "./BuiltinAgents.js"

export interface DiscoveryInput {
  /** The workspace. */
  readonly cwd: string
  /** Whether the project's own files may steer the model (`--trust-project`). */
  readonly trustProject: boolean
  /** Alisio's configuration folder, `<config>`. */
  readonly configHome: string
  /** The person's home folder (for `~/.claude/agents/`). */
  readonly homeDir: string
  /** The folders of the loaded external plugins, in load order: their `agents/` are read. */
  readonly pluginRoots: ReadonlyArray<string>
}

export interface Discovered {
  /** The agents offered, in discovery order: files first, builtins last. */
  readonly agents: ReadonlyArray<AgentDefinition>
  /** Definitions hidden by an earlier one of the same name. */
  readonly shadowed: ReadonlyArray<AgentDefinition>
  readonly diagnostics: ReadonlyArray<AgentDiagnostic>
  /** The folders and files read: when none of them changed, neither did the result. */
  readonly watched: ReadonlyArray<string>
}

const isFolder = (dir: string) => {
  try {
    return statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true
  } catch {
    return false
  }
}

/** A folder's entries; one that does not exist (the usual case) costs a `stat`, not a read. */
const listDir = (dir: string) =>
  Effect.suspend(() =>
    isFolder(dir)
      ? Effect.promise(() => fs.readdir(dir, { withFileTypes: true }).catch(() => [] as Array<Dirent>))
      : Effect.succeed([] as Array<Dirent>)
  )

const agentFiles = (dir: string) =>
  Effect.map(listDir(dir), (entries) =>
    entries
      .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && entry.name.toLowerCase().endsWith(".md"))
      .map((entry) => path.join(dir, entry.name))
      .sort()
  )

/** A file's text; nothing for a link to a device or pipe (`/dev/zero` never ends, a pipe never opens). */
const readRegularFile = (file: string): Promise<string | undefined> =>
  fs
    .stat(file)
    .then(
      (stat) => (stat.isFile() ? fs.readFile(file, "utf8") : undefined),
      () => undefined
    )
    .catch(() => undefined)

/** Reads every definition in the discovery order; the first of each name wins. */
export const discoverAgents = (input: DiscoveryInput): Effect.Effect<Discovered> =>
  Effect.gen(function* () {
    const project = [
      { dir: path.join(input.cwd, ".alisio", "agents"), source: "project" as const },
      { dir: path.join(input.cwd, ".claude", "agents"), source: "project-claude" as const }
    ]
    const folders: Array<{ readonly dir: string; readonly source: AgentSource }> = [
      ...(input.trustProject ? project : []),
      { dir: path.join(input.configHome, "agents"), source: "user" },
      { dir: path.join(input.homeDir, ".claude", "agents"), source: "user-claude" },
      ...input.pluginRoots.map((root) => ({ dir: path.join(root, "agents"), source: "plugin" as const }))
    ]
    const diagnostics: Array<AgentDiagnostic> = []
    if (!input.trustProject) {
      for (const { dir } of project) {
        const files = yield* agentFiles(dir)
        if (files.length === 0) continue
        diagnostics.push({
          file: dir,
          severity: "warning",
          message: `${files.length} agent file${files.length === 1 ? " is" : "s are"} not read: the project is not trusted (--trust-project)`
        })
      }
    }
    const found: Array<AgentDefinition> = []
    const watched = [...project.map((p) => p.dir), ...folders.map((f) => f.dir)]
    // The parser is imported with the first file: most workspaces have none.
    let parse: typeof import("./AgentDefinition.js").parseAgentFile | undefined
    for (const { dir, source } of folders) {
      for (const file of yield* agentFiles(dir)) {
        watched.push(file)
        const text = yield* Effect.promise(() => readRegularFile(file))
        if (text === undefined) continue
        parse ??= (yield* Effect.promise(() => import("./AgentDefinition.js"))).parseAgentFile
        const parsed = parse(file, text, source)
        diagnostics.push(...parsed.diagnostics)
        if (parsed.agent !== undefined) found.push(parsed.agent)
      }
    }
    const agents: Array<AgentDefinition> = []
    const shadowed: Array<AgentDefinition> = []
    const seen = new Set<string>()
    for (const agent of [...found, ...builtinAgents]) {
      if (seen.has(agent.name)) shadowed.push(agent)
      else {
        seen.add(agent.name)
        agents.push(agent)
      }
    }
    return { agents, shadowed, diagnostics, watched: [...new Set(watched)] }
  })

/** When each watched path last changed (or that it is missing): equal stamps, equal discoveries. */
const stampOf = (paths: ReadonlyArray<string>): string =>
  paths
    .map((p) => {
      try {
        return String(statSync(p).mtimeMs)
      } catch {
        return "-"
      }
    })
    .join("|")

/**
 * Discovery for each workspace, read again only when a watched folder or file changed: a `task`
 * call then costs a few `stat` calls instead of reading every folder (about 0.6 ms).
 */
export const makeDiscovery = (
  base: Omit<DiscoveryInput, "cwd" | "pluginRoots"> & {
    /** Read at each discovery: plugins load (and unload) after this one. */
    readonly pluginRoots: Effect.Effect<ReadonlyArray<string>>
  }
) => {
  const cache = new Map<string, { readonly stamp: string; readonly found: Discovered }>()
  return (cwd: string): Effect.Effect<Discovered> =>
    Effect.flatMap(base.pluginRoots, (pluginRoots) => {
      const key = JSON.stringify([cwd, ...pluginRoots])
      const cached = cache.get(key)
      if (cached !== undefined && stampOf(cached.found.watched) === cached.stamp) return Effect.succeed(cached.found)
      return Effect.tap(discoverAgents({ ...base, cwd, pluginRoots }), (found) =>
        Effect.sync(() => cache.set(key, { stamp: stampOf(found.watched), found }))
      )
    })
}
