// Runs (ST-2, ST-3): one row per run, begun idempotently on a request id and ended together
// with its session's status. A root run's request id is claimed in `run_requests`, unique across
// the database (issue 10 item 9): a repeat finds the run in one query whatever its session, and of
// two processes racing on one id, the one whose `beginRun` commits second gets the first's run.

import { RunStatus } from "@alisio/domain/RunEvent"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { RunRecord, SessionStoreService } from "../../SessionStore.js"
import * as Rows from "../sessionRows.js"
import { Id, Owner, onFirstCall, ownerColumns, type Sql, unfinished } from "./sql.js"

const queries = ({ reading, run, writing }: Sql) =>
  onFirstCall({
    byRequest: () =>
      reading(
        "A run",
        SqlSchema.findOne({
          Request: Schema.Struct({ session_id: Schema.String, request_id: Schema.String }),
          Result: Rows.RunRow,
          execute: (r) =>
            run(`SELECT ${Rows.runColumns} FROM runs WHERE session_id = ? AND request_id = ?`, [
              r.session_id,
              r.request_id
            ])
        })
      ),
    byId: () =>
      reading(
        "A run",
        SqlSchema.findOne({
          Request: Schema.String,
          Result: Rows.RunRow,
          execute: (id) => run(`SELECT ${Rows.runColumns} FROM runs WHERE id = ?`, [id])
        })
      ),
    ofSession: () =>
      reading(
        "A run",
        SqlSchema.findAll({
          Request: Schema.String,
          Result: Rows.RunRow,
          execute: (id) =>
            run(`SELECT ${Rows.runColumns} FROM runs WHERE session_id = ? ORDER BY created_at, rowid`, [id])
        })
      ),
    insert: () =>
      writing(
        SqlSchema.void({
          Request: Schema.Struct({
            id: Schema.String,
            session_id: Schema.String,
            request_id: Schema.NullOr(Schema.String),
            provider: Schema.String,
            model: Schema.String,
            ...Owner,
            now: Schema.Number
          }),
          execute: (r) =>
            run(
              `INSERT INTO runs (id, session_id, request_id, status, provider, model, owner_pid, owner_token, owner_host,
            created_at, started_at)
          VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)`,
              [
                r.id,
                r.session_id,
                r.request_id,
                r.provider,
                r.model,
                r.owner_pid,
                r.owner_token,
                r.owner_host,
                r.now,
                r.now
              ]
            )
        })
      ),
    /** Moves the run to `status`, stamping when it started or ended; the ids changed. */
    update: () =>
      writing(
        SqlSchema.findAll({
          Request: Schema.Struct({
            id: Schema.String,
            status: RunStatus,
            usage: Schema.NullOr(Rows.UsageJson),
            error: Schema.NullOr(Schema.String),
            now: Schema.Number
          }),
          Result: Id,
          execute: (r) =>
            run(
              `UPDATE runs SET status = ?, usage = coalesce(?, usage), error = coalesce(?, error),
            started_at = CASE WHEN ? = 'running' THEN coalesce(started_at, ?) ELSE started_at END,
            ended_at = CASE WHEN ? IN ${unfinished} THEN ended_at ELSE ? END
          WHERE id = ? RETURNING id`,
              [r.status, r.usage, r.error, r.status, r.now, r.status, r.now, r.id]
            )
        })
      ),
    /** The root run that claimed a request id. */
    claimed: () =>
      reading(
        "A run",
        SqlSchema.findOne({
          Request: Schema.String,
          Result: Rows.RunRow,
          execute: (requestId) =>
            run(
              `SELECT ${Rows.runColumns} FROM runs WHERE id = (SELECT run_id FROM run_requests WHERE request_id = ?)`,
              [requestId]
            )
        })
      ),
    claim: () =>
      writing(
        SqlSchema.void({
          Request: Schema.Struct({ request_id: Schema.String, run_id: Schema.String, now: Schema.Number }),
          execute: (r) =>
            run("INSERT INTO run_requests (request_id, run_id, created_at) VALUES (?, ?, ?)", [
              r.request_id,
              r.run_id,
              r.now
            ])
        })
      ),
    isRoot: () => (sessionId: string) =>
      Effect.map(
        run("SELECT 1 FROM sessions WHERE id = ? AND parent_id IS NULL", [sessionId]),
        (rows) => rows.length > 0
      ),
    /**
     * Removes a root session created for a request that another process claimed first: only while
     * it is still the empty, queued session its creator made (no message, run or event).
     */
    dropPlaceholder: () =>
      writing(
        SqlSchema.void({
          Request: Schema.Struct({ id: Schema.String, ...Owner }),
          execute: (r) =>
            run(
              `DELETE FROM sessions WHERE id = ? AND parent_id IS NULL AND status = 'queued'
            AND owner_pid = ? AND owner_token = ?
            AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.session_id = sessions.id)
            AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.session_id = sessions.id)
            AND NOT EXISTS (SELECT 1 FROM events WHERE events.session_id = sessions.id)`,
              [r.id, r.owner_pid, r.owner_token]
            )
        })
      ),
    /** Gives the session of a run the status the run ended with. */
    sessionEndedBy: () =>
      writing(
        SqlSchema.findAll({
          Request: Schema.Struct({ run: Schema.String, status: RunStatus, now: Schema.Number }),
          Result: Id,
          execute: (r) =>
            run(
              "UPDATE sessions SET status = ?, updated_at = ? WHERE id = (SELECT session_id FROM runs WHERE id = ?) RETURNING id",
              [r.status, r.now, r.run]
            )
        })
      )
  })

