// Pages of a session's messages and events (ST-3): keyset cursors on message position and
// event seq, so rows appended meanwhile never shift a page.

import type { StoreError } from "@alisio/domain/Errors"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Page, PageRequest, SessionStoreService } from "../../SessionStore.js"
import { storeError } from "../sessionDatabase.js"
import * as Rows from "../sessionRows.js"
import { toStoredEvents } from "./events.js"
import { onFirstCall, type Sql } from "./sql.js"

const MAX_PAGE = 1000

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
    eventsAfter: () =>
      reading(
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
    eventsBefore: () =>
      reading(
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
  const decodeEvents = toStoredEvents(sql)

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

  const eventsPage: NonNullable<SessionStoreService["eventsPage"]> = (sessionId, page) =>
    Effect.gen(function* () {
      const { after, forward, limit } = yield* bounds(page)
      const query = forward ? q.eventsAfter : q.eventsBefore
      const rows = yield* db.use(query({ session_id: sessionId, after, limit: limit + 1 }))
      return yield* paged(rows, limit, forward, (row) => row.seq, decodeEvents)
    })

  return { messagesPage, eventsPage }
}
