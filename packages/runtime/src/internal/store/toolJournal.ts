// The tool-call journal (TL-4): one row per call, `running` until it ends.

import { ToolCallStatus } from "@alisio/domain/RunEvent"
import { ToolEffect } from "@alisio/domain/Tool"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { SessionStoreService } from "../../SessionStore.js"
import * as Rows from "../sessionRows.js"
import { onFirstCall, type Sql } from "./sql.js"

const queries = ({ reading, run, writing }: Sql) =>
  onFirstCall({
    insert: () =>
      writing(
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
    end: () =>
      writing(
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
    all: () =>
      reading(
        "A tool call",
        SqlSchema.findAll({
          Request: Schema.String,
          Result: Rows.ToolCallRow,
          execute: (id) => run(`SELECT ${Rows.toolCallColumns} FROM tool_calls WHERE session_id = ? ORDER BY seq`, [id])
        })
      )
  })

export const makeToolJournal = (sql: Sql) => {
  const { db } = sql
  const q = queries(sql)

  const toolCallStarted: SessionStoreService["toolCallStarted"] = (call) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      yield* db.use(
        q.insert({
          id: call.id,
          session_id: call.sessionId,
          run_id: call.runId ?? null,
          name: call.name,
          effect: call.effect ?? null,
          arguments: call.arguments,
          started_at: call.startedAt ?? now
        })
      )
    })

  const toolCallEnded: SessionStoreService["toolCallEnded"] = (id, outcome) =>
    db.use(q.end({ id, status: outcome.status, result: outcome.result, ended_at: outcome.endedAt }))

  const toolCalls: SessionStoreService["toolCalls"] = (sessionId) =>
    Effect.map(db.use(q.all(sessionId)), (rows) => rows.map(Rows.toToolCallRecord))

  return { toolCallStarted, toolCallEnded, toolCalls }
}
