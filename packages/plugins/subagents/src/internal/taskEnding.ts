// How a task ends once its child has stopped (or never started): its worktree committed and kept, or
// removed when unchanged, its record written, and the result the model gets.
import type { ChildOutcome, ChildToolCall } from "@alisio/domain/ChildSession"
import type { PluginApiService } from "@alisio/domain/Plugin"
import type { Usage } from "@alisio/domain/Usage"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { SubagentsConfig } from "../SubagentsConfig.js"
import type { TaskRecord, WorktreeRecord } from "../TaskRecords.js"
import { resultText, summaryOf, type TaskEnding } from "../TaskResult.js"
import type { LiveTask, TaskEnd } from "../Tasks.js"
import { commitWorktree, type Repository, removeWorktree } from "../Worktrees.js"
import { regenerableRule } from "./regenerable.js"

export interface Prepared {
  readonly repository?: Repository | undefined
  readonly workspaceNote?: string | undefined
  /** Its child was refused because the parent's run had begun to end: it is cancelled, not failed. */
  readonly parentEnded?: boolean | undefined
}

const listed = (paths: ReadonlyArray<string>) =>
  `${paths.slice(0, 5).join(", ")}${paths.length > 5 ? ` and ${paths.length - 5} more` : ""}`

/**
 * Commits and keeps a changed worktree, removes an unchanged one. A worktree git could not commit
 * stays `active`: its work is in the folder only, and `/agents merge` commits it first.
 */
export const settleWorktree = (task: LiveTask, tree: WorktreeRecord, status: string) =>
  Effect.gen(function* () {
    const message = `alisio: ${task.record.agent}: ${task.record.description} (task ${task.record.id}, ${status})`
    const changes = yield* Effect.either(commitWorktree(tree.dir, tree.base, message))
    if (changes._tag === "Left") {
      return {
        tree,
        note: `Its work could not be committed on its branch (${changes.left.message}), so it is left uncommitted in its worktree.`
      }
    }
    if (!changes.right.changed) {
      const removed = yield* Effect.either(removeWorktree(tree.repoRoot, tree.dir, tree.branch))
      const { regenerable } = changes.right
      return removed._tag === "Right"
        ? {
            tree: { ...tree, state: "removed" as const, files: [], ...(regenerable.length > 0 ? { regenerable } : {}) }
          }
        : {
            tree: { ...tree, state: "kept" as const, files: [] },
            note: `Its unchanged worktree could not be removed: ${removed.left.message}.`
          }
    }
    const { unseen, ignored } = changes.right
    const notes = [
      ...(unseen.length === 0
        ? []
        : [
            `It wrote into the submodule folder${unseen.length === 1 ? "" : "s"} ${unseen.join(", ")}, which the worktree ` +
              `did not check out: git commits nothing there, so those files are only in ${tree.dir}; copy them where they belong.`
          ]),
      ...(ignored.length === 0
        ? []
        : [
            `It left files the repository ignores (${listed(ignored)}): they are not committed, only in ${tree.dir}; ` +
              `copy what is worth keeping before the worktree goes (${regenerableRule}).`
          ])
    ]
    return {
      tree: { ...tree, state: "kept" as const, files: changes.right.files },
      ...(notes.length === 0 ? {} : { note: notes.join(" ") })
    }
  })

/** Ends a task: `save` writes its record (and redraws the panel). */
export const makeFinish =
  (
    api: PluginApiService,
    config: SubagentsConfig,
    save: (task: LiveTask, change: Partial<TaskRecord>) => Effect.Effect<void>
  ) =>
  (task: LiveTask, outcome: ChildOutcome | undefined, failure: Option.Option<string>, prepared: Prepared) =>
    Effect.gen(function* () {
      const { record } = task
      const status =
        outcome?.status ?? (Option.isSome(failure) && prepared.parentEnded !== true ? "failed" : "cancelled")
      const error =
        outcome?.error ??
        (prepared.parentEnded === true ? "its parent's run ended before it started" : undefined) ??
        Option.getOrUndefined(failure) ??
        (outcome === undefined ? "it was cancelled before it started" : undefined)
      let tree = record.worktree
      let treeNote: string | undefined
      if (tree?.state === "active") {
        const settled = yield* settleWorktree(task, tree, status)
        tree = settled.tree
        treeNote = settled.note
      }
      let changes: ReadonlyArray<ChildToolCall> | undefined
      if (task.handle !== undefined && tree === undefined && !task.readOnly) {
        changes = yield* api.sessions.toolCalls(task.handle)
      }
      const now = yield* Clock.currentTimeMillis
      const usage: Usage = outcome?.usage ?? record.usage
      const ending: TaskEnding = {
        id: record.id,
        agent: record.agent,
        status,
        answer: outcome?.text ?? "",
        error,
        usage,
        elapsedMs: Math.max(0, now - (record.startedAt ?? record.queuedAt)),
        worktree: tree,
        uncommitted: prepared.repository?._tag === "Repository" ? prepared.repository.uncommitted : undefined,
        workspaceNote: [prepared.workspaceNote, treeNote].filter((n) => n !== undefined).join(" ") || undefined,
        changes
      }
      const text = resultText(ending, config.maxResultChars)
      yield* save(task, {
        status,
        endedAt: now,
        usage,
        ...(tree === undefined ? {} : { worktree: tree }),
        ...(ending.workspaceNote === undefined ? {} : { workspaceNote: ending.workspaceNote }),
        ...(error === undefined ? {} : { error }),
        summary: summaryOf(outcome?.text ?? "") ?? error ?? status
      })
      return { text, isError: status !== "completed", ending } satisfies TaskEnd
    })
