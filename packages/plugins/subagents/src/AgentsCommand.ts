// `/agents`: the subagents of the session (running, queued, finished, from this process and earlier
// ones), and `/agents cancel|merge|discard <id>`, `/agents defs`.
import type { PluginCommand } from "@alisio/domain/Command"
import { formatDuration } from "@alisio/domain/Durations"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type AgentDefinition, formatDiagnostic } from "./AgentDefinition.js"
import { regenerableRule } from "./internal/regenerable.js"
import { isRunning } from "./internal/storedTasks.js"
import type { TaskRecord } from "./TaskRecords.js"
import { formatTokens, totalTokens } from "./TaskResult.js"
import type { Tasks } from "./Tasks.js"
import type { AgentsCommandSpec } from "./TaskToolSpecs.js"
import {
  commitWorktree,
  filledSubmodules,
  folderExists,
  ignoredFiles,
  mergeBranch,
  removeWorktree
} from "./Worktrees.js"

const usage = "Usage: /agents [list] | /agents cancel <id> | /agents merge <id> | /agents discard <id> | /agents defs"

const sourceNames: Record<AgentDefinition["source"], string> = {
  project: "project (.alisio/agents)",
  "project-claude": "project (.claude/agents)",
  user: "user (<config>/agents)",
  "user-claude": "user (~/.claude/agents)",
  plugin: "plugin",
  builtin: "builtin"
}

