// Pages of a session's messages and events (ST-3): keyset cursors on message position and
// event seq, so rows appended meanwhile never shift a page.

import type { StoreError } from "@alisio/domain/Errors"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Page, PageRequest, SessionStoreService } from "../../SessionStore.js"
import { storeError } from "../sessionDatabase.js"
import * as Rows from "../sessionRows.js"
import { EventText, readEventRows } from "./events.js"
import { onFirstCall, type Sql } from "./sql.js"

const MAX_PAGE = 1000

/**
 * The payload bytes a page of events holds at most (one event larger than this still makes a page
 * alone): events can carry images of megabytes, and a page of fifty of them must not fill memory.
 */
export const EVENT_PAGE_BYTES = 2 * 1024 * 1024

const EventSize = Schema.Struct({ seq: Schema.Int, bytes: Schema.NullOr(Schema.Number) })

const PageQuery = Schema.Struct({ session_id: Schema.String, after: Schema.Number, limit: Schema.Int })

const queries = ({ reading, run }: Sql) =>
  onFirstCall({
    messagesAfter: () =>
      reading(
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
    messagesBefore: () =>
      reading(
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
          Request: Schema.Struct({ session_id: Schema.String, first: Schema.Number, last: Schema.Number }),
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

/** One more row than asked tells whether a next page exists; items come oldest first either way. */
const paged = <Row, A>(
  rows: ReadonlyArray<Row>,
  limit: number,
  forward: boolean,
  key: (row: Row) => number,
  items: (rows: ReadonlyArray<Row>) => Effect.Effect<ReadonlyArray<A>, StoreError>
): Effect.Effect<Page<A>, StoreError> => {
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  const next = rows.length > limit && last !== undefined ? String(key(last)) : undefined
  return Effect.map(items(forward ? page : [...page].reverse()), (items) => ({
    items,
    ...(next === undefined ? {} : { next })
  }))
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

  const messagesPage: NonNullable<SessionStoreService["messagesPage"]> = (sessionId, page) =>
    Effect.gen(function* () {
      const { after, forward, limit } = yield* bounds(page)
      const query = forward ? q.messagesAfter : q.messagesBefore
      const rows = yield* db.use(query({ session_id: sessionId, after, limit: limit + 1 }))
      return yield* paged(
        rows,
        limit,
        forward,
        (row) => row.position,
        (rows) => Effect.succeed(rows.map(Rows.toStoredMessage))
      )
    })

  /** Sizes first, then the payloads of as many rows as fit in `EVENT_PAGE_BYTES`. */
  const eventsPage: NonNullable<SessionStoreService["eventsPage"]> = (sessionId, page) =>
    Effect.gen(function* () {
      const { after, forward, limit } = yield* bounds(page)
      const sizes = yield* db.use(
        (forward ? q.eventSizesAfter : q.eventSizesBefore)({ session_id: sessionId, after, limit: limit + 1 })
      )
      let taken = 0
      let bytes = 0
      for (const row of sizes.slice(0, limit)) {
        bytes += row.bytes ?? 0
        if (taken > 0 && bytes > EVENT_PAGE_BYTES) break
        taken += 1
      }
      const chosen = sizes.slice(0, taken)
      const last = chosen[chosen.length - 1]
      if (last === undefined) return { items: [] }
      const next = sizes.length > taken ? String(last.seq) : undefined
      const [first, final] = forward ? [chosen[0]!.seq, last.seq] : [last.seq, chosen[0]!.seq]
      const rows = yield* db.use(q.eventsBetween({ session_id: sessionId, first, last: final }))
      const { items, unreadable } = readEventRows(rows)
      return {
        items,
        ...(next === undefined ? {} : { next }),
        ...(unreadable.length === 0 ? {} : { unreadable })
      }
    })

  return { messagesPage, eventsPage }
}
