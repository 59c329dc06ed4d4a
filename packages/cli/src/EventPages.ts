// Stored events read a page at a time (ST-3), so a replay or an export of a session with more
// events than memory (or than one string) holds goes out as it is read.

import type { StoreError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { SessionStoreService, StoredEvent, UnreadableRow } from "@alisio/runtime/SessionStore"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Effect from "effect/Effect"

/** Events a page holds: few enough that a page of large tool calls (megabytes each) stays small. */
const PAGE = 50

interface Cursor {
  readonly sessionId: SessionId
  items: ReadonlyArray<StoredEvent>
  index: number
  next: string | undefined
  done: boolean
}

/**
 * Calls `each` with every stored event of the sessions, in the order they were stored (their
 * global eventId), holding one page per session at a time, and `unreadable` with each row a page
 * could not read (it is left out). A store without pages is read whole.
 */
export const forEachStoredEvent = <E, R>(
  store: SessionStoreService,
  sessionIds: ReadonlyArray<SessionId>,
  each: (event: StoredEvent) => Effect.Effect<void, E, R>,
  unreadable: (row: UnreadableRow) => Effect.Effect<void, E, R>,
  pageSize: number = PAGE
): Effect.Effect<void, E | StoreError, R> =>
  Effect.gen(function* () {
    const eventsPage = store.eventsPage
    if (eventsPage === undefined) {
      const all = (yield* Effect.forEach(sessionIds, (id) => store.events(id))).flat()
      all.sort((a, b) => Number(a.eventId) - Number(b.eventId))
      for (const event of all) yield* each(event)
      return
    }
    const cursors: Array<Cursor> = sessionIds.map((sessionId) => ({
      sessionId,
      items: [],
      index: 0,
      next: undefined,
      done: false
    }))
    const fill = (cursor: Cursor) =>
      Effect.gen(function* () {
        while (cursor.index >= cursor.items.length && !cursor.done) {
          const page = yield* eventsPage(cursor.sessionId, {
            limit: pageSize,
            ...(cursor.next === undefined ? {} : { cursor: cursor.next })
          })
          cursor.items = page.items
          cursor.index = 0
          cursor.next = page.next
          cursor.done = page.next === undefined
          for (const row of page.unreadable ?? []) yield* unreadable(row)
        }
      })
    for (;;) {
      let first: Cursor | undefined
      for (const cursor of cursors) {
        yield* fill(cursor)
        const event = cursor.items[cursor.index]
        if (event === undefined) continue
        const best = first?.items[first.index]
        if (best === undefined || Number(event.eventId) < Number(best.eventId)) first = cursor
      }
      if (first === undefined) return
      const event = first.items[first.index]!
      first.index += 1
      yield* each(event)
    }
  })

/** Says on stderr, in one line, that a stored event could not be read and is left out. */
export const reportUnreadable = (row: UnreadableRow): Effect.Effect<void> =>
  Effect.sync(() => {
    const problem = terminalSafe(row.problem).replace(/\s+/g, " ").slice(0, 300)
    process.stderr.write(`alisio: event ${row.id} could not be read, so it is left out: ${problem}\n`)
  })