/** `/agents`; `spec` (`TaskToolSpecs.ts`) is its name and description. */
export const agentsCommand = (tasks: Tasks, spec: AgentsCommandSpec): PluginCommand => {
  const current = (record: TaskRecord) => tasks.stored.current(record)

  /** The tasks a session started, each followed by its own, depth-first. */
  const treeOf = (session: string): Effect.Effect<ReadonlyArray<TaskRecord>> =>
    Effect.gen(function* () {
      const ids = [...(yield* tasks.records.idsOf(session))]
      for (const task of yield* tasks.all) {
        if (task.record.parentSessionId === session && !ids.includes(task.record.id)) ids.push(task.record.id)
      }
      const out: Array<TaskRecord> = []
      for (const id of ids) {
        const stored = tasks.byId(id)?.record ?? Option.getOrUndefined(yield* tasks.records.load(id))
        if (stored === undefined) continue
        out.push(yield* current(stored))
        if (stored.sessionId !== undefined) out.push(...(yield* treeOf(stored.sessionId)))
      }
      return out
    })

  const find = (id: string, session: string | undefined) =>
    Effect.gen(function* () {
      const wanted = id.trim()
      if (wanted === "") return { error: usage } as const
      const known = session === undefined ? (yield* tasks.all).map((t) => t.record) : yield* treeOf(session)
      const exact = tasks.byId(wanted)?.record ?? Option.getOrUndefined(yield* tasks.records.load(wanted))
      if (exact !== undefined) return { record: yield* current(exact) } as const
      const matches = known.filter((r) => r.id.startsWith(wanted))
      if (matches.length === 1) return { record: matches[0]! } as const
      return {
        error:
          matches.length === 0
            ? `No task ${wanted} in this session (see /agents).`
            : `${wanted} matches several tasks: ${matches.map((r) => r.id).join(", ")}.`
      } as const
    })

  const list = (session: string | undefined) =>
    Effect.gen(function* () {
      const rows = session === undefined ? (yield* tasks.all).map((t) => t.record) : yield* treeOf(session)
      if (rows.length === 0) return "No subagents in this session."
      const now = yield* Clock.currentTimeMillis
      const table = rows.map((r) => {
        const elapsed = r.startedAt === undefined ? "-" : formatDuration(Math.max(0, (r.endedAt ?? now) - r.startedAt))
        const kept = r.worktree?.state === "kept" || (r.worktree?.state === "active" && !isRunning(r.status))
        const summary = `${r.summary ?? r.description}${kept ? `  [worktree kept: /agents merge ${r.id}]` : ""}`
        return [
          r.id,
          r.status,
          `${"  ".repeat(r.depth - 1)}${r.agent}`,
          elapsed,
          formatTokens(totalTokens(r.usage)),
          summary
        ]
      })
      const header = ["ID", "STATUS", "AGENT", "ELAPSED", "TOKENS", "SUMMARY"]
      const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)))
      const line = (row: ReadonlyArray<string>) =>
        row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
          .join("  ")
          .trimEnd()
      return [line(header), ...table.map(line)].join("\n")
    })

  const merge = (record: TaskRecord) =>
    Effect.gen(function* () {
      if (isRunning(record.status))
        return `Task ${record.id} is still ${record.status}; wait for it, or /agents cancel ${record.id} first.`
      const tree = record.worktree
      if (tree === undefined || (tree.state !== "kept" && tree.state !== "active")) {
        return `Task ${record.id} has no worktree to merge${tree === undefined ? " (it worked in the shared workspace)" : ` (its worktree was ${tree.state})`}.`
      }
      // A worktree whose folder was deleted keeps only what its branch holds: that is merged. One
      // still there is committed first, whatever its record says: what is left uncommitted in it
      // would go with the folder.
      const gone = !(yield* folderExists(tree.dir))
      if (!gone) {
        yield* commitWorktree(
          tree.dir,
          tree.base,
          `alisio: ${record.agent}: ${record.description} (task ${record.id}, ${record.status})`
        )
      }
      const result = yield* mergeBranch(
        tree.target,
        tree.branch,
        `Merge ${tree.branch}: ${record.agent}: ${record.description}`
      )
      switch (result._tag) {
        case "Dirty":
          return (
            `Refused: the workspace ${tree.target} has uncommitted changes (${result.paths.slice(0, 10).join(", ")}${result.paths.length > 10 ? ", …" : ""}). ` +
            "Commit or stash them, then run /agents merge again."
          )
        case "Conflict":
          return (
            `The merge of ${tree.branch} conflicts in ${result.paths.join(", ")}; it was aborted and nothing changed. ` +
            `Merge it by hand (git merge ${tree.branch} in ${tree.target}), or drop it with /agents discard ${record.id}.`
          )
        case "Merged": {
          const merged = `Merged ${tree.branch} into ${tree.target}${result.files.length === 0 ? "" : `: ${result.files.join(", ")}`}.`
          const ignored = gone ? { kept: [], regenerable: [] } : yield* ignoredFiles(tree.dir)
          const unseen = gone ? [] : [...(yield* filledSubmodules(tree.dir)), ...ignored.kept]
          if (unseen.length > 0) {
            yield* tasks.update({ ...record, worktree: { ...tree, state: "kept" } })
            return (
              `${merged} Its worktree ${tree.dir} was kept: it holds what git does not commit (${unseen.slice(0, 5).join(", ")}` +
              `${unseen.length > 5 ? ", …" : ""}: submodule folders or ignored files). Copy what is worth keeping, then /agents discard ${record.id}.`
            )
          }
          yield* removeWorktree(tree.repoRoot, tree.dir, tree.branch)
          yield* tasks.update({ ...record, worktree: { ...tree, state: "merged" } })
          const lost = gone
            ? ` Its worktree ${tree.dir} was gone: only the work committed on the branch was merged.`
            : ""
          const regenerated =
            ignored.regenerable.length === 0
              ? ""
              : `, with ${ignored.regenerable.slice(0, 5).join(", ")}${ignored.regenerable.length > 5 ? ", …" : ""} in it (${regenerableRule})`
          return `${merged}${lost} The worktree and the branch were removed${regenerated}.`
        }
      }
    })

  const discard = (record: TaskRecord) =>
    Effect.gen(function* () {
      if (isRunning(record.status))
        return `Task ${record.id} is still ${record.status}; /agents cancel ${record.id} first.`
      const tree = record.worktree
      if (tree === undefined || (tree.state !== "kept" && tree.state !== "active")) {
        return `Task ${record.id} has no worktree to discard.`
      }
      yield* removeWorktree(tree.repoRoot, tree.dir, tree.branch)
      yield* tasks.update({ ...record, worktree: { ...tree, state: "discarded" } })
      return `Discarded the work of task ${record.id}: its worktree ${tree.dir} and the branch ${tree.branch} were removed.`
    })

  const defs = (cwd: string) =>
    Effect.gen(function* () {
      const found = yield* tasks.discover(cwd)
      const describe = (agent: AgentDefinition) =>
        `${agent.name}  ${sourceNames[agent.source]}${agent.file === undefined ? "" : ` ${agent.file}`}\n    ${agent.description.split("\n")[0]}` +
        `\n    tools: ${agent.tools === "*" ? "all of the parent's" : agent.tools.join(", ") || "none"}` +
        `${agent.disallowedTools.length === 0 ? "" : ` except ${agent.disallowedTools.join(", ")}`}` +
        `${agent.readOnly ? "; read-only" : ""}${agent.isolation === undefined ? "" : "; own worktree"}` +
        `${agent.model === undefined ? "" : `; model ${agent.model}`}${agent.background ? "; background" : ""}`
      return [
        "Agents (the first of each name wins):",
        ...found.agents.map(describe),
        ...(found.shadowed.length === 0
          ? []
          : ["", "Hidden by an agent of the same name found first:", ...found.shadowed.map(describe)]),
        ...(found.diagnostics.length === 0
          ? []
          : [
              "",
              "Problems in agent files:",
              ...found.diagnostics.map((d) => `  ${d.severity}: ${formatDiagnostic(d)}`)
            ])
      ].join("\n")
    })

  return {
    ...spec,
    execute: (args, context) =>
      Effect.gen(function* () {
        const [verb = "list", id = "", ...rest] = args
          .trim()
          .split(/\s+/)
          .filter((w) => w !== "")
        if (rest.length > 0) return usage
        if (verb === "list") return yield* list(context.sessionId)
        if (verb === "defs") return yield* defs(context.cwd ?? process.cwd())
        if (verb !== "cancel" && verb !== "merge" && verb !== "discard") return usage
        const found = yield* find(id, context.sessionId)
        if ("error" in found) return found.error
        const record = found.record
        if (verb === "cancel") {
          const live = tasks.byId(record.id)
          if (live === undefined || !isRunning(live.record.status)) {
            return `Task ${record.id} is not running in this process (it is ${record.status}).`
          }
          yield* tasks.cancel(live)
          return `Cancelled task ${record.id}: it is ${live.record.status}.`
        }
        return yield* (verb === "merge" ? merge(record) : discard(record)).pipe(
          Effect.catchTag("GitError", (error) => Effect.succeed(`git failed: ${error.message}`))
        )
      })
  }
}
