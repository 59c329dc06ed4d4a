// Keyset pages of messages and events (ST-3) while more are appended.

import { StoreError } from "@alisio/domain/Errors"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as SessionStore from "../src/SessionStore.js"
import { event, user, withMemoryStore } from "./helpers/sessionStore.js"

describe("SessionStore", () => {
  it.effect("ST-3 messagesPage walks forward without gaps or repeats while messages are appended", () =>
    withMemoryStore((store) =>
      Effect.gen(function* () {
        const session = yield* store.createSession({ cwd: "/w" })
        yield* store.appendMessages(
          session.id,
          Array.from({ length: 25 }, (_, i) => user(`m${i + 1}`))
        )

        const last = yield* store.messagesPage!(session.id, { limit: 10, direction: "backward" })
        assert.deepStrictEqual(
          last.items.map((m) => m.position),
          [16, 17, 18, 19, 20, 21, 22, 23, 24, 25]
        )
        const before = yield* store.messagesPage!(session.id, { limit: 10, direction: "backward", cursor: last.next! })
        assert.deepStrictEqual(
          before.items.map((m) => m.position),
          [6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
        )
        const oldest = yield* store.messagesPage!(session.id, {
          limit: 10,
          direction: "backward",
          cursor: before.next!
        })
        assert.deepStrictEqual(
          oldest.items.map((m) => m.position),
          [1, 2, 3, 4, 5]
        )
        assert.isUndefined(oldest.next)

        const seen: Array<number> = []
        let page = yield* store.messagesPage!(session.id, { limit: 10 })
        for (let round = 0; ; round++) {
          seen.push(...page.items.map((m) => m.position))
          // Appends land between page loads.
          if (round < 2) yield* store.appendMessages(session.id, [user("late a"), user("late b")])
          if (page.next === undefined) break
          page = yield* store.messagesPage!(session.id, { limit: 10, cursor: page.next })
        }
        assert.deepStrictEqual(
          seen,
          Array.from({ length: 29 }, (_, i) => i + 1)
        )
      })
    )
  )

  it.effect("ST-3 eventsPage scans every event once, in order, while events are appended", () =>
    withMemoryStore((store) =>
      Effect.gen(function* () {
        const session = yield* store.createSession({ cwd: "/w" })
        const other = yield* store.createSession({ cwd: "/w" })
        for (let i = 1; i <= 12; i++) {
          yield* store.appendEvent(event(session.id, i))
          yield* store.appendEvent(event(other.id, i))
        }
        const scanned: Array<number> = []
        let cursor: string | undefined
        for (let round = 0; ; round++) {
          const page: SessionStore.Page<SessionStore.StoredEvent> = yield* store.eventsPage!(session.id, {
            limit: 5,
            ...(cursor === undefined ? {} : { cursor })
          })
          scanned.push(...page.items.map((e) => e.seq))
          assert.isTrue(page.items.every((e) => e.sessionId === session.id && e.eventId !== undefined))
          if (round === 0) yield* store.appendEvent(event(session.id, 13))
          if (page.next === undefined) break
          cursor = page.next
        }
        assert.deepStrictEqual(
          scanned,
          Array.from({ length: 13 }, (_, i) => i + 1)
        )

        const newest = yield* store.eventsPage!(session.id, { limit: 2, direction: "backward" })
        assert.deepStrictEqual(
          newest.items.map((e) => e.seq),
          [12, 13]
        )

        const bad = yield* Effect.flip(store.eventsPage!(session.id, { limit: 5, cursor: "../x" }))
        assert.instanceOf(bad, StoreError)
        assert.include(bad.message, "cursor")
      })
    )
  )
})
