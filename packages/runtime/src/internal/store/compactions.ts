// Compactions (CTX-1): a summary standing for a range of a session's stored messages. The
// messages themselves stay; the latest row of a session says which of them requests replace with
// its summary. A row is written in one statement once its summary is whole.

import { randomUUID } from "node:crypto"
import { RunId, SessionId } from "@alisio/domain/Ids"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { CompactionRecord, NewCompaction, SessionStoreService } from "../../SessionStore.js"
import { onFirstCall, type Sql } from "./sql.js"

const CompactionRow = Schema.Struct({
  id: Schema.String,
  session_id: SessionId,
  run_id: Schema.NullOr(RunId),
  first_position: Schema.Int,
  last_position: Schema.Int,
  summary: Schema.String,
  tokens_before: Schema.Int,
  tokens_after: Schema.Int,
  messages_compacted: Schema.Int,
  focus: Schema.NullOr(Schema.String),
  created_at: Schema.Number
})
const columns =
  "id, session_id, run_id, first_position, last_position, summary, tokens_before, tokens_after, messages_compacted, focus, created_at"

const toRecord = (row: typeof CompactionRow.Type): CompactionRecord => ({
  id: row.id,
  sessionId: row.session_id,
  ...(row.run_id === null ? {} : { runId: row.run_id }),
  firstPosition: row.first_position,
  lastPosition: row.last_position,
  summary: row.summary,
  tokensBefore: row.tokens_before,
  tokensAfter: row.tokens_after,
  messagesCompacted: row.messages_compacted,
  ...(row.focus === null ? {} : { focus: row.focus }),
  createdAt: row.created_at
})

const queries = ({ reading, run, writing }: Sql) =>
  onFirstCall({
    insert: () =>
      writing(
        SqlSchema.void({
          Request: CompactionRow,
          execute: (r) =>
            run(`INSERT INTO compactions (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
              r.id,
              r.session_id,
              r.run_id,
              r.first_position,
              r.last_position,
              r.summary,
              r.tokens_before,
              r.tokens_after,
              r.messages_compacted,
              r.focus,
              r.created_at
            ])
        })
      ),
    latest: () =>
      reading(
        "A compaction",
        SqlSchema.findOne({
          Request: Schema.String,
          Result: CompactionRow,
          execute: (id) =>
            run(
              `SELECT ${columns} FROM compactions WHERE session_id = ?
            ORDER BY last_position DESC, created_at DESC, rowid DESC LIMIT 1`,
              [id]
            )
        })
      ),
    list: () =>
      reading(
        "A compaction",
        SqlSchema.findAll({
          Request: Schema.String,
          Result: CompactionRow,
          execute: (id) =>
            run(`SELECT ${columns} FROM compactions WHERE session_id = ? ORDER BY created_at, rowid`, [id])
        })
      )
  })

export const makeCompactions = (sql: Sql): NonNullable<SessionStoreService["compactions"]> => {
  const { db } = sql
  const q = queries(sql)
  return {
    add: (input: NewCompaction) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const row: typeof CompactionRow.Type = {
          id: input.id ?? randomUUID(),
          session_id: input.sessionId,
          run_id: input.runId ?? null,
          first_position: input.firstPosition,
          last_position: input.lastPosition,
          summary: input.summary,
          tokens_before: input.tokensBefore,
          tokens_after: input.tokensAfter,
          messages_compacted: input.messagesCompacted,
          focus: input.focus ?? null,
          created_at: now
        }
        yield* db.use(q.insert(row))
        return toRecord(row)
      }),
    latest: (sessionId) => Effect.map(db.use(q.latest(sessionId)), Option.map(toRecord)),
    list: (sessionId) => Effect.map(db.use(q.list(sessionId)), (rows) => rows.map(toRecord))
  }
}
