// What the plugin keeps of each task in `api.state`, so that `/agents` lists, merges and discards
// the tasks of earlier processes too: a record is written when the task is queued, when it starts
// (with its worktree) and when it ends, so a process killed in between leaves it findable.
import type { PluginApiService } from "@alisio/domain/Plugin"
import { RunStatus } from "@alisio/domain/RunEvent"
import { Usage } from "@alisio/domain/Usage"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** Where a task is: queued for a slot, or a child run's status. */
export const TaskStatus = Schema.Union(Schema.Literal("queued"), RunStatus)
export type TaskStatus = typeof TaskStatus.Type

/** A task's git worktree and what became of it. */
export const WorktreeRecord = Schema.Struct({
  dir: Schema.String,
  branch: Schema.String,
  /** The commit it started from. */
  base: Schema.String,
  /** The branch checked out in the workspace it was made from, when not detached. */
  baseBranch: Schema.optional(Schema.String),
  repoRoot: Schema.String,
  /** Where `/agents merge` merges it: the parent's workspace. */
  target: Schema.String,
  state: Schema.Literal("active", "kept", "merged", "discarded", "removed"),
  files: Schema.optional(Schema.Array(Schema.String))
})
export type WorktreeRecord = typeof WorktreeRecord.Type

export const TaskRecord = Schema.Struct({
  id: Schema.String,
  agent: Schema.String,
  description: Schema.String,
  /** The agent path ("general › explore"). */
  label: Schema.String,
  background: Schema.Boolean,
  parentSessionId: Schema.String,
  rootSessionId: Schema.String,
  sessionId: Schema.optional(Schema.String),
  runId: Schema.optional(Schema.String),
  depth: Schema.Number,
  status: TaskStatus,
  queuedAt: Schema.Number,
  startedAt: Schema.optional(Schema.Number),
  endedAt: Schema.optional(Schema.Number),
  usage: Usage,
  /** The first line of the answer, or why it did not finish. */
  summary: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String),
  worktree: Schema.optional(WorktreeRecord),
  /** How it shared the workspace when it had no worktree of its own. */
  workspaceNote: Schema.optional(Schema.String)
})
export type TaskRecord = typeof TaskRecord.Type

const decodeRecord = Schema.decodeUnknownOption(TaskRecord)
const decodeIds = Schema.decodeUnknownOption(Schema.Array(Schema.String))

const recordKey = (id: string) => `task:${id}`
const indexKey = (parent: string) => `tasks:${parent}`

export interface TaskRecords {
  readonly save: (record: TaskRecord) => Effect.Effect<void>
  readonly load: (id: string) => Effect.Effect<Option.Option<TaskRecord>>
  /** The ids of the tasks a session started, oldest first. */
  readonly idsOf: (parent: string) => Effect.Effect<ReadonlyArray<string>>
}

/** Records in the plugin's state; a state that cannot be written costs a diagnostic, never the task. */
export const makeTaskRecords = (api: PluginApiService): Effect.Effect<TaskRecords> =>
  Effect.map(Effect.makeSemaphore(1), (lock) => {
    const warn = (what: string) => (error: { readonly message: string }) =>
      api.ui.notify(`could not ${what}: ${error.message}`, { level: "warning" })
    const idsOf = (parent: string) =>
      api.state.get(indexKey(parent)).pipe(
        Effect.map((value) => Option.getOrElse(Option.flatMap(value, decodeIds), () => [] as ReadonlyArray<string>)),
        Effect.catchAll(() => Effect.succeed([] as ReadonlyArray<string>))
      )
    return {
      save: (record) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            yield* api.state.set(recordKey(record.id), Schema.encodeSync(TaskRecord)(record))
            const ids = yield* idsOf(record.parentSessionId)
            if (!ids.includes(record.id)) yield* api.state.set(indexKey(record.parentSessionId), [...ids, record.id])
          }).pipe(Effect.catchAll(warn(`record the task ${record.id}`)))
        ),
      load: (id) =>
        api.state.get(recordKey(id)).pipe(
          Effect.map((value) => Option.flatMap(value, decodeRecord)),
          Effect.catchAll(() => Effect.succeed(Option.none()))
        ),
      idsOf
    }
  })