export const makeRuns = (sql: Sql) => {
  const { db, notFound } = sql
  const q = queries(sql)

  const beginRun: NonNullable<SessionStoreService["beginRun"]> = (input) =>
    db.transaction(
      Effect.gen(function* () {
        const earlier =
          input.requestId === undefined
            ? yield* q.byId(input.id)
            : yield* q.byRequest({ session_id: input.sessionId, request_id: input.requestId })
        if (Option.isSome(earlier)) return { run: Rows.toRunRecord(earlier.value), existing: true }
        const claims = input.requestId !== undefined && (yield* q.isRoot(input.sessionId))
        if (claims) {
          const winner = yield* q.claimed(input.requestId!)
          if (Option.isSome(winner)) {
            yield* q.dropPlaceholder({ id: input.sessionId, ...ownerColumns(input.owner) })
            return { run: Rows.toRunRecord(winner.value), existing: true }
          }
        }
        const now = yield* Clock.currentTimeMillis
        yield* q.insert({
          id: input.id,
          session_id: input.sessionId,
          request_id: input.requestId ?? null,
          provider: input.provider,
          model: input.model,
          ...ownerColumns(input.owner),
          now
        })
        if (claims) yield* q.claim({ request_id: input.requestId!, run_id: input.id, now })
        const run: RunRecord = {
          id: input.id,
          sessionId: input.sessionId,
          ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
          status: "running",
          provider: input.provider,
          model: input.model,
          owner: input.owner,
          createdAt: now,
          startedAt: now
        }
        return { run, existing: false }
      })
    )

  const endRun: NonNullable<SessionStoreService["endRun"]> = (id, end) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      yield* db.transaction(
        Effect.gen(function* () {
          const updated = yield* q.update({
            id,
            status: end.status,
            usage: end.usage ?? null,
            error: end.error ?? null,
            now
          })
          if (updated.length === 0) return yield* notFound(`Run ${id}`)
          yield* q.sessionEndedBy({ run: id, status: end.status, now })
        })
      )
    })

  const runByRequest: NonNullable<SessionStoreService["runByRequest"]> = (sessionId, requestId) =>
    Effect.map(db.use(q.byRequest({ session_id: sessionId, request_id: requestId })), Option.map(Rows.toRunRecord))

  const runForRequest: NonNullable<SessionStoreService["runForRequest"]> = (requestId) =>
    Effect.map(db.use(q.claimed(requestId)), Option.map(Rows.toRunRecord))

  const runs: NonNullable<SessionStoreService["runs"]> = (sessionId) =>
    Effect.map(db.use(q.ofSession(sessionId)), (rows) => rows.map(Rows.toRunRecord))

  return { beginRun, endRun, runByRequest, runForRequest, runs }
}
