import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { SessionLockedError, SessionNotFoundError, StoreError } from "@alisio/domain/Errors"
import { RunId, SessionId, ToolCallId } from "@alisio/domain/Ids"
import type { Message } from "@alisio/domain/Message"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Fake from "@alisio/providers/FakeProvider"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as Database from "../src/internal/sessionDatabase.js"
import { currentOwner } from "../src/ProcessOwner.js"
import { Runner } from "../src/Runner.js"
import * as SessionStore from "../src/SessionStore.js"
import { spawnStoreChild, spawnWriteLockHolder, tempDir } from "./fixtures/storeTesting.js"
import { baseOptions, runnerLayer } from "./helpers/harness.js"

const withMemoryStore = <A, E>(body: (store: SessionStore.SessionStoreService) => Effect.Effect<A, E>) =>
  Effect.flatMap(SessionStore.SessionStore, body).pipe(Effect.provide(SessionStore.layerMemory))

const runId = RunId.make("run-1")

const event = (sessionId: SessionId, seq: number, run: RunId = runId, correlationId?: string): KnownRunEvent => ({
  schemaVersion: 1,
  type: "turn_completed",
  runId: run,
  seq,
  sessionId,
  time: "2026-11-30T12:00:00.000Z",
  ...(correlationId === undefined ? {} : { correlationId }),
  data: { turn: seq, durationMs: 10, finishReason: "stop", usage: { inputTokens: 3, outputTokens: 4 } }
})

const user = (text: string): Message => ({ role: "user", content: [{ _tag: "text", text }] })

const callId = ToolCallId.make("call_1")
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

/** A plain connection to the same file, for what the store does not expose (integrity, lock rows). */
const rawQuery = (filename: string, sql: string) =>
  Effect.scoped(Effect.flatMap(Database.open(filename), (db) => db.use(db.run(sql))))

