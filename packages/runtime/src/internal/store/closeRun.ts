// The stored events of a run whose process died (ST-4, EV-3): they stop wherever the process did,
// so a replay (`sessions events`, `sessions export`, a followed request id) would show a run that
// never ends and tool calls that never finish. Reconciliation closes them as the runner would have:
// a `tool_call_completed` (cancelled) for every call left open, an `approval_resolved` (withdrawn)
// for every approval left open, a `compaction_failed` (cancelled) for a compaction left open, then
// the one terminal event, `run_failed` with `code: "interrupted"`, last.

import { RunId, SessionId, ToolCallId } from "@alisio/domain/Ids"
import { encodeRunEvent, isTerminalType, type KnownRunEvent, RUN_EVENT_SCHEMA_VERSION } from "@alisio/domain/RunEvent"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { EventRow } from "./events.js"
import { onFirstCall, type Sql } from "./sql.js"

/** The result a call left running by a dead process ends with, in the journal and in its event. */
export const DEAD_CALL_RESULT = "The process running this call ended before it finished."

const Opened = Schema.Struct({
  type: Schema.String,
  session_id: Schema.String,
  correlation_id: Schema.NullOr(Schema.String),
  run_seq: Schema.NullOr(Schema.Int),
  created_at: Schema.NullOr(Schema.Number),
  tool_call_id: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  approval_id: Schema.NullOr(Schema.String)
})

/** The event types that open or close something, and the terminal ones: what closing a run reads. */
const relevant = `('run_started', 'tool_call_started', 'tool_call_completed', 'approval_requested',
  'approval_resolved', 'compaction_started', 'compaction_completed', 'compaction_failed',
  'run_completed', 'run_failed', 'run_cancelled', 'turns_exceeded')`

const queries = ({ always, reading, run, writing }: Sql) =>
  onFirstCall({
    /** The run's opening and closing events, without their payloads (a call's arguments may be megabytes). */
    opened: () =>
      reading(
        "An event",
        SqlSchema.findAll({
          Request: Schema.String,
          Result: Opened,
          execute: (runId) =>
            run(
              `SELECT type, session_id, correlation_id, created_at,
                json_extract(payload, '$.seq') AS run_seq,
                json_extract(payload, '$.data.toolCallId') AS tool_call_id,
                json_extract(payload, '$.data.name') AS name,
                json_extract(payload, '$.data.approvalId') AS approval_id
              FROM events WHERE run_id = ? AND type IN ${relevant} ORDER BY seq`,
              [runId]
            )
        })
      ),
    /** The run's last event number and the time of its last stored event (its last sign of life). */
    last: () =>
      always(
        reading(
          "An event",
          SqlSchema.single({
            Request: Schema.String,
            Result: Schema.Struct({ run_seq: Schema.NullOr(Schema.Int), at: Schema.NullOr(Schema.Number) }),
            execute: (runId) =>
              run(
                `SELECT max(json_extract(payload, '$.seq')) AS run_seq, max(created_at) AS at
              FROM events WHERE run_id = ?`,
                [runId]
              )
          })
        )
      ),
    insert: () =>
      writing(
        SqlSchema.void({
          Request: EventRow,
          execute: (r) =>
            run(
              `INSERT INTO events (session_id, run_id, type, payload, created_at, correlation_id)
              VALUES (?, ?, ?, ?, ?, ?)`,
              [r.session_id, r.run_id, r.type, r.payload, r.now, r.correlation_id]
            )
        })
      )
  })

type Closing = {
  readonly [K in KnownRunEvent["type"]]: {
    readonly type: K
    readonly data: Extract<KnownRunEvent, { type: K }>["data"]
  }
}[KnownRunEvent["type"]]

/**
 * Stores the events that end a run interrupted by reconciliation, inside its transaction. A run
 * that stored no event (it died before `run_started`) or already stored its terminal event (it
 * died before its row ended) gets none.
 */
export const makeCloseRun = (sql: Sql) => {
  const q = queries(sql)
  return (runId: string, error: string, now: number) =>
    Effect.gen(function* () {
      const events = yield* q.opened(runId)
      const first = events[0]
      if (first === undefined || events.some((event) => isTerminalType(event.type))) return
      const openCalls = new Map<string, { readonly name: string; readonly at: number }>()
      const openApprovals = new Set<string>()
      let openCompaction = false
      for (const event of events) {
        if (event.type === "tool_call_started" && event.tool_call_id !== null) {
          openCalls.set(event.tool_call_id, { name: event.name ?? "", at: event.created_at ?? now })
        } else if (event.type === "tool_call_completed" && event.tool_call_id !== null) {
          openCalls.delete(event.tool_call_id)
        } else if (event.type === "approval_requested" && event.approval_id !== null) {
          openApprovals.add(event.approval_id)
        } else if (event.type === "approval_resolved" && event.approval_id !== null) {
          openApprovals.delete(event.approval_id)
        } else if (event.type === "compaction_started") {
          openCompaction = true
        } else if (event.type === "compaction_completed" || event.type === "compaction_failed") {
          openCompaction = false
        }
      }
      const last = yield* q.last(runId)
      const lastAlive = last.at ?? now
      let seq = last.run_seq ?? events.length
      const closing: Array<Closing> = []
      for (const approvalId of openApprovals) {
        closing.push({
          type: "approval_resolved",
          data: { approvalId, approved: false, by: "policy", cancelled: true }
        })
      }
      for (const [toolCallId, call] of openCalls) {
        closing.push({
          type: "tool_call_completed",
          data: {
            toolCallId: ToolCallId.make(toolCallId),
            name: call.name,
            status: "cancelled",
            result: DEAD_CALL_RESULT,
            durationMs: Math.max(0, Math.round(lastAlive - call.at))
          }
        })
      }
      if (openCompaction) {
        closing.push({ type: "compaction_failed", data: { error, continued: false, cancelled: true } })
      }
      closing.push({ type: "run_failed", data: { code: "interrupted", error } })
      for (const { type, data } of closing) {
        seq += 1
        const event = {
          schemaVersion: RUN_EVENT_SCHEMA_VERSION,
          type,
          runId: RunId.make(runId),
          seq,
          sessionId: SessionId.make(first.session_id),
          time: new Date(now).toISOString(),
          ...(first.correlation_id === null ? {} : { correlationId: first.correlation_id }),
          data
        } as KnownRunEvent
        yield* q.insert({
          session_id: first.session_id,
          run_id: runId,
          type,
          payload: JSON.stringify(encodeRunEvent(event)),
          now,
          correlation_id: first.correlation_id
        })
      }
    })
}
