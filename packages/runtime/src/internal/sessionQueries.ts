// Every statement of the session store, typed with Schema through SqlSchema: requests are
// encoded, rows decoded. Reads that do not decode fail as `corrupt`; a write whose request does
// not encode is a bug in the caller and dies.

import { RunStatus, ToolCallStatus } from "@alisio/domain/RunEvent"
import { ToolEffect } from "@alisio/domain/Tool"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { type Database, MEMORY, storeError } from "./sessionDatabase.js"
import * as Rows from "./sessionRows.js"

const unfinished = "('queued', 'running')"

const Id = Schema.Struct({ id: Schema.String })
const Owner = {
  owner_pid: Schema.Int,
  owner_token: Schema.String,
  owner_host: Schema.NullOr(Schema.String)
}
const PageQuery = Schema.Struct({ session_id: Schema.String, after: Schema.Number, limit: Schema.Int })

export const makeQueries = (db: Database) => {
  const { run } = db
  const file = db.filename === MEMORY ? "the in-memory session database" : db.filename

  const reading =
    <I, A, E, R>(what: string, query: (input: I) => Effect.Effect<A, E | ParseResult.ParseError, R>) =>
    (input: I) =>
      Effect.catchIf(query(input), ParseResult.isParseError, (error) =>
        Effect.fail(
          storeError(
            db.filename,
            "corrupt",
            `${what} in ${file} is not in the shape Alisio wrote (${ParseResult.TreeFormatter.formatErrorSync(
              error
            ).slice(0, 300)}).`
          )
        )
      )
  const writing =
    <I, A, E, R>(query: (input: I) => Effect.Effect<A, E | ParseResult.ParseError, R>) =>
    (input: I) =>
      Effect.catchIf(query(input), ParseResult.isParseError, (error) => Effect.die(error))
  // `SqlSchema.single` on a statement that always returns a row.
  const always =
    <I, A, E, R>(query: (input: I) => Effect.Effect<A, E | Cause.NoSuchElementException, R>) =>
    (input: I) =>
      Effect.catchIf(query(input), Cause.isNoSuchElementException, (error) => Effect.die(error))

  const sessions = {
    insert: writing(
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
    byId: reading(
      "A session",
      SqlSchema.findOne({
        Request: Schema.String,
        Result: Rows.SessionRow,
        execute: (id) => run(`SELECT ${Rows.sessionColumns} FROM sessions WHERE id = ?`, [id])
      })
    ),
    list: reading(
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
    latestRoot: reading(
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
    setStatus: writing(
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
    touch: writing(
      SqlSchema.void({
        Request: Schema.Struct({ id: Schema.String, now: Schema.Number }),
        execute: (r) => run("UPDATE sessions SET updated_at = ? WHERE id = ?", [r.now, r.id])
      })
    ),
    exists: (id: string) => Effect.map(run("SELECT 1 FROM sessions WHERE id = ?", [id]), (rows) => rows.length > 0),
    unfinishedChildren: reading(
      "A session",
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: Rows.UnfinishedRow,
        execute: () =>
          run(
            `SELECT id, owner_pid, owner_token, owner_host FROM sessions
            WHERE status IN ${unfinished} AND parent_id IS NOT NULL`
          )
      })
    ),
    /** Marks one child interrupted unless its owner changed since it was read; the ids changed. */
    interrupt: writing(
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
          WHERE id = ? AND status IN ${unfinished} AND owner_pid IS ? AND owner_token IS ? RETURNING id`,
            [r.now, r.id, r.owner_pid, r.owner_token]
          )
      })
    ),
    /** Gives the session of a run the status the run ended with. */
    endedBy: writing(
      SqlSchema.findAll({
        Request: Schema.Struct({ run: Schema.String, status: RunStatus, now: Schema.Number }),
        Result: Id,
        execute: (r) =>
          run(
            "UPDATE sessions SET status = ?, updated_at = ? WHERE id = (SELECT session_id FROM runs WHERE id = ?) RETURNING id",
            [r.status, r.now, r.run]
          )
      })
    ),
    /** Root sessions still marked running whose every run has ended: after a crash, interrupted. */
    settleRoots: writing(
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
  }

  const messages = {
    /** Whether the session exists, and the position of its last message (0 when none). */
    tail: reading(
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
    insert: writing(
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
    all: reading(
      "A message",
      SqlSchema.findAll({
        Request: Schema.String,
        Result: Rows.MessageRow,
        execute: (id) => run(`SELECT ${Rows.messageColumns} FROM messages WHERE session_id = ? ORDER BY position`, [id])
      })
    ),
    after: reading(
      "A message",
      SqlSchema.findAll({
        Request: PageQuery,
        Result: Rows.MessageRow,
        execute: (r) =>
          run(
            `SELECT ${Rows.messageColumns} FROM messages WHERE session_id = ? AND position > ? ORDER BY position LIMIT ?`,
            [r.session_id, r.after, r.limit]
          )
      })
    ),
    before: reading(
      "A message",
      SqlSchema.findAll({
        Request: PageQuery,
        Result: Rows.MessageRow,
        execute: (r) =>
          run(
            `SELECT ${Rows.messageColumns} FROM messages WHERE session_id = ? AND position < ?
            ORDER BY position DESC LIMIT ?`,
            [r.session_id, r.after, r.limit]
          )
      })
    )
  }

  const events = {
    /** One statement, so one transaction; returns the global seq it was given. */
    insert: always(
      writing(
        SqlSchema.single({
          Request: Schema.Struct({
            session_id: Schema.String,
            run_id: Schema.String,
            type: Schema.String,
            payload: Schema.String,
            now: Schema.Number,
            correlation_id: Schema.NullOr(Schema.String)
          }),
          Result: Schema.Struct({ seq: Schema.Int }),
          execute: (r) =>
            run(
              `INSERT INTO events (session_id, run_id, type, payload, created_at, correlation_id)
          VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`,
              [r.session_id, r.run_id, r.type, r.payload, r.now, r.correlation_id]
            )
        })
      )
    ),
    all: reading(
      "An event",
      SqlSchema.findAll({
        Request: Schema.Struct({ session_id: Schema.String, run_id: Schema.NullOr(Schema.String) }),
        Result: Rows.EventRow,
        execute: (r) =>
          r.run_id === null
            ? run("SELECT seq, payload FROM events WHERE session_id = ? ORDER BY seq", [r.session_id])
            : run("SELECT seq, payload FROM events WHERE session_id = ? AND run_id = ? ORDER BY seq", [
                r.session_id,
                r.run_id
              ])
      })
    ),
    after: reading(
      "An event",
      SqlSchema.findAll({
        Request: PageQuery,
        Result: Rows.EventRow,
        execute: (r) =>
          run("SELECT seq, payload FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?", [
            r.session_id,
            r.after,
            r.limit
          ])
      })
    ),
    before: reading(
      "An event",
      SqlSchema.findAll({
        Request: PageQuery,
        Result: Rows.EventRow,
        execute: (r) =>
          run("SELECT seq, payload FROM events WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?", [
            r.session_id,
            r.after,
            r.limit
          ])
      })
    )
  }

  const toolCalls = {
    insert: writing(
      SqlSchema.void({
        Request: Schema.Struct({
          id: Schema.String,
          session_id: Schema.String,
          run_id: Schema.NullOr(Schema.String),
          name: Schema.String,
          effect: Schema.NullOr(ToolEffect),
          arguments: Schema.String,
          started_at: Schema.Number
        }),
        execute: (r) =>
          run(
            `INSERT INTO tool_calls (id, session_id, run_id, name, effect, arguments, status, started_at)
          VALUES (?, ?, ?, ?, ?, ?, 'running', ?)`,
            [r.id, r.session_id, r.run_id, r.name, r.effect, r.arguments, r.started_at]
          )
      })
    ),
    end: writing(
      SqlSchema.void({
        Request: Schema.Struct({
          id: Schema.String,
          status: ToolCallStatus,
          result: Schema.String,
          ended_at: Schema.Number
        }),
        // Call ids come from the model and may repeat: the latest running call with the id is the one ending.
        execute: (r) =>
          run(
            `UPDATE tool_calls SET status = ?, result = ?, ended_at = ?
          WHERE seq = (SELECT seq FROM tool_calls WHERE id = ? AND status = 'running' ORDER BY seq DESC LIMIT 1)`,
            [r.status, r.result, r.ended_at, r.id]
          )
      })
    ),
    all: reading(
      "A tool call",
      SqlSchema.findAll({
        Request: Schema.String,
        Result: Rows.ToolCallRow,
        execute: (id) => run(`SELECT ${Rows.toolCallColumns} FROM tool_calls WHERE session_id = ? ORDER BY seq`, [id])
      })
    )
  }

  const PluginKey = Schema.Struct({ plugin_id: Schema.String, key: Schema.String })
  const pluginState = {
    get: reading(
      "A plugin state value",
      SqlSchema.findOne({
        Request: PluginKey,
        Result: Rows.PluginValueRow,
        execute: (r) => run("SELECT value FROM plugin_state WHERE plugin_id = ? AND key = ?", [r.plugin_id, r.key])
      })
    ),
    set: writing(
      SqlSchema.void({
        Request: Schema.Struct({ ...PluginKey.fields, json: Schema.String, now: Schema.Number }),
        execute: (r) =>
          run(
            `INSERT INTO plugin_state (plugin_id, key, value, updated_at) VALUES (?, ?, ?, ?)
          ON CONFLICT (plugin_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
            [r.plugin_id, r.key, r.json, r.now]
          )
      })
    ),
    remove: writing(
      SqlSchema.void({
        Request: PluginKey,
        execute: (r) => run("DELETE FROM plugin_state WHERE plugin_id = ? AND key = ?", [r.plugin_id, r.key])
      })
    )
  }

  const blobs = {
    /** Recording the same hash again keeps the first row. */
    insert: writing(
      SqlSchema.void({
        Request: Rows.BlobRow,
        execute: (r) =>
          run(
            "INSERT INTO blobs (hash, size, media_type, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
            [r.hash, r.size, r.media_type, r.created_at]
          )
      })
    ),
    byHash: reading(
      "A blob row",
      SqlSchema.findOne({
        Request: Schema.String,
        Result: Rows.BlobRow,
        execute: (hash) => run("SELECT hash, size, media_type, created_at FROM blobs WHERE hash = ?", [hash])
      })
    )
  }

  const locks = {
    holder: reading(
      "A session lock",
      SqlSchema.findOne({
        Request: Schema.String,
        Result: Rows.LockRow,
        execute: (id) => run("SELECT pid, token, host FROM session_locks WHERE session_id = ?", [id])
      })
    ),
    /** Takes the lock, replacing whatever row was there: the caller checked that its holder is gone. */
    take: writing(
      SqlSchema.void({
        Request: Schema.Struct({ session_id: Schema.String, ...Rows.LockRow.fields, now: Schema.Number }),
        execute: (r) =>
          run(
            `INSERT INTO session_locks (session_id, pid, token, host, acquired_at) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (session_id) DO UPDATE SET
            pid = excluded.pid, token = excluded.token, host = excluded.host, acquired_at = excluded.acquired_at`,
            [r.session_id, r.pid, r.token, r.host, r.now]
          )
      })
    ),
    release: writing(
      SqlSchema.void({
        Request: Schema.Struct({ session_id: Schema.String, pid: Schema.Int, token: Schema.String }),
        execute: (r) =>
          run("DELETE FROM session_locks WHERE session_id = ? AND pid = ? AND token = ?", [
            r.session_id,
            r.pid,
            r.token
          ])
      })
    )
  }

  const runs = {
    byRequest: reading(
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
    byId: reading(
      "A run",
      SqlSchema.findOne({
        Request: Schema.String,
        Result: Rows.RunRow,
        execute: (id) => run(`SELECT ${Rows.runColumns} FROM runs WHERE id = ?`, [id])
      })
    ),
    ofSession: reading(
      "A run",
      SqlSchema.findAll({
        Request: Schema.String,
        Result: Rows.RunRow,
        execute: (id) =>
          run(`SELECT ${Rows.runColumns} FROM runs WHERE session_id = ? ORDER BY created_at, rowid`, [id])
      })
    ),
    insert: writing(
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
    update: writing(
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
    unfinished: reading(
      "A run",
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: Rows.UnfinishedRow,
        execute: () => run(`SELECT id, owner_pid, owner_token, owner_host FROM runs WHERE status IN ${unfinished}`)
      })
    ),
    /** Marks one run interrupted unless it ended or changed owner since it was read; the ids changed. */
    interrupt: writing(
      SqlSchema.findAll({
        Request: Schema.Struct({
          id: Schema.String,
          owner_pid: Schema.Int,
          owner_token: Schema.String,
          now: Schema.Number
        }),
        Result: Id,
        execute: (r) =>
          run(
            `UPDATE runs SET status = 'interrupted', ended_at = ?,
            error = coalesce(error, 'The process running it (pid ' || owner_pid || ') ended before the run finished.')
          WHERE id = ? AND status IN ${unfinished} AND owner_pid = ? AND owner_token = ? RETURNING id`,
            [r.now, r.id, r.owner_pid, r.owner_token]
          )
      })
    )
  }

  return { file, sessions, messages, events, toolCalls, pluginState, blobs, locks, runs }
}