describe("SessionStore", () => {
  it.effect("ST-1 root and child sessions keep parent link, status, cwd, title and times", () =>
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
        yield* db.use(db.run("UPDATE sessions SET status = 'sleeping' WHERE id = ?", [session.id]))
        const error = yield* Effect.flip(store.sessions({ cwd: "/work/a" }))
        assert.instanceOf(error, StoreError)
        assert.strictEqual(error.reason, "corrupt")
        assert.include(error.message, "A session in the in-memory session database is not in the shape Alisio wrote")
        // The statement stays built and keeps answering once the row is right again.
        yield* db.use(db.run("UPDATE sessions SET status = 'completed' WHERE id = ?", [session.id]))
        const listed = yield* store.sessions({ cwd: "/work/a" })
        assert.deepStrictEqual(
          listed.map((s) => [s.id, s.status]),
          [[session.id, "completed"]]
        )
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

  it.effect("ST-3 beginRun with the same requestId returns the existing run", () =>
    withMemoryStore((store) =>
      Effect.gen(function* () {
        const session = yield* store.createSession({ cwd: "/w" })
        const input = {
          id: RunId.make("run-a"),
          sessionId: session.id,
          requestId: "req-1",
          model: "gpt",
          provider: "openai",
          owner: currentOwner
        }
        const first = yield* store.beginRun!(input)
        assert.isFalse(first.existing)
        assert.strictEqual(first.run.status, "running")

        const retry = yield* store.beginRun!({ ...input, id: RunId.make("run-b") })
        assert.isTrue(retry.existing)
        assert.strictEqual(retry.run.id, "run-a")
        assert.deepStrictEqual(
          (yield* store.runs!(session.id)).map((r) => r.id),
          ["run-a"]
        )

        // A child session's request ids are its own: the same id there is another run.
        const child = yield* store.createSession({ cwd: "/w", parentId: session.id })
        const other = yield* store.beginRun!({ ...input, id: RunId.make("run-c"), sessionId: child.id })
        assert.isFalse(other.existing)

        yield* TestClock.adjust(500)
        yield* store.endRun!(input.id, { status: "completed", usage: { inputTokens: 5, outputTokens: 6 } })
        const ended = Option.getOrThrow(yield* store.runByRequest!(session.id, "req-1"))
        assert.strictEqual(ended.status, "completed")
        assert.deepStrictEqual(ended.usage, { inputTokens: 5, outputTokens: 6 })
        assert.strictEqual(ended.endedAt, 500)
        assert.deepStrictEqual(ended.owner, currentOwner)
        assert.isTrue(Option.isNone(yield* store.runByRequest!(session.id, "req-2")))
        const missing = yield* Effect.flip(store.endRun!(RunId.make("nope"), { status: "failed" }))
        assert.strictEqual(missing.reason, "not_found")
      })
    )
  )

  it.effect(
    "ST-3 a root run's request id is claimed across sessions: found in one query, and a second root session gets the first run",
    () =>
      withMemoryStore((store) =>
        Effect.gen(function* () {
          const input = { model: "gpt", provider: "openai", owner: currentOwner, requestId: "req-9" }
          const older = yield* store.createSession({ cwd: "/a" })
          const first = yield* store.beginRun!({ ...input, id: RunId.make("run-1"), sessionId: older.id })
          assert.isFalse(first.existing)
          // Many newer sessions, in other folders too: the lookup does not scan them.
          for (let i = 0; i < 250; i++) yield* store.createSession({ cwd: i % 2 === 0 ? "/a" : "/b" })
          assert.strictEqual(Option.getOrThrow(yield* store.runForRequest!("req-9")).id, "run-1")
          assert.isTrue(Option.isNone(yield* store.runForRequest!("req-unknown")))

          // A racing process created its own session for the request: it gets the first run, and
          // its empty session is removed; a session with history is kept.
          const placeholder = yield* store.createSession({ cwd: "/b" })
          const lost = yield* store.beginRun!({ ...input, id: RunId.make("run-2"), sessionId: placeholder.id })
          assert.isTrue(lost.existing)
          assert.strictEqual(lost.run.id, "run-1")
          assert.strictEqual(lost.run.sessionId, older.id)
          assert.instanceOf(yield* Effect.flip(store.session(placeholder.id)), SessionNotFoundError)
          const withHistory = yield* store.createSession({ cwd: "/b" })
          yield* store.appendMessages(withHistory.id, [user("earlier")])
          const again = yield* store.beginRun!({ ...input, id: RunId.make("run-3"), sessionId: withHistory.id })
          assert.strictEqual(again.run.id, "run-1")
          assert.strictEqual((yield* store.messages(withHistory.id)).length, 1)
          assert.deepStrictEqual(yield* store.runs!(withHistory.id), [])
        })
      )
  )

  it.effect(
    "ST-3 two Runner.run racing on one request id without a session: one runs, the other gets its run and leaves no session",
    () =>
      Effect.gen(function* () {
        const store = yield* SessionStore.SessionStore
        const runner = yield* Runner
        const fake = yield* Fake.FakeProvider
        const options = { ...baseOptions, requestId: "req-race" }
        const outcomes = yield* Effect.all([runner.run(options), runner.run(options)], { concurrency: "unbounded" })
        assert.deepStrictEqual(outcomes.map((outcome) => outcome.existing).sort(), [false, true])
        assert.strictEqual(outcomes[0].runId, outcomes[1].runId)
        assert.strictEqual(outcomes[0].sessionId, outcomes[1].sessionId)
        assert.strictEqual((yield* fake.requests).length, 1)
        assert.deepStrictEqual(
          (yield* store.sessions()).map((session) => session.id),
          [outcomes[0].sessionId]
        )
      }).pipe(Effect.provide(runnerLayer({ script: [Fake.answer("once"), Fake.answer("twice")] })))
  )

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

  it.scoped("ST-4 interruptRuns marks interrupted the runs and child sessions of a process killed with SIGKILL", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      const store = yield* SessionStore.make({ filename })
      const root = yield* store.createSession({ cwd: "/w", status: "running" })
      const mine = yield* store.beginRun!({
        id: RunId.make("parent-run"),
        sessionId: root.id,
        model: "m",
        provider: "p",
        owner: currentOwner
      })

      const child = yield* spawnStoreChild("runs", filename, root.id)
      const taken = (yield* child.nextLine) as { runs: Array<RunId>; child: SessionId }
      // While the child lives, nothing of it is touched.
      assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 0 })

      yield* child.kill9
      assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 2, sessions: 1 })
      const runs = yield* store.runs!(taken.child)
      assert.deepStrictEqual(
        runs.map((r) => r.id),
        taken.runs
      )
      for (const run of runs) {
        assert.strictEqual(run.status, "interrupted")
        assert.strictEqual(run.owner.pid, child.pid)
        assert.include(run.error ?? "", `pid ${child.pid}`)
        assert.isDefined(run.endedAt)
      }
      assert.strictEqual((yield* store.session(taken.child)).status, "interrupted")
      // This process's run and the root session are alive and left alone.
      assert.strictEqual(
        Option.getOrThrow(yield* Effect.map(store.runs!(root.id), (rs) => Option.fromNullable(rs[0]))).status,
        "running"
      )
      assert.strictEqual(mine.run.status, "running")
      assert.strictEqual((yield* store.session(root.id)).status, "running")
      assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 0 })
    })
  )

  it.scoped(
    "ST-4 interruptRuns also ends the tool calls a killed process left running and the root sessions it left queued",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const store = yield* SessionStore.make({ filename })
        // This process's own queued session and running call are alive and must stay as they are.
        const mine = yield* store.createSession({ cwd: "/w" })
        const myRun = RunId.make("my-run")
        yield* store.beginRun!({ id: myRun, sessionId: mine.id, model: "m", provider: "p", owner: currentOwner })
        yield* store.toolCallStarted({ id: callId, sessionId: mine.id, runId: myRun, name: "read", arguments: "{}" })
        const waiting = yield* store.createSession({ cwd: "/w" })

        const child = yield* spawnStoreChild("leftovers", filename, "unused")
        const left = (yield* child.nextLine) as { queued: SessionId; running: SessionId; run: RunId }
        assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 0 })
        assert.strictEqual((yield* store.toolCalls(left.running))[0]?.status, "running")

        yield* TestClock.adjust(5000)
        yield* child.kill9
        assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 1, sessions: 2 })
        const [call] = yield* store.toolCalls(left.running)
        assert.strictEqual(call?.status, "cancelled")
        assert.strictEqual(call?.endedAt, 5000)
        assert.include(call?.result ?? "", "ended before it finished")
        assert.strictEqual((yield* store.session(left.queued)).status, "interrupted")
        assert.strictEqual((yield* store.session(left.running)).status, "interrupted")

        assert.strictEqual((yield* store.toolCalls(mine.id))[0]?.status, "running")
        assert.strictEqual((yield* store.session(mine.id)).status, "queued")
        assert.strictEqual((yield* store.session(waiting.id)).status, "queued")
        assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 0 })
      })
  )

  it.scoped(
    "ST-1 a session locked by another live process fails with SessionLockedError; a dead holder's lock is taken over",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const store = yield* SessionStore.make({ filename })
        const session = yield* store.createSession({ cwd: "/w" })

        const child = yield* spawnStoreChild("lock", filename, session.id)
        yield* child.nextLine
        const locked = yield* Effect.flip(Effect.scoped(store.lockSession(session.id, currentOwner)))
        assert.instanceOf(locked, SessionLockedError)
        assert.strictEqual(locked.holderPid, child.pid)
        assert.include(locked.message, `pid ${child.pid}`)
        assert.include(locked.message, session.id)

        yield* child.kill9
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* store.lockSession(session.id, currentOwner)
            const rows = yield* rawQuery(filename, "SELECT pid, token FROM session_locks")
            assert.deepStrictEqual(rows, [{ pid: currentOwner.pid, token: currentOwner.token }])
          })
        )
        assert.deepStrictEqual(yield* rawQuery(filename, "SELECT pid FROM session_locks"), [])

        const missing = yield* Effect.flip(Effect.scoped(store.lockSession(SessionId.make("nope"), currentOwner)))
        assert.instanceOf(missing, StoreError)
        assert.strictEqual((missing as StoreError).reason, "not_found")
      })
  )

  it.scoped("ST-1 a session is locked once per process: a second holder fails until the first lets go", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      const store = yield* SessionStore.make({ filename })
      // A second store on the same file, as another part of this process would open it.
      const other = yield* SessionStore.make({ filename })
      const session = yield* store.createSession({ cwd: "/w" })
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* store.lockSession(session.id, currentOwner)
          for (const holder of [store, other]) {
            const again = yield* Effect.flip(Effect.scoped(holder.lockSession(session.id, currentOwner)))
            assert.instanceOf(again, SessionLockedError)
            assert.strictEqual(again.holderPid, process.pid)
            assert.include(again.message, "already has a run in this process")
            assert.include(again.message, "Wait for that run to end")
          }
          // The failed attempts did not take the row away from the holder.
          assert.deepStrictEqual(yield* rawQuery(filename, "SELECT pid FROM session_locks"), [{ pid: process.pid }])
        })
      )
      assert.deepStrictEqual(yield* rawQuery(filename, "SELECT pid FROM session_locks"), [])
      yield* Effect.scoped(other.lockSession(session.id, currentOwner))
    })
  )

  it.scoped(
    "ST-1 two concurrent Runner.run on one session in one process: the second fails with SessionLockedError, the first completes alone",
    () =>
      Effect.gen(function* () {
        const store = yield* SessionStore.SessionStore
        const runner = yield* Runner
        const session = yield* store.createSession({ cwd: "/tmp" })
        const started = yield* Deferred.make<void>()
        const first = yield* Effect.fork(
          runner.run({
            ...baseOptions,
            sessionId: session.id,
            prompt: "first",
            onEvent: (event) => (event.type === "run_started" ? Deferred.succeed(started, undefined) : Effect.void)
          })
        )
        yield* Deferred.await(started)
        const second = yield* Effect.flip(runner.run({ ...baseOptions, sessionId: session.id, prompt: "second" }))
        assert.instanceOf(second, SessionLockedError)
        assert.include(second.message, session.id)
        yield* TestClock.adjust(1000)
        const outcome = yield* Fiber.join(first)
        assert.strictEqual(outcome.status, "completed")
        assert.strictEqual(outcome.text, "one")
        const stored = yield* store.messages(session.id)
        assert.deepStrictEqual(
          stored.map((m) => [m.message.role, m.runId]),
          [
            ["user", outcome.runId],
            ["assistant", outcome.runId]
          ]
        )
        assert.deepStrictEqual(
          (yield* store.runs!(session.id)).map((r) => r.id),
          [outcome.runId]
        )
        // The lock went with the first run: the session takes another one.
        const next = yield* runner.run({ ...baseOptions, sessionId: session.id, prompt: "third" })
        assert.strictEqual(next.status, "completed")
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: (_, index) => (index === 0 ? [Fake.delay(1000), ...Fake.answer("one")] : Fake.answer("two"))
          })
        )
      )
  )

  it.scopedLive(
    "ST-1 a store call waits out another process's write lock without stalling the event loop, then succeeds",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const store = yield* SessionStore.make({ filename })
        const session = yield* store.createSession({ cwd: "/w" })
        const holder = yield* spawnWriteLockHolder(filename, 1000)
        yield* holder.nextLine
        // A timer of this process: it can only fire while the event loop is free.
        let ticks = 0
        const timer = yield* Effect.acquireRelease(
          Effect.sync(() => setInterval(() => ticks++, 10)),
          (timer) => Effect.sync(() => clearInterval(timer))
        )
        const [stored] = yield* store.appendMessages(session.id, [user("written after the lock")])
        clearInterval(timer)
        assert.deepStrictEqual(yield* holder.nextLine, { released: true })
        assert.isAtLeast(ticks, 10, "the timer kept firing while the store waited")
        assert.strictEqual(stored?.position, 1)
        assert.deepStrictEqual(
          (yield* store.messages(session.id)).map((m) => m.message),
          [user("written after the lock")]
        )
      }),
    { timeout: 30_000 }
  )

  it.scopedLive(
    "ST-1 a fiber waiting for another process's write lock can be interrupted; the store works once the lock is free",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const store = yield* SessionStore.make({ filename })
        const session = yield* store.createSession({ cwd: "/w" })
        const holder = yield* spawnWriteLockHolder(filename)
        yield* holder.nextLine
        for (const write of [
          store.appendMessages(session.id, [user("never written")]),
          store.setSessionStatus(session.id, "running")
        ]) {
          const waiting = yield* Effect.fork(write)
          yield* Effect.sleep(Duration.millis(300))
          assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)), "still waiting for the lock")
          const exit = yield* Fiber.interrupt(waiting)
          assert.isTrue(Exit.isInterrupted(exit), `interrupted, not ${JSON.stringify(exit)}`)
        }
        yield* holder.send("release")
        assert.deepStrictEqual(yield* holder.nextLine, { released: true })
        yield* store.appendMessages(session.id, [user("after")])
        assert.deepStrictEqual(
          (yield* store.messages(session.id)).map((m) => m.message),
          [user("after")]
        )
        assert.strictEqual((yield* store.session(session.id)).status, "queued")
      }),
    { timeout: 30_000 }
  )

  it.scoped("ST-1 a write lock held past the total wait fails with a busy StoreError naming the remedy", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      const store = yield* SessionStore.make({ filename })
      const session = yield* store.createSession({ cwd: "/w" })
      const holder = yield* spawnWriteLockHolder(filename)
      yield* holder.nextLine
      const waiting = yield* Effect.fork(store.appendMessages(session.id, [user("too late")]))
      let waited = 0
      while (Option.isNone(yield* Fiber.poll(waiting))) {
        yield* TestClock.adjust(Duration.millis(250))
        waited += 250
        yield* Effect.yieldNow()
        assert.isAtMost(waited, Database.BUSY_WAIT_MS + 5_000, "the wait ends")
      }
      const error = yield* Effect.flip(Fiber.join(waiting))
      assert.instanceOf(error, StoreError)
      assert.strictEqual((error as StoreError).reason, "busy")
      assert.isAtLeast(waited, Database.BUSY_WAIT_MS)
      assert.include(error.message, "locked by another process")
      assert.include(error.message, "Let the other Alisio process finish (or stop it), then try again.")
      yield* holder.send("release")
      yield* holder.nextLine
      assert.deepStrictEqual(yield* store.messages(session.id), [])
    })
  )

  it.scoped(
    "ST-1 a kill -9 during a burst of writes leaves a database that passes integrity_check and opens at the current version",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const session = yield* Effect.scoped(
          Effect.flatMap(SessionStore.make({ filename }), (store) =>
            store.createSession({ cwd: "/w", id: SessionId.make("burst") })
          )
        )
        const child = yield* spawnStoreChild("burst", filename, session.id)
        let reported = 0
        while (reported < 40) reported = ((yield* child.nextLine) as { batches: number }).batches
        yield* child.kill9

        assert.deepStrictEqual(yield* rawQuery(filename, "PRAGMA integrity_check"), [{ integrity_check: "ok" }])
        const store = yield* SessionStore.make({ filename })
        assert.deepStrictEqual(yield* rawQuery(filename, "PRAGMA user_version"), [{ user_version: 6 }])
        const messages = yield* store.messages(session.id)
        const events = yield* store.events(session.id)
        // Each batch of three messages is one transaction: all of it or none of it.
        assert.strictEqual(messages.length % 3, 0)
        const batches = messages.length / 3
        assert.isAtLeast(batches, reported)
        assert.deepStrictEqual(
          messages.map((m) => m.position),
          Array.from({ length: messages.length }, (_, i) => i + 1)
        )
        assert.include([batches, batches - 1], events.length)
      })
  )

  it.scoped("ST-1 the file layer creates parent folders and keeps the database in WAL mode", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "state", "alisio", "alisio.db")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* SessionStore.SessionStore
          yield* store.createSession({ cwd: "/w" })
        }).pipe(Effect.provide(SessionStore.layer({ filename })))
      )
      assert.isTrue(existsSync(filename))
      assert.deepStrictEqual(yield* rawQuery(filename, "PRAGMA journal_mode"), [{ journal_mode: "wal" }])
    })
  )

  it.scoped(
    "ST-6 the database with its -wal and -shm is 0600 in a 0700 folder, new under a loose umask or narrowed when wider",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const previous = process.umask(0o022)
        yield* Effect.addFinalizer(() => Effect.sync(() => process.umask(previous)))
        const modes = (filename: string) =>
          [dirname(filename), ...["", "-wal", "-shm"].map((suffix) => `${filename}${suffix}`)].map(
            (path) => statSync(path).mode & 0o777
          )

        const fresh = join(dir, "fresh", "alisio.db")
        const store = yield* SessionStore.make({ filename: fresh })
        yield* store.createSession({ cwd: "/w" })
        assert.deepStrictEqual(modes(fresh), [0o700, 0o600, 0o600, 0o600])

        // What an older Alisio left: the files and the folder readable by everyone.
        const older = join(dir, "older", "alisio.db")
        mkdirSync(dirname(older), { mode: 0o755 })
        chmodSync(dirname(older), 0o755)
        yield* Effect.scoped(
          Effect.gen(function* () {
            const store = yield* SessionStore.make({ filename: older })
            yield* store.createSession({ cwd: "/w", id: SessionId.make("kept") })
            for (const suffix of ["", "-wal", "-shm"]) chmodSync(`${older}${suffix}`, 0o644)
            chmodSync(dirname(older), 0o755)
            assert.deepStrictEqual(modes(older), [0o755, 0o644, 0o644, 0o644])
          })
        )
        // Closing the last connection removes -wal and -shm; put wide ones back as a crash would leave them.
        for (const suffix of ["-wal", "-shm"]) writeFileSync(`${older}${suffix}`, "", { mode: 0o644 })
        const reopened = yield* SessionStore.make({ filename: older })
        assert.strictEqual((yield* reopened.session(SessionId.make("kept"))).id, "kept")
        assert.deepStrictEqual(modes(older), [0o700, 0o600, 0o600, 0o600])
      })
  )

  it.scoped("ST-1 a file that is not a SQLite database fails with not_a_database and is left as it was", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const filename = join(dir, "alisio.db")
      writeFileSync(filename, "these are my notes, not a database\n")
      const error = yield* Effect.flip(SessionStore.make({ filename }))
      assert.strictEqual(error.reason, "not_a_database")
      assert.include(error.message, filename)
      assert.include(error.message, "Move the file aside")
      assert.strictEqual(readFileSync(filename, "utf8"), "these are my notes, not a database\n")

      // A SQLite database of some other program is not ours either.
      const foreign = join(dir, "other.db")
      yield* Effect.scoped(
        Effect.flatMap(Database.open(foreign), (db) => db.use(db.run("CREATE TABLE notes (body TEXT)")))
      )
      const other = yield* Effect.flip(SessionStore.make({ filename: foreign }))
      assert.strictEqual(other.reason, "not_a_database")
      assert.deepStrictEqual(yield* rawQuery(foreign, "SELECT name FROM sqlite_schema"), [{ name: "notes" }])
    })
  )

  it.scoped("ST-1 a full disk fails with disk_full and leaves no half-written messages", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      const db = yield* Database.open(filename)
      const store = yield* SessionStore.makeWithDatabase(db)
      const session = yield* store.createSession({ cwd: "/w" })
      yield* store.appendMessages(session.id, [user("small")])
      // SQLite answers SQLITE_FULL once the file would grow past max_page_count, as on a full disk.
      const [pages] = (yield* db.use(db.run("PRAGMA page_count"))) as Array<{ page_count: number }>
      yield* db.use(db.run(`PRAGMA max_page_count = ${pages!.page_count + 1}`))

      const big = Array.from({ length: 4 }, (_, i) => user(`${i}`.repeat(6000)))
      const error = yield* Effect.flip(store.appendMessages(session.id, big))
      assert.strictEqual(error.reason, "disk_full")
      assert.include(error.message, filename)
      assert.deepStrictEqual(
        (yield* store.messages(session.id)).map((m) => m.message),
        [user("small")]
      )
      const bulky = (seq: number): KnownRunEvent => ({
        ...event(session.id, seq),
        type: "run_cancelled",
        data: { reason: "x".repeat(4000) }
      })
      const eventError = yield* Effect.flip(
        Effect.forEach(
          Array.from({ length: 50 }, (_, i) => bulky(i + 1)),
          store.appendEvent
        )
      )
      assert.strictEqual(eventError.reason, "disk_full")
    })
  )

  it.scoped("ST-1 a read-only state folder fails with read_only, naming the file", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const filename = join(dir, "alisio.db")
      yield* Effect.scoped(SessionStore.make({ filename }))
      yield* makeReadOnly(dir, filename)
      const error = yield* Effect.flip(
        Effect.scoped(Effect.flatMap(SessionStore.make({ filename }), (store) => store.createSession({ cwd: "/w" })))
      )
      assert.strictEqual(error.reason, "read_only")
      assert.include(error.message, filename)
    })
  )
})

/** Read-only for this process: permission bits, or for root (who ignores them) the immutable flag. */
const makeReadOnly = (dir: string, filename: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      if (process.getuid?.() === 0) execFileSync("chattr", ["+i", filename, dir])
      else {
        chmodSync(filename, 0o400)
        chmodSync(dir, 0o500)
      }
    }),
    () =>
      Effect.sync(() => {
        if (process.getuid?.() === 0) execFileSync("chattr", ["-i", filename, dir])
        else {
          chmodSync(dir, 0o700)
          chmodSync(filename, 0o600)
        }
      })
  )
