// Replays and exports read stored events a page at a time (ST-3): a session with more events than
// memory, or one string, holds still goes out whole, in the order the events were stored.

import type { SessionId } from "@alisio/domain/Ids"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { forEachStoredEvent } from "../src/EventPages.js"

const event = (sessionId: SessionId, seq: number): KnownRunEvent => ({
  schemaVersion: 1,
  type: "run_cancelled",
  runId: `run-${sessionId}` as never,
  seq,
  sessionId,
  time: "2026-12-03T12:00:00.000Z",
  data: { reason: `${sessionId} ${seq}` }
})

describe("forEachStoredEvent", () => {
  it.effect("ST-3 the events of a session and its children come a page at a time, in the order they were stored", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore.SessionStore
      const root = yield* store.createSession({ cwd: "/w" })
      const child = yield* store.createSession({ cwd: "/w", parentId: root.id })
      const stored: Array<string> = []
      for (let i = 1; i <= 9; i++) {
        stored.push(yield* store.appendEvent(event(i % 3 === 0 ? child.id : root.id, i)))
      }
      // Read whole, a large session fails (a string or the heap too small): only pages may be used.
      const paged: SessionStore.SessionStoreService = { ...store, events: () => Effect.die("read whole") }
      const seen: Array<string> = []
      let pages = 0
      const counting: SessionStore.SessionStoreService = {
        ...paged,
        eventsPage: (id, page) => {
          pages += 1
          return store.eventsPage!(id, page)
        }
      }
      yield* forEachStoredEvent(
        counting,
        [root.id, child.id],
        (e) => Effect.sync(() => seen.push(e.eventId)),
        () => Effect.void,
        2
      )
      assert.deepStrictEqual(seen, stored)
      assert.isAtLeast(pages, 5)

      // A store without pages is read whole, in the same order.
      const whole: Array<string> = []
      const { eventsPage: _, ...unpaged } = store
      yield* forEachStoredEvent(
        unpaged,
        [child.id, root.id],
        (e) => Effect.sync(() => whole.push(e.eventId)),
        () => Effect.void
      )
      assert.deepStrictEqual(whole, stored)
    }).pipe(Effect.provide(SessionStore.layerMemory))
  )
})
