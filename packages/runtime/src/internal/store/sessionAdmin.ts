// Managing sessions as a person does (ST-1, issue 16): finding one by the first characters of its
// id, listing them with their run and child counts, renaming, moving to another folder, and
// deleting a session with everything it holds and every descendant, in one transaction.

import { SessionLockedError, SessionNotFoundError } from "@alisio/domain/Errors"
import { SessionId } from "@alisio/domain/Ids"
import { textOf } from "@alisio/domain/Message"
import { onFirstCall as lazily } from "@alisio/domain/OnFirstUse"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { isAliveSync } from "../../ProcessOwner.js"
import type { SessionStoreService, SessionSummary } from "../../SessionStore.js"
import * as Rows from "../sessionRows.js"
import { Id, onFirstCall, ownerOf, type Sql, unfinished } from "./sql.js"

// Text compares by its UTF-8 bytes: every id that starts with `prefix` sorts between `prefix` and
// `prefix` followed by the highest code point, so the lookup is a range on the primary key.
const upperBound = (prefix: string) => `${prefix}\u{10FFFF}`

/** The ids of the sessions named by a JSON array (the one parameter) and of all their descendants. */
const tree = `WITH RECURSIVE tree(id) AS (
    SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?))
    UNION SELECT sessions.id FROM sessions JOIN tree ON sessions.parent_id = tree.id)`

/** A list of ids as the one parameter of `json_each`: no limit on how many. */
const IdList = Schema.parseJson(Schema.Array(Schema.String))

const SummaryRow = Schema.Struct({
  ...Rows.SessionRow.fields,
  run_count: Schema.Int,
  child_count: Schema.Int,
  /** Decoded in `toSummary`: a damaged first message only leaves the prompt out of the listing. */
  first_message: Schema.NullOr(Schema.String)
})

const summaryColumns = `${Rows.sessionColumns
  .split(", ")
  .map((column) => `s.${column}`)
  .join(", ")},
  (SELECT count(*) FROM runs WHERE runs.session_id = s.id) AS run_count,
  (SELECT count(*) FROM sessions c WHERE c.parent_id = s.id) AS child_count,
  (SELECT message FROM messages WHERE messages.session_id = s.id AND messages.role = 'user'
    ORDER BY position LIMIT 1) AS first_message`

const LiveRow = Schema.Struct({
  id: Schema.String,
  pid: Schema.Int,
  token: Schema.String,
  host: Schema.NullOr(Schema.String)
})

