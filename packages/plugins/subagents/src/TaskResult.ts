// What the parent reads when a subagent ends: its answer, capped and wrapped so the parent knows it
// came from a subagent, then how it ended and what it changed (its worktree and how to merge it,
// or the files it touched in the shared workspace).
import type { ChildToolCall } from "@alisio/domain/ChildSession"
import { formatDuration } from "@alisio/domain/Durations"
import type { Usage } from "@alisio/domain/Usage"
import { regenerableRule } from "./internal/regenerable.js"
import type { TaskStatus, WorktreeRecord } from "./TaskRecords.js"

export interface TaskEnding {
  readonly id: string
  readonly agent: string
  readonly status: TaskStatus
  readonly answer: string
  readonly error?: string | undefined
  readonly usage: Usage
  readonly elapsedMs: number
  readonly worktree?: WorktreeRecord | undefined
  /** Changed or untracked paths the parent's tree had, which the worktree did not start with. */
  readonly uncommitted?: number | undefined
  /** Why the subagent shared the workspace although a worktree was wanted. */
  readonly workspaceNote?: string | undefined
  /** Its calls that could change the shared workspace or the world. */
  readonly changes?: ReadonlyArray<ChildToolCall> | undefined
}

/** `1234` → `1.2k`. */
export const formatTokens = (n: number): string =>
  n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(1)}k` : `${(n / 1_000_000).toFixed(1)}M`

export const totalTokens = (usage: Usage) => usage.inputTokens + usage.outputTokens

/** The answer's first line, short: what `/agents` shows. */
export const summaryOf = (text: string): string | undefined => {
  const line = text
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "")
  if (line === undefined) return undefined
  return line.length > 100 ? `${line.slice(0, 99)}…` : line
}

const cap = (text: string, max: number) =>
  text.length <= max
    ? text
    : `${text.slice(0, max)}\n[… cut: ${text.length - max} more characters of the answer were left out]`

const how = (ending: TaskEnding): string | undefined => {
  switch (ending.status) {
    case "completed":
      return undefined
    case "failed":
      return `The subagent failed: ${ending.error ?? "no reason was given"}`
    case "turns_exceeded":
      return "The subagent used all the turns it was allowed without finishing."
    case "cancelled":
      return "The subagent was cancelled before it finished."
    case "interrupted":
      return "The subagent was interrupted (its process ended) before it finished."
    default:
      return `The subagent is ${ending.status}.`
  }
}

const argumentOf = (call: ChildToolCall): string => {
  try {
    const args = JSON.parse(call.arguments) as Record<string, unknown>
    const value = args.path ?? args.file_path ?? args.command
    return typeof value === "string" ? ` ${value.length > 80 ? `${value.slice(0, 79)}…` : value}` : ""
  } catch {
    return ""
  }
}

const worktreeNote = (ending: TaskEnding): string | undefined => {
  const tree = ending.worktree
  if (tree === undefined) return undefined
  const from = `${tree.base.slice(0, 7)}${tree.baseBranch === undefined ? "" : ` (HEAD of ${tree.baseBranch})`}`
  const missing =
    ending.uncommitted !== undefined && ending.uncommitted > 0
      ? `; it did not see the workspace's ${ending.uncommitted} uncommitted change${ending.uncommitted === 1 ? "" : "s"} (still there, untouched)`
      : ""
  if (tree.state === "removed") {
    const regenerable = tree.regenerable ?? []
    const changed =
      regenerable.length === 0
        ? "It changed nothing"
        : `It changed nothing but ignored files an install or a build makes again (${regenerable.slice(0, 5).join(", ")}` +
          `${regenerable.length > 5 ? ` and ${regenerable.length - 5} more` : ""}; ${regenerableRule})`
    return `It worked in a git worktree of its own, started from ${from}${missing}. ${changed}, so the worktree was removed.`
  }
  const files = tree.files ?? []
  const listed =
    files.length === 0
      ? ""
      : ` It changed: ${files.slice(0, 20).join(", ")}${files.length > 20 ? ` and ${files.length - 20} more` : ""}.`
  const uncommitted = tree.state === "active"
  return (
    `It worked in its own git worktree ${tree.dir} on the branch ${tree.branch}, started from ${from}${missing}.${listed} ` +
    `${uncommitted ? "Its work is in that folder, not yet committed" : "Its work is committed on that branch"}; ` +
    `the workspace is untouched until it is merged: the person can run \`/agents merge ${ending.id}\` ` +
    `(or \`git merge ${tree.branch}\` in ${tree.target}${uncommitted ? ", once it is committed in the worktree" : ""}), ` +
    `or \`/agents discard ${ending.id}\` to drop it.`
  )
}

const sharedNote = (ending: TaskEnding): string | undefined => {
  const calls = (ending.changes ?? []).filter((call) => call.effect === "write" || call.effect === "external")
  if (calls.length === 0) return undefined
  const shown = calls
    .slice(0, 12)
    .map((call) => `${call.name}${argumentOf(call)}${call.status === "completed" ? "" : ` (${call.status})`}`)
  return `In the shared workspace it called: ${shown.join("; ")}${calls.length > 12 ? `; and ${calls.length - 12} more` : ""}.`
}

/**
 * The answer with its own `<subagent_result>` tags made inert: a subagent quoting them (this
 * plugin's code, or a file written to mislead it) cannot close its frame and speak as another task.
 */
const unframed = (answer: string) => answer.replace(/<(\s*\/?\s*subagent_result)/gi, "&lt;$1")

/** The tool result of a finished task. */
export const resultText = (ending: TaskEnding, maxChars: number): string => {
  const head =
    `<subagent_result task="${ending.id}" agent="${ending.agent}" status="${ending.status}" ` +
    `elapsed="${formatDuration(ending.elapsedMs)}" tokens="${formatTokens(totalTokens(ending.usage))}">`
  const body = ending.answer.trim() === "" ? "(no answer)" : unframed(cap(ending.answer.trim(), maxChars))
  const notes = [how(ending), ending.workspaceNote, worktreeNote(ending), sharedNote(ending)].filter(
    (note): note is string => note !== undefined
  )
  return [head, body, "</subagent_result>", ...notes].join("\n")
}

/** The notice a background task's end leaves for its parent's next turn. */
export const noticeText = (ending: TaskEnding, description: string, maxChars: number): string =>
  `The background task ${ending.id} (${ending.agent}: ${description}) ended ${ending.status}:\n${resultText(ending, maxChars)}`
