// Tasks as the plugin's state keeps them, read by a later process: where each stands now (a task an
// ended process left running reads as its child session does, one it left queued as interrupted
// unless the run that asked for it goes on), and what the model gets for one of
// its session's tasks that ran in an earlier process (its result, read from its child session).
import { RunId, SessionId } from "@alisio/domain/Ids"
import type { PluginApiService } from "@alisio/domain/Plugin"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { TaskRecord, TaskRecords } from "../TaskRecords.js"
import { resultText } from "../TaskResult.js"

export const isRunning = (status: string) => status === "queued" || status === "running"

export interface StoredTasks {
  /** The record as it stands now. */
  readonly current: (record: TaskRecord) => Effect.Effect<TaskRecord>
  /** A stored task's record as it stands now, and its result as the model reads it once it ended. */
  readonly earlier: (id: string) => Effect.Effect<Option.Option<{ readonly record: TaskRecord; readonly text: string }>>
}

export const makeStoredTasks = (
  api: PluginApiService,
  records: TaskRecords,
  live: (id: string) => TaskRecord | undefined,
  maxResultChars: number
): StoredTasks => {
  const handleOf = (record: TaskRecord) =>
    record.sessionId === undefined || record.runId === undefined
      ? undefined
      : { sessionId: SessionId.make(record.sessionId), runId: RunId.make(record.runId) }

  /** Whether the run that asked for a task still goes on (in the process that holds the task). */
  const askerRunning = (record: TaskRecord) =>
    record.parentRunId === undefined
      ? Effect.succeed(false)
      : Effect.map(
          api.sessions.status({
            sessionId: SessionId.make(record.parentSessionId),
            runId: RunId.make(record.parentRunId)
          }),
          (asker) => isRunning(asker.status)
        )

  const current = (record: TaskRecord) =>
    Effect.gen(function* () {
      const known = live(record.id)
      if (known !== undefined) return known
      if (!isRunning(record.status)) return record
      const handle = handleOf(record)
      if (handle === undefined) {
        // Queued in another process, which may still be running it, or left so by one that ended.
        return (yield* askerRunning(record)) ? record : { ...record, status: "interrupted" as const }
      }
      const outcome = yield* api.sessions.status(handle)
      return { ...record, status: outcome.status, usage: isRunning(outcome.status) ? record.usage : outcome.usage }
    })

  const earlier = (id: string) =>
    Effect.gen(function* () {
      const stored = yield* records.load(id)
      if (Option.isNone(stored)) return Option.none()
      const record = yield* current(stored.value)
      const handle = handleOf(record)
      const outcome = handle === undefined || isRunning(record.status) ? undefined : yield* api.sessions.status(handle)
      const now = yield* Clock.currentTimeMillis
      const text = resultText(
        {
          id: record.id,
          agent: record.agent,
          status: record.status,
          answer: outcome?.text ?? "",
          error: record.error ?? outcome?.error,
          usage: record.usage,
          elapsedMs: Math.max(0, (record.endedAt ?? now) - (record.startedAt ?? record.queuedAt)),
          worktree: record.worktree,
          workspaceNote: record.workspaceNote
        },
        maxResultChars
      )
      return Option.some({ record, text })
    })

  return { current, earlier }
}