const queries = ({ reading, run, writing }: Sql) =>
  onFirstCall({
    byPrefix: () =>
      reading(
        "A session",
        SqlSchema.findAll({
          Request: Schema.Struct({ prefix: Schema.String, limit: Schema.Int }),
          Result: Rows.SessionRow,
          execute: (r) =>
            run(`SELECT ${Rows.sessionColumns} FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT ?`, [
              r.prefix,
              upperBound(r.prefix),
              r.limit
            ])
        })
      ),
    summaries: () =>
      reading(
        "A session",
        SqlSchema.findAll({
          Request: Schema.Struct({
            cwd: Schema.optional(Schema.String),
            firstCwd: Schema.optional(Schema.String),
            parentId: Schema.optional(Schema.NullOr(Schema.String)),
            limit: Schema.optional(Schema.Number)
          }),
          Result: SummaryRow,
          execute: (filter) => {
            const where: Array<string> = []
            const params: Array<unknown> = []
            if (filter.cwd !== undefined) {
              where.push("s.cwd = ?")
              params.push(filter.cwd)
            }
            if (filter.parentId === null) where.push("s.parent_id IS NULL")
            else if (filter.parentId !== undefined) {
              where.push("s.parent_id = ?")
              params.push(filter.parentId)
            }
            const order = filter.firstCwd === undefined ? "" : "s.cwd = ? DESC, "
            if (filter.firstCwd !== undefined) params.push(filter.firstCwd)
            // LIMIT -1 is no limit.
            params.push(
              filter.limit !== undefined && Number.isFinite(filter.limit) ? Math.max(0, Math.floor(filter.limit)) : -1
            )
            return run(
              `SELECT ${summaryColumns} FROM sessions s${where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`}
            ORDER BY ${order}s.updated_at DESC, s.rowid DESC LIMIT ?`,
              params
            )
          }
        })
      ),
    /** Sets the title, only while it is still `expected` when that is given; the ids changed. */
    rename: () =>
      writing(
        SqlSchema.findAll({
          Request: Schema.Struct({
            id: Schema.String,
            title: Schema.String,
            conditional: Schema.Boolean,
            expected: Schema.NullOr(Schema.String)
          }),
          Result: Id,
          execute: (r) =>
            r.conditional
              ? run("UPDATE sessions SET title = ? WHERE id = ? AND title IS ? RETURNING id", [
                  r.title,
                  r.id,
                  r.expected
                ])
              : run("UPDATE sessions SET title = ? WHERE id = ? RETURNING id", [r.title, r.id])
        })
      ),
    /** Gives a session and all its descendants another folder. */
    move: () =>
      writing(
        SqlSchema.void({
          Request: Schema.Struct({ ids: IdList, cwd: Schema.String }),
          execute: (r) => run(`${tree} UPDATE sessions SET cwd = ? WHERE id IN tree`, [r.ids, r.cwd])
        })
      ),
    exists: () => (id: string) =>
      Effect.map(run("SELECT 1 FROM sessions WHERE id = ?", [id]), (rows) => rows.length > 0),
    treeIds: () =>
      reading(
        "A session",
        SqlSchema.findAll({
          Request: IdList,
          Result: Id,
          execute: (ids) => run(`${tree} SELECT id FROM tree`, [ids])
        })
      ),
    /** What some process may still be doing in the tree: its unfinished runs and sessions, and its locks. */
    claims: () =>
      reading(
        "A run",
        SqlSchema.findAll({
          Request: IdList,
          Result: LiveRow,
          execute: (ids) =>
            run(
              `${tree}
          SELECT session_id AS id, owner_pid AS pid, owner_token AS token, owner_host AS host FROM runs
            WHERE session_id IN tree AND status IN ${unfinished}
          UNION ALL SELECT id, owner_pid, owner_token, owner_host FROM sessions
            WHERE id IN tree AND status IN ${unfinished} AND owner_pid IS NOT NULL AND owner_token IS NOT NULL
          UNION ALL SELECT session_id, pid, token, host FROM session_locks WHERE session_id IN tree`,
              [ids]
            )
        })
      ),
    /**
     * What some process may still be doing in the ancestors of the listed sessions (the ancestors
     * themselves, not their other descendants), each with the listed session it is above.
     */
    ancestorClaims: () =>
      reading(
        "A run",
        SqlSchema.findAll({
          Request: IdList,
          Result: Schema.Struct({ ...LiveRow.fields, below: Schema.String }),
          execute: (ids) =>
            run(
              `WITH RECURSIVE up(id, below) AS (
            SELECT parent_id, id FROM sessions WHERE id IN (SELECT value FROM json_each(?)) AND parent_id IS NOT NULL
            UNION SELECT s.parent_id, up.below FROM sessions s JOIN up ON s.id = up.id WHERE s.parent_id IS NOT NULL)
          SELECT r.session_id AS id, r.owner_pid AS pid, r.owner_token AS token, r.owner_host AS host, up.below AS below
            FROM runs r JOIN up ON r.session_id = up.id WHERE r.status IN ${unfinished}
          UNION ALL SELECT s.id, s.owner_pid, s.owner_token, s.owner_host, up.below FROM sessions s JOIN up ON s.id = up.id
            WHERE s.status IN ${unfinished} AND s.owner_pid IS NOT NULL AND s.owner_token IS NOT NULL
          UNION ALL SELECT l.session_id, l.pid, l.token, l.host, up.below FROM session_locks l JOIN up ON l.session_id = up.id`,
              [ids]
            )
        })
      ),
    /** Deletes the listed sessions and everything that belongs to them; the list is the whole tree. */
    deleteAll: () =>
      writing(
        SqlSchema.void({
          Request: IdList,
          execute: (ids) =>
            Effect.forEach(
              [
                "DELETE FROM run_requests WHERE run_id IN (SELECT id FROM runs WHERE session_id IN doomed)",
                "DELETE FROM runs WHERE session_id IN doomed",
                "DELETE FROM tool_calls WHERE session_id IN doomed",
                "DELETE FROM events WHERE session_id IN doomed",
                "DELETE FROM messages WHERE session_id IN doomed",
                "DELETE FROM compactions WHERE session_id IN doomed",
                "DELETE FROM session_locks WHERE session_id IN doomed",
                "DELETE FROM sessions WHERE id IN doomed"
              ],
              (statement) => run(`WITH doomed(id) AS (SELECT value FROM json_each(?)) ${statement}`, [ids]),
              { discard: true }
            )
        })
      )
  })

const decodeFirst = lazily(() => Schema.decodeUnknownOption(Rows.MessageJson))

const toSummary = (row: typeof SummaryRow.Type): SessionSummary => {
  const first = row.first_message === null ? null : Option.getOrNull(decodeFirst(row.first_message))
  const prompt = first !== null && first.role === "user" ? textOf(first.content) : undefined
  return {
    ...Rows.toSession(row),
    runCount: row.run_count,
    childCount: row.child_count,
    ...(prompt === undefined || prompt === "" ? {} : { firstPrompt: prompt })
  }
}

export const makeSessionAdmin = (sql: Sql) => {
  const { db } = sql
  const q = queries(sql)

  const sessionsByIdPrefix: SessionStoreService["sessionsByIdPrefix"] = (prefix, limit) =>
    prefix === ""
      ? Effect.succeed([])
      : Effect.map(db.use(q.byPrefix({ prefix, limit: Math.max(1, Math.floor(limit)) })), (rows) =>
          rows.map(Rows.toSession)
        )

  const sessionSummaries: SessionStoreService["sessionSummaries"] = (filter = {}) =>
    Effect.map(db.use(q.summaries(filter)), (rows) => rows.map(toSummary))

  const missing = (id: SessionId) =>
    new SessionNotFoundError({ sessionId: id, message: `No session ${id} in ${sql.file}.` })

  const renameSession: SessionStoreService["renameSession"] = (id, title, options) =>
    db.transaction(
      Effect.gen(function* () {
        const conditional = options !== undefined && options.whileTitle !== undefined
        const changed = yield* q.rename({
          id,
          title,
          conditional,
          expected: conditional ? (options.whileTitle ?? null) : null
        })
        if (changed.length > 0) return true
        if (!(yield* q.exists(id))) return yield* missing(id)
        return false
      })
    )

  /** Fails with `SessionLockedError` when a live process still answers for a session of the trees. */
  const refuseLive = (roots: ReadonlyArray<SessionId>, then: string) =>
    Effect.flatMap(q.claims(roots), (claims) => {
      const live = claims.find((row) => isAliveSync(ownerOf(row)))
      return live === undefined ? Effect.void : Effect.fail(inUse(SessionId.make(live.id), ownerOf(live), then))
    })

  /**
   * Fails when a live process answers for an ancestor of a session to delete: its run may still
   * resume, read or end that child, so the child goes only once that run has ended.
   */
  const refuseLiveAbove = (ids: ReadonlyArray<SessionId>) =>
    Effect.flatMap(q.ancestorClaims(ids), (claims) => {
      const live = claims.find((row) => isAliveSync(ownerOf(row)))
      if (live === undefined) return Effect.void
      const owner = ownerOf(live)
      const where = `pid ${owner.pid}${owner.host === undefined ? "" : ` on ${owner.host}`}`
      return Effect.fail(
        new SessionLockedError({
          sessionId: SessionId.make(live.id),
          holderPid: owner.pid,
          ...(owner.host === undefined ? {} : { holderHost: owner.host }),
          message:
            `Session ${live.below} belongs to session ${live.id}, which has a run in progress (${where}): ` +
            `wait for that run to end, or stop it (Ctrl-C where it runs, or kill ${owner.pid}), then delete the session.`
        })
      )
    })

  const moveSession: SessionStoreService["moveSession"] = (id, cwd) =>
    db.transaction(
      Effect.gen(function* () {
        if (!(yield* q.exists(id))) return yield* missing(id)
        yield* refuseLive([id], "move the session")
        yield* q.move({ ids: [id], cwd })
      })
    )

  const deleteSessions: SessionStoreService["deleteSessions"] = (ids) =>
    ids.length === 0
      ? Effect.succeed({ deleted: [] })
      : db.transaction(
          Effect.gen(function* () {
            const roots = [...new Set(ids)]
            for (const id of roots) if (!(yield* q.exists(id))) return yield* missing(id)
            yield* refuseLive(roots, "delete the session")
            yield* refuseLiveAbove(roots)
            const deleted = (yield* q.treeIds(roots)).map((row) => SessionId.make(row.id))
            yield* q.deleteAll(deleted)
            return { deleted }
          })
        )

  return { sessionsByIdPrefix, sessionSummaries, renameSession, moveSession, deleteSessions }
}

const inUse = (id: SessionId, owner: { readonly pid: number; readonly host?: string }, then: string) =>
  new SessionLockedError({
    sessionId: id,
    holderPid: owner.pid,
    ...(owner.host === undefined ? {} : { holderHost: owner.host }),
    message: `Session ${id} has a run in progress (pid ${owner.pid}${
      owner.host === undefined ? "" : ` on ${owner.host}`
    }): stop that run (Ctrl-C where it runs, or kill ${owner.pid}), then ${then}.`
  })
