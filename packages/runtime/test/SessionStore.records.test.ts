// The store's records: sessions and their messages, compactions, the event log, the tool-call
// journal and plugin state (ST-1, CTX-1, EV-2, TL-4), on the in-memory database.

import { SessionNotFoundError, StoreError } from "@alisio/domain/Errors"
import { RunId, SessionId } from "@alisio/domain/Ids"
import type { Message } from "@alisio/domain/Message"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as Database from "../src/internal/sessionDatabase.js"
import * as SessionStore from "../src/SessionStore.js"
import { callId, event, runId, user, withMemoryStore } from "./helpers/sessionStore.js"

const assistantWithCall: Message = {
  role: "assistant",
  content: [
    { _tag: "reasoning", text: "look first" },
    { _tag: "tool_call", id: callId, name: "read", arguments: '{"path":"a.ts"}' }
  ]
}
const toolResult: Message = {
  role: "tool",
  toolCallId: callId,
  toolName: "read",
  content: [
    { _tag: "text", text: "1 line" },
    { _tag: "image", mediaType: "image/png", data: "iVBORw0KGgo=" }
  ],
  isError: false
}

describe("SessionStore", () => {
  it.effect("ST-1 ST-2 root and child sessions keep parent link, status, cwd, title and times", () =>
    withMemoryStore((store) =>
      Effect.gen(function* () {
        yield* TestClock.adjust(1000)
        const root = yield* store.createSession({ cwd: "/work/a", title: "first" })
        yield* TestClock.adjust(1000)
        const child = yield* store.createSession({ cwd: "/work/a", parentId: root.id, status: "running" })
        yield* TestClock.adjust(1000)
        const other = yield* store.createSession({ cwd: "/work/a", id: SessionId.make("ses-other") })

        const readBack = yield* store.session(root.id)
        assert.deepStrictEqual(readBack, {
          id: root.id,
          title: "first",
          cwd: "/work/a",
          status: "queued",
          pinned: false,
          archived: false,
          createdAt: 1000,
          updatedAt: 1000
        })
        assert.strictEqual((yield* store.session(child.id)).parentId, root.id)
        assert.strictEqual((yield* store.session(child.id)).status, "running")
        assert.strictEqual(other.id, "ses-other")

        const roots = yield* store.sessions({ parentId: null })
        assert.deepStrictEqual(
          roots.map((s) => s.id),
          [other.id, root.id]
        )
        const children = yield* store.sessions({ parentId: root.id })
        assert.deepStrictEqual(
          children.map((s) => s.id),
          [child.id]
        )
        assert.strictEqual((yield* store.sessions({ cwd: "/elsewhere" })).length, 0)
        assert.strictEqual((yield* store.sessions({ limit: 1 })).length, 1)

        // Writing to the older root makes it the latest one; children never are.
        yield* TestClock.adjust(1000)
        yield* store.appendMessages(root.id, [user("again")])
        const latest = yield* store.latestSession("/work/a")
        assert.strictEqual(Option.getOrThrow(latest).id, root.id)
        assert.isTrue(Option.isNone(yield* store.latestSession("/nowhere")))

        yield* store.setSessionStatus(child.id, "completed")
        assert.strictEqual((yield* store.session(child.id)).status, "completed")
      })
    )
  )

  // Statements are built on their first call (store/sql.ts): the first read of the session list
  // is this one, and its decoder must still turn a row Alisio did not write into `corrupt`.
  it.effect("ST-1 a row not in the shape Alisio wrote fails as corrupt on a statement's first call", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const db = yield* Database.open(Database.MEMORY)
        const store = yield* SessionStore.makeWithDatabase(db)
        const session = yield* store.createSession({ cwd: "/work/a" })
        yield* db.use(db.run("UPDATE sessions SET pinned = 'very' WHERE id = ?", [session.id]))
        const error = yield* Effect.flip(store.sessions({ cwd: "/work/a" }))
        assert.instanceOf(error, StoreError)
        assert.strictEqual(error.reason, "corrupt")
        assert.include(error.message, "A session in the in-memory session database is not in the shape Alisio wrote")
        // The statement stays built and keeps answering once the row is right again.
        yield* db.use(db.run("UPDATE sessions SET pinned = NULL, status = 'completed' WHERE id = ?", [session.id]))
        const listed = yield* store.sessions({ cwd: "/work/a" })
        assert.deepStrictEqual(
          listed.map((s) => [s.id, s.status]),
          [[session.id, "completed"]]
        )
      })
    )
  )

  it.effect(
    "ST-1 a damaged event is left out and told as one line naming where it is damaged; the others still read",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* Database.open(Database.MEMORY)
          const store = yield* SessionStore.makeWithDatabase(db)
          const session = yield* store.createSession({ cwd: "/work/a" })
          const eventId = yield* store.appendEvent(event(session.id, 1))
          const kept = yield* store.appendEvent(event(session.id, 2))
          yield* db.use(db.run("UPDATE events SET payload = '{bad json' WHERE seq = ?", [Number(eventId)]))
          const told: Array<{ readonly id: string; readonly problem: string }> = []
          const stored = yield* store.events(session.id, undefined, {
            onUnreadable: (row) => Effect.sync(() => told.push(row))
          })
          assert.deepStrictEqual(
            stored.map((e) => e.eventId),
            [kept]
          )
          assert.lengthOf(told, 1)
          assert.strictEqual(told[0]!.id, eventId)
          assert.notInclude(told[0]!.problem, "\n")
          assert.match(told[0]!.problem, /^its payload is not JSON \(/)
        })
      )
  )

  it.effect(
    "ST-1 a damaged message stands as a note where it was: the rest of the session still lists, reads and pages, and a result keeps its call",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* Database.open(Database.MEMORY)
          const store = yield* SessionStore.makeWithDatabase(db)
          const session = yield* store.createSession({ cwd: "/work/a" })
          yield* store.appendMessages(session.id, [user("first"), assistantWithCall, toolResult, user("last")])
          const damage = (position: number, json: string) =>
            db.use(
              db.run("UPDATE messages SET message = ? WHERE session_id = ? AND position = ?", [
                json,
                session.id,
                position
              ])
            )
          const [first, , result] = yield* store.messages(session.id)
          yield* damage(first!.position, '{"role":"user"}')
          yield* damage(result!.position, JSON.stringify({ ...toolResult, content: "not a list" }))
          const messages = (yield* store.messages(session.id)).map((stored) => stored.message)
          assert.deepStrictEqual(messages.slice(1, 2), [assistantWithCall])
          assert.deepStrictEqual(messages.at(-1), user("last"))
          assert.deepStrictEqual(messages[0], {
            role: "user",
            content: [
              {
                _tag: "text",
                text: `[Message ${first!.position} of this session could not be read, so it is left out: content: is missing]`
              }
            ]
          })
          const note = messages[2]!
          assert.strictEqual(note.role, "tool")
          if (note.role === "tool") {
            assert.deepStrictEqual([note.toolCallId, note.toolName, note.isError], [callId, "read", true])
          }
          const page = yield* store.messagesPage!(session.id, { limit: 10 })
          assert.strictEqual(page.items.length, 4)
          // The listing leaves out a first prompt it cannot read.
          const [listed] = yield* store.sessionSummaries({ cwd: "/work/a" })
          assert.deepStrictEqual([listed!.id, listed!.firstPrompt], [session.id, undefined])
        })
      )
  )

  it.effect("ST-1 an unknown session fails with SessionNotFoundError; writes to it fail and store nothing", () =>
    withMemoryStore((store) =>
      Effect.gen(function* () {
        const missing = SessionId.make("missing")
        const error = yield* Effect.flip(store.session(missing))
        assert.instanceOf(error, SessionNotFoundError)
        assert.strictEqual(error.sessionId, "missing")

        const append = yield* Effect.flip(store.appendMessages(missing, [user("hello")]))
        assert.instanceOf(append, StoreError)
        assert.strictEqual(append.reason, "not_found")
        const status = yield* Effect.flip(store.setSessionStatus(missing, "running"))
        assert.strictEqual(status.reason, "not_found")
        assert.deepStrictEqual(yield* store.messages(missing), [])
      })
    )
  )

  it.effect("ST-1 appendMessages stores a message with its tool results at increasing positions", () =>
    withMemoryStore((store) =>
      Effect.gen(function* () {
        const session = yield* store.createSession({ cwd: "/w" })
        const first = yield* store.appendMessages(session.id, [user("read a.ts")])
        const second = yield* store.appendMessages(session.id, [assistantWithCall, toolResult], runId)
        assert.deepStrictEqual(
          first.map((m) => m.position),
          [1]
        )
        assert.deepStrictEqual(
          second.map((m) => m.position),
          [2, 3]
        )

        const stored = yield* store.messages(session.id)
        assert.deepStrictEqual(
          stored.map((m) => m.message),
          [user("read a.ts"), assistantWithCall, toolResult]
        )
        assert.deepStrictEqual(
          stored.map((m) => m.runId),
          [undefined, runId, runId]
        )
        assert.deepStrictEqual(yield* store.appendMessages(session.id, []), [])
      })
    )
  )

  it.effect(
    "CTX-1 compactions: the latest is the one reaching furthest; the messages stay; none for another session",
    () =>
      withMemoryStore((store) =>
        Effect.gen(function* () {
          const session = yield* store.createSession({ cwd: "/w" })
          const other = yield* store.createSession({ cwd: "/w" })
          yield* store.appendMessages(session.id, [user("a"), user("b"), user("c"), user("d")])
          const base = { sessionId: session.id, firstPosition: 1, tokensBefore: 100, tokensAfter: 20 }
          const first = yield* store.compactions!.add({
            ...base,
            lastPosition: 2,
            summary: "a, b",
            messagesCompacted: 2,
            runId: runId
          })
          yield* TestClock.adjust(5)
          const second = yield* store.compactions!.add({
            ...base,
            lastPosition: 3,
            summary: "a, b, c",
            messagesCompacted: 3
          })
          assert.deepStrictEqual(first.runId, runId)
          assert.isUndefined(second.runId)
          assert.deepStrictEqual(Option.getOrThrow(yield* store.compactions!.latest(session.id)), second)
          assert.deepStrictEqual(yield* store.compactions!.list(session.id), [first, second])
          assert.isTrue(Option.isNone(yield* store.compactions!.latest(other.id)))
          assert.strictEqual((yield* store.messages(session.id)).length, 4)
          const missing = yield* Effect.flip(
            store.compactions!.add({
              ...base,
              sessionId: SessionId.make("nope"),
              lastPosition: 1,
              summary: "x",
              messagesCompacted: 1
            })
          )
          assert.strictEqual(missing._tag, "StoreError")
        })
      )
  )

  it.effect("EV-2 appendEvent commits each event and returns a global, increasing eventId", () =>
    withMemoryStore((store) =>
      Effect.gen(function* () {
        const a = yield* store.createSession({ cwd: "/w" })
        const b = yield* store.createSession({ cwd: "/w" })
        const otherRun = RunId.make("run-2")
        const ids = [
          yield* store.appendEvent(event(a.id, 1)),
          yield* store.appendEvent(event(b.id, 1, otherRun)),
          yield* store.appendEvent(event(a.id, 2, runId, "corr-1")),
          yield* store.appendEvent(event(a.id, 1, otherRun))
        ]
        assert.deepStrictEqual(ids, ["1", "2", "3", "4"])

        const ofA = yield* store.events(a.id)
        assert.deepStrictEqual(ofA, [
          { ...event(a.id, 1), eventId: ids[0]! },
          { ...event(a.id, 2, runId, "corr-1"), eventId: ids[2]! },
          { ...event(a.id, 1, otherRun), eventId: ids[3]! }
        ])
        const ofRun = yield* store.events(a.id, runId)
        assert.deepStrictEqual(
          ofRun.map((e) => e.eventId),
          [ids[0], ids[2]]
        )
        // A stale eventId on the way in is replaced by the one the insert assigns.
        const fresh = yield* store.appendEvent({ ...event(b.id, 2), eventId: ids[0]! })
        assert.strictEqual(fresh, "5")
      })
    )
  )

  it.effect("TL-4 the tool-call journal records start and end, with run, name and effect", () =>
    withMemoryStore((store) =>
      Effect.gen(function* () {
        const session = yield* store.createSession({ cwd: "/w" })
        yield* store.toolCallStarted({
          id: callId,
          sessionId: session.id,
          runId,
          name: "read",
          effect: "read",
          arguments: '{"path":"a.ts"}',
          startedAt: 10
        })
        assert.deepStrictEqual(yield* store.toolCalls(session.id), [
          {
            id: callId,
            sessionId: session.id,
            runId,
            name: "read",
            effect: "read",
            arguments: '{"path":"a.ts"}',
            status: "running",
            startedAt: 10
          }
        ])
        yield* store.toolCallEnded(callId, { status: "completed", result: "1 line", endedAt: 25 })
        const [ended] = yield* store.toolCalls(session.id)
        assert.strictEqual(ended?.status, "completed")
        assert.strictEqual(ended?.result, "1 line")
        assert.strictEqual(ended?.endedAt, 25)
      })
    )
  )

  it.effect("ST-1 plugin state keeps JSON per plugin and key; undefined removes the key", () =>
    withMemoryStore((store) =>
      Effect.gen(function* () {
        assert.isTrue(Option.isNone(yield* store.pluginState.get("memory", "k")))
        yield* store.pluginState.set("memory", "k", { notes: ["a"], n: 1 })
        yield* store.pluginState.set("other", "k", true)
        assert.deepStrictEqual(yield* store.pluginState.get("memory", "k"), Option.some({ notes: ["a"], n: 1 }))
        yield* store.pluginState.set("memory", "k", [2])
        assert.deepStrictEqual(yield* store.pluginState.get("memory", "k"), Option.some([2]))
        yield* store.pluginState.set("memory", "k", undefined)
        assert.isTrue(Option.isNone(yield* store.pluginState.get("memory", "k")))
        assert.deepStrictEqual(yield* store.pluginState.get("other", "k"), Option.some(true))

        const cyclic: Record<string, unknown> = {}
        cyclic.self = cyclic
        const error = yield* Effect.flip(store.pluginState.set("memory", "bad", cyclic))
        assert.include(error.message, "cannot be stored as JSON")
      })
    )
  )
})
