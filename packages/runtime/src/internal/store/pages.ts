// Pages of a session's messages and events (ST-3): keyset cursors on message position and
// event seq, so rows appended meanwhile never shift a page.

import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { PageRequest, SessionStoreService } from "../../SessionStore.js"
import { storeError } from "../sessionDatabase.js"
import * as Rows from "../sessionRows.js"
import { EventText, readEventRows } from "./events.js"
import { onFirstCall, type Sql } from "./sql.js"

const MAX_PAGE = 1000

/**
 * The payload bytes a page of events or messages holds at most (one row larger than this still
 * makes a page alone): both can carry images of megabytes, and a page of fifty of them must not
 * fill memory.
 */
export const PAGE_BYTES = 2 * 1024 * 1024

const EventSize = Schema.Struct({ seq: Schema.Int, bytes: Schema.NullOr(Schema.Number) })
const MessageSize = Schema.Struct({ position: Schema.Int, bytes: Schema.NullOr(Schema.Number) })
const Between = Schema.Struct({ session_id: Schema.String, first: Schema.Number, last: Schema.Number })

const PageQuery = Schema.Struct({ session_id: Schema.String, after: Schema.Number, limit: Schema.Int })

const queries = ({ reading, run }: Sql) =>
  onFirstCall({
    messageSizesAfter: () =>
      reading(
        "A message",
        SqlSchema.findAll({
          Request: PageQuery,
          Result: MessageSize,
          execute: (r) =>
            run(
              `SELECT position, octet_length(message) AS bytes FROM messages
            WHERE session_id = ? AND position > ? ORDER BY position LIMIT ?`,
              [r.session_id, r.after, r.limit]
            )
        })
      ),
    messageSizesBefore: () =>
      reading(
        "A message",
        SqlSchema.findAll({
          Request: PageQuery,
          Result: MessageSize,
          execute: (r) =>
            run(
              `SELECT position, octet_length(message) AS bytes FROM messages
            WHERE session_id = ? AND position < ? ORDER BY position DESC LIMIT ?`,
              [r.session_id, r.after, r.limit]
            )
        })
      ),
    messagesBetween: () =>
      reading(
        "A message",
        SqlSchema.findAll({
          Request: Between,
          Result: Rows.MessageRow,
          execute: (r) =>
            run(
              `SELECT ${Rows.messageColumns} FROM messages WHERE session_id = ? AND position BETWEEN ? AND ?
            ORDER BY position`,
              [r.session_id, r.first, r.last]
            )
        })
      ),
    eventSizesAfter: () =>
      reading(
        "An event",
        SqlSchema.findAll({
          Request: PageQuery,
          Result: EventSize,
          execute: (r) =>
            run(
              `SELECT seq, octet_length(payload) AS bytes FROM events
            WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
              [r.session_id, r.after, r.limit]
            )
        })
      ),
    eventSizesBefore: () =>
      reading(
        "An event",
        SqlSchema.findAll({
          Request: PageQuery,
          Result: EventSize,
          execute: (r) =>
            run(
              `SELECT seq, octet_length(payload) AS bytes FROM events
            WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
              [r.session_id, r.after, r.limit]
            )
        })
      ),
    eventsBetween: () =>
      reading(
        "An event",
        SqlSchema.findAll({
          Request: Between,
          Result: EventText,
          execute: (r) =>
            run("SELECT seq, payload FROM events WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq", [
              r.session_id,
              r.first,
              r.last
            ])
        })
      )
  })

/**
 * The rows of a page, from their keys and sizes in reading order (one more than `limit` tells
 * whether a next page exists): as many as fit in `PAGE_BYTES`, the first row always. The range is
 * the lowest and highest key to read; `next` the cursor of the page after, if any.
 */
const withinBytes = (
  sizes: ReadonlyArray<{ readonly key: number; readonly bytes: number | null }>,
  limit: number
): { readonly first: number; readonly last: number; readonly next?: string } | undefined => {
  let taken = 0
  let bytes = 0
  for (const row of sizes.slice(0, limit)) {
    bytes += row.bytes ?? 0
    if (taken > 0 && bytes > PAGE_BYTES) break
    taken += 1
  }
  const start = sizes[0]
  const end = sizes[taken - 1]
  if (start === undefined || end === undefined) return undefined
  const [first, last] = start.key <= end.key ? [start.key, end.key] : [end.key, start.key]
  return { first, last, ...(sizes.length > taken ? { next: String(end.key) } : {}) }
}

export const makePages = (sql: Sql) => {
  const { db } = sql
  const q = queries(sql)

  const bounds = (page: PageRequest) => {
    const limit = Number.isFinite(page.limit) ? Math.min(MAX_PAGE, Math.max(1, Math.floor(page.limit))) : MAX_PAGE
    const forward = page.direction !== "backward"
    if (page.cursor === undefined) {
      return Effect.succeed({ limit, forward, after: forward ? 0 : Number.MAX_SAFE_INTEGER })
    }
    if (!/^[0-9]{1,15}$/.test(page.cursor)) {
      return Effect.fail(
        storeError(
          db.filename,
          "not_found",
          `The page cursor "${page.cursor.slice(0, 40)}" was not returned by this store.`
        )
      )
    }
    return Effect.succeed({ limit, forward, after: Number(page.cursor) })
  }

  /** Sizes first, then the messages of as many rows as fit in `PAGE_BYTES`. */
  const messagesPage: NonNullable<SessionStoreService["messagesPage"]> = (sessionId, page) =>
    Effect.gen(function* () {
      const { after, forward, limit } = yield* bounds(page)
      const sizes = yield* db.use(
        (forward ? q.messageSizesAfter : q.messageSizesBefore)({ session_id: sessionId, after, limit: limit + 1 })
      )
      const range = withinBytes(
        sizes.map((row) => ({ key: row.position, bytes: row.bytes })),
        limit
      )
      if (range === undefined) return { items: [] }
      const rows = yield* db.use(q.messagesBetween({ session_id: sessionId, first: range.first, last: range.last }))
      return { items: rows.map(Rows.toStoredMessage), ...(range.next === undefined ? {} : { next: range.next }) }
    })

  /** Sizes first, then the payloads of as many rows as fit in `PAGE_BYTES`. */
  const eventsPage: NonNullable<SessionStoreService["eventsPage"]> = (sessionId, page) =>
    Effect.gen(function* () {
      const { after, forward, limit } = yield* bounds(page)
      const sizes = yield* db.use(
        (forward ? q.eventSizesAfter : q.eventSizesBefore)({ session_id: sessionId, after, limit: limit + 1 })
      )
      const range = withinBytes(
        sizes.map((row) => ({ key: row.seq, bytes: row.bytes })),
        limit
      )
      if (range === undefined) return { items: [] }
      const rows = yield* db.use(q.eventsBetween({ session_id: sessionId, first: range.first, last: range.last }))
      const { items, unreadable } = readEventRows(rows)
      return {
        items,
        ...(range.next === undefined ? {} : { next: range.next }),
        ...(unreadable.length === 0 ? {} : { unreadable })
      }
    })

  return { messagesPage, eventsPage }
}
