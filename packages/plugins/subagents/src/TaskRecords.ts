// What the plugin keeps of each task in `api.state`, so that `/agents` lists, merges and discards
// the tasks of earlier processes too: a record is written when the task is queued, when it starts
// (with its worktree) and when it ends, so a process killed in between leaves it findable.
import type { PluginApiService } from "@alisio/domain/Plugin"
import { RunStatus } from "@alisio/domain/RunEvent"
import { Usage } from "@alisio/domain/Usage"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"

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
  files: Schema.optional(Schema.Array(Schema.String)),
  /** Ignored folders an install or a build makes again, removed with an otherwise unchanged worktree. */
  regenerable: Schema.optional(Schema.Array(Schema.String))
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
  /** The run that asked for it: a task still queued waits as long as that run goes on. */
  parentRunId: Schema.optional(Schema.String),
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
  /** Keeps the record; it is written to the state by a fiber of its own, off the task's path. */
  readonly save: (record: TaskRecord) => Effect.Effect<void>
  readonly load: (id: string) => Effect.Effect<Option.Option<TaskRecord>>
  /** The ids of the tasks a session started, oldest first. */
  readonly idsOf: (parent: string) => Effect.Effect<ReadonlyArray<string>>
}

/**
 * Records in the plugin's state. Writing them takes a few milliseconds each (a SQLite transaction
 * behind the runner's own), so a writer fiber does it while tasks go on: `bench/subagents.bench.ts`
 * measured a `task` round trip 5 ms slower with the writes in its path. What is not written yet is
 * read from memory; the rest is written when the plugin's scope closes. A state that cannot be
 * written costs a diagnostic, never the task.
 */
export const makeTaskRecords = (api: PluginApiService): Effect.Effect<TaskRecords, never, Scope.Scope> =>
  Effect.gen(function* () {
    const pending = yield* Queue.unbounded<TaskRecord>()
    /** The latest record of each task saved in this process. */
    const latest = new Map<string, TaskRecord>()
    /** Each parent's ids saved in this process, in order, written or not yet. */
    const saved = new Map<string, ReadonlyArray<string>>()

    const warn = (what: string) => (error: { readonly message: string }) =>
      api.ui.notify(`could not ${what}: ${error.message}`, { level: "warning" })
    // Read afresh each time: another process may have resumed the session and added to its index.
    const storedIds = (parent: string) =>
      api.state.get(indexKey(parent)).pipe(
        Effect.map((value) => Option.getOrElse(Option.flatMap(value, decodeIds), () => [] as ReadonlyArray<string>)),
        Effect.catchAll(() => Effect.succeed([] as ReadonlyArray<string>))
      )
    const idsOf = (parent: string) =>
      Effect.map(storedIds(parent), (ids) => {
        const unwritten = (saved.get(parent) ?? []).filter((id) => !ids.includes(id))
        return unwritten.length === 0 ? ids : [...ids, ...unwritten]
      })

    const write = (record: TaskRecord) =>
      Effect.gen(function* () {
        yield* api.state.set(recordKey(record.id), Schema.encodeSync(TaskRecord)(record))
        const parent = record.parentSessionId
        const ids = yield* storedIds(parent)
        if (!ids.includes(record.id)) yield* api.state.set(indexKey(parent), [...ids, record.id])
      }).pipe(Effect.catchAll(warn(`record the task ${record.id}`)))

    /** Writes a batch, each task's latest record once; a batch begun is finished. */
    const writeAll = (batch: Iterable<TaskRecord>) => {
      const last = new Map<string, TaskRecord>()
      for (const record of batch) last.set(record.id, record)
      return Effect.uninterruptible(Effect.forEach(last.values(), write, { discard: true }))
    }
    const writer = yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(pending), (first) =>
          Effect.flatMap(Queue.takeAll(pending), (rest) => writeAll([first, ...rest]))
        )
      )
    )
    // The writer stops between batches; what is still queued is written before the scope closes.
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(Fiber.interrupt(writer), Effect.flatMap(Queue.takeAll(pending), writeAll))
    )

    return {
      save: (record) =>
        Effect.suspend(() => {
          latest.set(record.id, record)
          // Known at once to this process; the stored index is completed by the writer.
          const known = saved.get(record.parentSessionId) ?? []
          if (!known.includes(record.id)) saved.set(record.parentSessionId, [...known, record.id])
          return Queue.offer(pending, record)
        }),
      load: (id) =>
        Effect.suspend(() => {
          const known = latest.get(id)
          if (known !== undefined) return Effect.succeed(Option.some(known))
          return api.state.get(recordKey(id)).pipe(
            Effect.map((value) => Option.flatMap(value, decodeRecord)),
            Effect.catchAll(() => Effect.succeed(Option.none()))
          )
        }),
      idsOf
    }
  })
