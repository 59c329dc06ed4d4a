// Start-up reconciliation (ST-4, CH-3): what a dead process left queued or running is marked
// interrupted — its runs, its sessions (children, and roots it created or ran) — and the tool
// calls its runs left running are ended as cancelled, so nothing reads as running for ever.

import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { isAliveSync, type ProcessOwner } from "../../ProcessOwner.js"
import type { SessionStoreService } from "../../SessionStore.js"
import { stopOrphansOf } from "../../tools/internal/processTree.js"
import * as Rows from "../sessionRows.js"
import { DEAD_CALL_RESULT, makeCloseRun } from "./closeRun.js"
import { Id, onFirstCall, type Sql, unfinished } from "./sql.js"

/** A journal row still `running` whose run was interrupted, or, with no run on record, whose session has ended. */
const deadToolCall = `tool_calls.status = 'running' AND (
    EXISTS (SELECT 1 FROM runs WHERE runs.id = tool_calls.run_id AND runs.status = 'interrupted')
    OR (NOT EXISTS (SELECT 1 FROM runs WHERE runs.id = tool_calls.run_id)
      AND NOT EXISTS (SELECT 1 FROM sessions WHERE sessions.id = tool_calls.session_id AND sessions.status IN ${unfinished})))`

const queries = ({ reading, run, writing }: Sql) =>
  onFirstCall({
    unfinishedRuns: () =>
      reading(
        "A run",
        SqlSchema.findAll({
          Request: Schema.Void,
          Result: Rows.UnfinishedRow,
          execute: () => run(`SELECT id, owner_pid, owner_token, owner_host FROM runs WHERE status IN ${unfinished}`)
        })
      ),
    /** Marks one run interrupted unless it ended or changed owner since it was read; the ones changed. */
    interruptRun: () =>
      writing(
        SqlSchema.findAll({
          Request: Schema.Struct({
            id: Schema.String,
            owner_pid: Schema.Int,
            owner_token: Schema.String,
            now: Schema.Number
          }),
          Result: Schema.Struct({ id: Schema.String, error: Schema.String }),
          execute: (r) =>
            run(
              `UPDATE runs SET status = 'interrupted', ended_at = ?,
            error = coalesce(error, 'The process running it (pid ' || owner_pid || ') ended before the run finished.')
          WHERE id = ? AND status IN ${unfinished} AND owner_pid = ? AND owner_token = ? RETURNING id, error`,
              [r.now, r.id, r.owner_pid, r.owner_token]
            )
        })
      ),
    unfinishedSessions: () =>
      reading(
        "A session",
        SqlSchema.findAll({
          Request: Schema.Void,
          Result: Rows.UnfinishedRow,
          execute: () =>
            run(`SELECT id, owner_pid, owner_token, owner_host FROM sessions WHERE status IN ${unfinished}`)
        })
      ),
    /**
     * Marks one session interrupted unless its owner changed since it was read, or a run of it is
     * still going (a live process resumed it and has not yet said so on the session); the ids changed.
     */
    interruptSession: () =>
      writing(
        SqlSchema.findAll({
          Request: Schema.Struct({
            id: Schema.String,
            owner_pid: Schema.NullOr(Schema.Int),
            owner_token: Schema.NullOr(Schema.String),
            now: Schema.Number
          }),
          Result: Id,
          execute: (r) =>
            run(
              `UPDATE sessions SET status = 'interrupted', updated_at = ?
          WHERE id = ? AND status IN ${unfinished} AND owner_pid IS ? AND owner_token IS ?
            AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.session_id = sessions.id AND runs.status IN ${unfinished})
          RETURNING id`,
              [r.now, r.id, r.owner_pid, r.owner_token]
            )
        })
      ),
    /** Whether a tool call is left running by a run that was interrupted (or, before runs, in a session that ended). */
    anyDeadToolCall: () => () =>
      Effect.map(run(`SELECT 1 FROM tool_calls WHERE ${deadToolCall} LIMIT 1`), (rows) => rows.length > 0),
    endDeadToolCalls: () =>
      writing(
        SqlSchema.findAll({
          Request: Schema.Struct({ now: Schema.Number }),
          Result: Schema.Struct({ seq: Schema.Int }),
          execute: (r) =>
            run(
              `UPDATE tool_calls SET status = 'cancelled', ended_at = ?,
            result = coalesce(result, ?)
          WHERE ${deadToolCall} RETURNING seq`,
              [r.now, DEAD_CALL_RESULT]
            )
        })
      ),
    /** Root sessions still marked running whose every run has ended: after a crash, interrupted. */
    settleRoots: () =>
      writing(
        SqlSchema.findAll({
          Request: Schema.Struct({ now: Schema.Number }),
          Result: Id,
          execute: (r) =>
            run(
              `UPDATE sessions SET status = 'interrupted', updated_at = ?
          WHERE parent_id IS NULL AND status IN ${unfinished}
            AND EXISTS (SELECT 1 FROM runs WHERE runs.session_id = sessions.id AND runs.status = 'interrupted')
            AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.session_id = sessions.id AND runs.status IN ${unfinished})
          RETURNING id`,
              [r.now]
            )
        })
      )
  })

