// The event log (EV-2, EV-3): each persisted event is one committed row whose global `seq` is
// the event's `eventId`; rows decode back into the events as they were published.

import type { StoreError } from "@alisio/domain/Errors"
import { EventId, type RunId, type SessionId } from "@alisio/domain/Ids"
import { decodeRunEvent, encodeRunEvent, type KnownRunEvent, RUN_EVENT_SCHEMA_VERSION } from "@alisio/domain/RunEvent"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { EventsOptions, StoredEvent, UnreadableRow } from "../../SessionStore.js"
import { firstProblem, onFirstCall, type Sql } from "./sql.js"

/** A new row of `events`, as both the emitter and the closing of interrupted runs insert it. */
export const EventRow = Schema.Struct({
  session_id: Schema.String,
  run_id: Schema.String,
  type: Schema.String,
  payload: Schema.String,
  now: Schema.Number,
  correlation_id: Schema.NullOr(Schema.String)
})

/** An event row as a page reads it: its payload still text, parsed row by row. */
export const EventText = Schema.Struct({ seq: Schema.Int, payload: Schema.Unknown })

const queries = ({ always, reading, run, writing }: Sql) =>
  onFirstCall({
    /** One statement, so one transaction; returns the global seq it was given. */
    insert: () =>
      always(
        writing(
          SqlSchema.single({
            Request: EventRow,
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
    all: () =>
      reading(
        "An event",
        SqlSchema.findAll({
          Request: Schema.Struct({ session_id: Schema.String, run_id: Schema.NullOr(Schema.String) }),
          Result: EventText,
          execute: (r) =>
            r.run_id === null
              ? run("SELECT seq, payload FROM events WHERE session_id = ? ORDER BY seq", [r.session_id])
              : run("SELECT seq, payload FROM events WHERE session_id = ? AND run_id = ? ORDER BY seq", [
                  r.session_id,
                  r.run_id
                ])
        })
      )
  })

const unreadableProblem = (payload: unknown): string | { readonly json: unknown } => {
  if (typeof payload !== "string") return "its payload is not text"
  try {
    return { json: JSON.parse(payload) }
  } catch (error) {
    return `its payload is not JSON (${error instanceof Error ? error.message : String(error)})`
  }
}

/**
 * Decodes a page's event rows one by one: a row that cannot be read (not JSON, not in the shape
 * Alisio wrote, another schemaVersion) is left out and named in `unreadable`, so the rest of the
 * session still reads; a type this version does not know is skipped (EV-2).
 */
export const readEventRows = (
  rows: ReadonlyArray<typeof EventText.Type>
): { readonly items: ReadonlyArray<StoredEvent>; readonly unreadable: ReadonlyArray<UnreadableRow> } => {
  const items: Array<StoredEvent> = []
  const unreadable: Array<UnreadableRow> = []
  for (const row of rows) {
    const id = String(row.seq)
    const parsed = unreadableProblem(row.payload)
    if (typeof parsed === "string") {
      unreadable.push({ id, problem: parsed })
      continue
    }
    const json = typeof parsed.json === "object" && parsed.json !== null ? parsed.json : {}
    const version = (json as { readonly schemaVersion?: unknown }).schemaVersion
    if (typeof version === "number" && version !== RUN_EVENT_SCHEMA_VERSION) {
      unreadable.push({ id, problem: `it has schemaVersion ${version}; this Alisio reads ${RUN_EVENT_SCHEMA_VERSION}` })
      continue
    }
    const decoded = decodeRunEvent({ ...json, eventId: id })
    if (Either.isLeft(decoded)) unreadable.push({ id, problem: firstProblem(decoded.left) })
    else if (decoded.right._tag === "Known") items.push(decoded.right.event as StoredEvent)
  }
  return { items, unreadable }
}

export const makeEvents = (sql: Sql) => {
  const { db } = sql
  const q = queries(sql)

  const appendEvent = (event: KnownRunEvent): Effect.Effect<EventId, StoreError> =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      // The eventId is the row's seq, assigned by this insert; one the event already carried is not kept.
      const { eventId: _, ...encoded } = encodeRunEvent(event) as { readonly eventId?: unknown }
      const row = yield* db.use(
        q.insert({
          session_id: event.sessionId,
          run_id: event.runId,
          type: event.type,
          payload: JSON.stringify(encoded),
          now,
          correlation_id: event.correlationId ?? null
        })
      )
      return EventId.make(String(row.seq))
    })

  /** A row that cannot be read is left out and handed to `onUnreadable` (by default, a logged warning). */
  const events = (sessionId: SessionId, runId?: RunId, options?: EventsOptions) =>
    Effect.gen(function* () {
      const rows = yield* db.use(q.all({ session_id: sessionId, run_id: runId ?? null }))
      const { items, unreadable } = readEventRows(rows)
      const report =
        options?.onUnreadable ??
        ((row: UnreadableRow) =>
          Effect.logWarning(`Event ${row.id} in ${sql.file} could not be read, so it is left out: ${row.problem}`))
      yield* Effect.forEach(unreadable, report, { discard: true })
      return items
    })

  return { appendEvent, events }
}
