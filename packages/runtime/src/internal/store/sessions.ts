// Sessions and their conversation (ST-1): creating, reading and listing sessions, their
// status, and appending messages at increasing positions.

import { randomUUID } from "node:crypto"
import { SessionNotFoundError, type StoreError } from "@alisio/domain/Errors"
import { type RunId, SessionId } from "@alisio/domain/Ids"
import type { Message } from "@alisio/domain/Message"
import { RunStatus } from "@alisio/domain/RunEvent"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { currentOwner } from "../../ProcessOwner.js"
import type { NewSession, Session, SessionStoreService, StoredMessage } from "../../SessionStore.js"
import * as Rows from "../sessionRows.js"
import { Id, Owner, onFirstCall, ownerColumns, type Sql } from "./sql.js"

const queries = ({ always, reading, run, writing }: Sql) =>
  onFirstCall({
    insert: () =>
      writing(
        SqlSchema.void({
          Request: Schema.Struct({
            id: Schema.String,
            parent_id: Schema.NullOr(Schema.String),
            title: Schema.NullOr(Schema.String),
            cwd: Schema.String,
            status: RunStatus,
            ...Owner,
            now: Schema.Number
          }),
          execute: (r) =>
            run(
              `INSERT INTO sessions (id, parent_id, title, cwd, status, pinned, archived, owner_pid, owner_token, owner_host,
            created_at, updated_at)
          VALUES (?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?)`,
              [r.id, r.parent_id, r.title, r.cwd, r.status, r.owner_pid, r.owner_token, r.owner_host, r.now, r.now]
            )
        })
      ),
    byId: () =>
      reading(
        "A session",
        SqlSchema.findOne({
          Request: Schema.String,
          Result: Rows.SessionRow,
          execute: (id) => run(`SELECT ${Rows.sessionColumns} FROM sessions WHERE id = ?`, [id])
        })
      ),
    list: () =>
      reading(
        "A session",
        SqlSchema.findAll({
          Request: Schema.Struct({
            cwd: Schema.optional(Schema.String),
            parentId: Schema.optional(Schema.NullOr(Schema.String)),
            limit: Schema.optional(Schema.Number)
          }),
          Result: Rows.SessionRow,
          execute: (filter) => {
            const where: Array<string> = []
            const params: Array<unknown> = []
            if (filter.cwd !== undefined) {
              where.push("cwd = ?")
              params.push(filter.cwd)
            }
            if (filter.parentId === null) where.push("parent_id IS NULL")
            else if (filter.parentId !== undefined) {
              where.push("parent_id = ?")
              params.push(filter.parentId)
            }
            // LIMIT -1 is no limit.
            params.push(
              filter.limit !== undefined && Number.isFinite(filter.limit) ? Math.max(0, Math.floor(filter.limit)) : -1
            )
            return run(
              `SELECT ${Rows.sessionColumns} FROM sessions${where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`}
            ORDER BY updated_at DESC, rowid DESC LIMIT ?`,
              params
            )
          }
        })
      ),
    latestRoot: () =>
      reading(
        "A session",
        SqlSchema.findOne({
          Request: Schema.String,
          Result: Rows.SessionRow,
          execute: (cwd) =>
            run(
              `SELECT ${Rows.sessionColumns} FROM sessions
            WHERE cwd = ? AND parent_id IS NULL AND coalesce(archived, 0) = 0
            ORDER BY updated_at DESC, rowid DESC LIMIT 1`,
              [cwd]
            )
        })
      ),
    /** Sets the status; with an owner, also who answers for the session now. Returns the ids changed. */
    setStatus: () =>
      writing(
        SqlSchema.findAll({
          Request: Schema.Struct({
            id: Schema.String,
            status: RunStatus,
            now: Schema.Number,
            owner: Schema.NullOr(Schema.Struct(Owner))
          }),
          Result: Id,
          execute: (r) =>
            r.owner === null
              ? run("UPDATE sessions SET status = ?, updated_at = ? WHERE id = ? RETURNING id", [r.status, r.now, r.id])
              : run(
                  `UPDATE sessions SET status = ?, updated_at = ?, owner_pid = ?, owner_token = ?, owner_host = ?
            WHERE id = ? RETURNING id`,
                  [r.status, r.now, r.owner.owner_pid, r.owner.owner_token, r.owner.owner_host, r.id]
                )
        })
      ),
    touch: () =>
      writing(
        SqlSchema.void({
          Request: Schema.Struct({ id: Schema.String, now: Schema.Number }),
          execute: (r) => run("UPDATE sessions SET updated_at = ? WHERE id = ?", [r.now, r.id])
        })
      ),
    /** Whether the session exists, and the position of its last message (0 when none). */
    tail: () =>
      reading(
        "A session",
        always(
          SqlSchema.single({
            Request: Schema.String,
            Result: Schema.Struct({ found: Schema.Int, last: Schema.Int }),
            execute: (id) =>
              run(
                `SELECT (SELECT count(*) FROM sessions WHERE id = ?) AS found,
            coalesce((SELECT max(position) FROM messages WHERE session_id = ?), 0) AS last`,
                [id, id]
              )
          })
        )
      ),
    insertMessage: () =>
      writing(
        SqlSchema.void({
          Request: Schema.Struct({
            session_id: Schema.String,
            position: Schema.Int,
            run_id: Schema.NullOr(Schema.String),
            role: Schema.String,
            message: Rows.MessageJson,
            now: Schema.Number
          }),
          execute: (r) =>
            run(
              "INSERT INTO messages (session_id, position, run_id, role, message, created_at) VALUES (?, ?, ?, ?, ?, ?)",
              [r.session_id, r.position, r.run_id, r.role, r.message, r.now]
            )
        })
      ),
    messages: () =>
      reading(
        "A message",
        SqlSchema.findAll({
          Request: Schema.Struct({ id: Schema.String, after: Schema.Number }),
          Result: Rows.MessageRow,
          execute: (r) =>
            run(`SELECT ${Rows.messageColumns} FROM messages WHERE session_id = ? AND position > ? ORDER BY position`, [
              r.id,
              r.after
            ])
        })
      )
  })

export const makeSessions = (sql: Sql) => {
  const { db, notFound } = sql
  const q = queries(sql)

  const createSession = (input: NewSession): Effect.Effect<Session, StoreError> =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const id = input.id ?? SessionId.make(randomUUID())
      const status = input.status ?? "queued"
      yield* db.use(
        q.insert({
          id,
          parent_id: input.parentId ?? null,
          title: input.title ?? null,
          cwd: input.cwd,
          status,
          ...ownerColumns(input.owner ?? currentOwner),
          now
        })
      )
      return {
        id,
        ...(input.parentId === undefined ? {} : { parentId: input.parentId }),
        ...(input.title === undefined ? {} : { title: input.title }),
        cwd: input.cwd,
        status,
        pinned: false,
        archived: false,
        createdAt: now,
        updatedAt: now
      }
    })

  const session = (id: SessionId): Effect.Effect<Session, SessionNotFoundError | StoreError> =>
    Effect.flatMap(
      db.use(q.byId(id)),
      Option.match({
        onNone: () =>
          Effect.fail(new SessionNotFoundError({ sessionId: id, message: `No session ${id} in ${sql.file}.` })),
        onSome: (row) => Effect.succeed(Rows.toSession(row))
      })
    )

  const sessions: SessionStoreService["sessions"] = (filter = {}) =>
    Effect.map(db.use(q.list(filter)), (rows) => rows.map(Rows.toSession))

  const latestSession = (cwd: string) => Effect.map(db.use(q.latestRoot(cwd)), Option.map(Rows.toSession))

  const setSessionStatus: SessionStoreService["setSessionStatus"] = (id, status) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      // A queued or running session is answered for by the process that says so (ST-4).
      const owner = status === "queued" || status === "running" ? ownerColumns(currentOwner) : null
      const updated = yield* db.use(q.setStatus({ id, status, now, owner }))
      if (updated.length === 0) return yield* notFound(`Session ${id}`)
    })

  const appendMessages = (sessionId: SessionId, messages: ReadonlyArray<Message>, runId?: RunId) =>
    Effect.gen(function* () {
      if (messages.length === 0) return []
      const now = yield* Clock.currentTimeMillis
      return yield* db.transaction(
        Effect.gen(function* () {
          const { found, last } = yield* q.tail(sessionId)
          if (found === 0) return yield* notFound(`Session ${sessionId}`)
          const stored: Array<StoredMessage> = []
          for (const [index, message] of messages.entries()) {
            const position = last + index + 1
            yield* q.insertMessage({
              session_id: sessionId,
              position,
              run_id: runId ?? null,
              role: message.role,
              message,
              now
            })
            stored.push({ sessionId, position, ...(runId === undefined ? {} : { runId }), message, createdAt: now })
          }
          yield* q.touch({ id: sessionId, now })
          return stored
        })
      )
    })

  const messages: SessionStoreService["messages"] = (sessionId, options) =>
    Effect.map(db.use(q.messages({ id: sessionId, after: options?.afterPosition ?? 0 })), (rows) =>
      rows.map(Rows.toStoredMessage)
    )

  return { createSession, session, sessions, latestSession, setSessionStatus, appendMessages, messages }
}