export const makeReconcile = (sql: Sql) => {
  const { db } = sql
  const q = queries(sql)
  const closeRun = makeCloseRun(sql)

  const interruptRuns: NonNullable<SessionStoreService["interruptRuns"]> = () =>
    Effect.gen(function* () {
      const unfinishedRuns = yield* db.use(q.unfinishedRuns(undefined))
      const unfinishedSessions = yield* db.use(q.unfinishedSessions(undefined))
      const liveness = new Map<string, boolean>()
      // A row without an owner predates owners (v3): no process of this version is running it.
      const ownerIsGone = (row: typeof Rows.UnfinishedRow.Type) => {
        if (row.owner_pid === null || row.owner_token === null) return true
        const owner: ProcessOwner = {
          pid: row.owner_pid,
          token: row.owner_token,
          ...(row.owner_host === null ? {} : { host: row.owner_host })
        }
        const key = `${owner.pid}\u0000${owner.token}\u0000${owner.host ?? ""}`
        let alive = liveness.get(key)
        if (alive === undefined) {
          alive = isAliveSync(owner)
          liveness.set(key, alive)
        }
        return !alive
      }
      const deadRuns = unfinishedRuns.filter(ownerIsGone)
      const deadSessions = unfinishedSessions.filter(ownerIsGone)
      // Only write (and wait for the write lock) when something is dead: this runs at every start.
      if (deadRuns.length === 0 && deadSessions.length === 0 && !(yield* db.use(q.anyDeadToolCall()))) {
        return { runs: 0, sessions: 0 }
      }
      const now = yield* Clock.currentTimeMillis
      // What their commands and MCP servers left running would otherwise run for ever.
      stopOrphansOf([...new Set([...deadRuns, ...deadSessions].flatMap((row) => row.owner_token ?? []))])
      return yield* db.transaction(
        Effect.gen(function* () {
          let runCount = 0
          let sessionCount = 0
          for (const row of deadRuns) {
            const changed = yield* q.interruptRun({
              id: row.id,
              owner_pid: row.owner_pid!,
              owner_token: row.owner_token!,
              now
            })
            runCount += changed.length
            for (const ended of changed) yield* closeRun(ended.id, ended.error, now)
          }
          for (const row of deadSessions) {
            const changed = yield* q.interruptSession({
              id: row.id,
              owner_pid: row.owner_pid,
              owner_token: row.owner_token,
              now
            })
            sessionCount += changed.length
          }
          if (runCount > 0) sessionCount += (yield* q.settleRoots({ now })).length
          yield* q.endDeadToolCalls({ now })
          return { runs: runCount, sessions: sessionCount }
        })
      )
    })

  return { interruptRuns }
}
