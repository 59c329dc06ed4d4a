// Managing sessions (issue 16): prefix lookup, summaries, rename and delete, on real SQLite files.
import { join } from "node:path"
import { RunId, SessionId, ToolCallId } from "@alisio/domain/Ids"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as TestClock from "effect/TestClock"
import * as Database from "../src/internal/sessionDatabase.js"
import { currentOwner, type ProcessOwner } from "../src/ProcessOwner.js"
import * as SessionStore from "../src/SessionStore.js"
import { tempDir } from "./fixtures/storeTesting.js"
import { user } from "./helpers/messages.js"

/** A store on a fresh file, and a plain connection to count what it holds. */
const fileStore = Effect.gen(function* () {
  const filename = join(yield* tempDir, "alisio.db")
  const store = yield* SessionStore.make({ filename })
  const count = (table: string, where = "1") =>
    Effect.scoped(
      Effect.flatMap(Database.open(filename), (db) =>
        db.use(Effect.map(db.run(`SELECT count(*) AS n FROM ${table} WHERE ${where}`), (rows) => rows[0]))
      )
    ).pipe(Effect.map((row) => (row as { readonly n: number }).n))
  return { store, count, filename }
})

const event = (sessionId: SessionId, runId: RunId): KnownRunEvent => ({
  schemaVersion: 1,
  type: "run_cancelled",
  runId,
  seq: 1,
  sessionId,
  time: "2026-11-30T12:00:00.000Z",
  data: { reason: "test" }
})

// No process has this pid: its runs answer to nobody.
const deadOwner: ProcessOwner = { pid: 2 ** 30, token: "start:1" }

/** A session holding one of everything: a message, a run with a request id, an event, a tool call. */
const filled = (store: SessionStore.SessionStoreService, input: SessionStore.NewSession, owner: ProcessOwner) =>
  Effect.gen(function* () {
    const session = yield* store.createSession({ owner, ...input })
    const runId = RunId.make(`run-${session.id}`)
    yield* store.appendMessages(session.id, [user(`hello from ${session.id}`)], runId)
    yield* store.beginRun!({
      id: runId,
      sessionId: session.id,
      requestId: `req-${session.id}`,
      model: "m",
      provider: "p",
      owner
    })
    yield* store.appendEvent(event(session.id, runId))
    yield* store.toolCallStarted({
      id: ToolCallId.make(`call-${session.id}`),
      sessionId: session.id,
      name: "read",
      arguments: "{}"
    })
    return session
  })

describe("SessionStore: managing sessions", () => {
  it.scoped("ST-1 sessionsByIdPrefix finds sessions by their first characters, reading no wildcard in them", () =>
    Effect.gen(function* () {
      const { store } = yield* fileStore
      for (const id of ["abc12345-1", "abc12345-2", "abd00000", "a%c", "a_c", "ab"]) {
        yield* store.createSession({ cwd: "/w", id: SessionId.make(id) })
      }
      const ids = (prefix: string, limit = 10) =>
        Effect.map(store.sessionsByIdPrefix(prefix, limit), (sessions) => sessions.map((s) => s.id))
      assert.deepStrictEqual(yield* ids("abc12345"), ["abc12345-1", "abc12345-2"])
      assert.deepStrictEqual(yield* ids("abd"), ["abd00000"])
      assert.deepStrictEqual(yield* ids("ab"), ["ab", "abc12345-1", "abc12345-2", "abd00000"])
      assert.deepStrictEqual(yield* ids("ab", 2), ["ab", "abc12345-1"])
      assert.deepStrictEqual(yield* ids("a%"), ["a%c"])
      assert.deepStrictEqual(yield* ids("a_"), ["a_c"])
      assert.deepStrictEqual(yield* ids("b"), [])
      assert.deepStrictEqual(yield* ids(""), [], "an empty prefix names nothing")
    })
  )

  it.scoped("ST-1 sessionSummaries count runs and children, give the first prompt, and put a folder first", () =>
    Effect.gen(function* () {
      const { store } = yield* fileStore
      const here = yield* filled(store, { cwd: "/here", id: SessionId.make("here-1") }, deadOwner)
      yield* store.createSession({ cwd: "/here", parentId: here.id })
      yield* store.createSession({ cwd: "/here", parentId: here.id })
      yield* TestClock.adjust(1000)
      yield* store.createSession({ cwd: "/there", id: SessionId.make("there-1"), title: "named" })
      yield* TestClock.adjust(1000)
      yield* store.createSession({ cwd: "/there", id: SessionId.make("there-2") })

      const roots = yield* store.sessionSummaries({ parentId: null })
      assert.deepStrictEqual(
        roots.map((s) => s.id),
        ["there-2", "there-1", "here-1"]
      )
      const first = roots.find((s) => s.id === "here-1")!
      assert.strictEqual(first.runCount, 1)
      assert.strictEqual(first.childCount, 2)
      assert.strictEqual(first.firstPrompt, "hello from here-1")
      assert.strictEqual(roots.find((s) => s.id === "there-1")!.title, "named")
      assert.isUndefined(roots.find((s) => s.id === "there-2")!.firstPrompt)

      const hereFirst = yield* store.sessionSummaries({ parentId: null, firstCwd: "/here" })
      assert.deepStrictEqual(
        hereFirst.map((s) => s.id),
        ["here-1", "there-2", "there-1"]
      )
      const limited = yield* store.sessionSummaries({ parentId: null, firstCwd: "/here", limit: 2 })
      assert.deepStrictEqual(
        limited.map((s) => s.id),
        ["here-1", "there-2"]
      )
      const there = yield* store.sessionSummaries({ cwd: "/there" })
      assert.deepStrictEqual(
        there.map((s) => s.id),
        ["there-2", "there-1"]
      )
    })
  )

  it.scoped("ST-1 renameSession sets a title; with whileTitle only over the title it expects", () =>
    Effect.gen(function* () {
      const { store } = yield* fileStore
      const session = yield* store.createSession({ cwd: "/w", title: "fix the bug" })
      assert.isTrue(yield* store.renameSession(session.id, "summary", { whileTitle: "fix the bug" }))
      assert.strictEqual((yield* store.session(session.id)).title, "summary")
      assert.isFalse(
        yield* store.renameSession(session.id, "late summary", { whileTitle: "fix the bug" }),
        "a title changed meanwhile is kept"
      )
      assert.isTrue(yield* store.renameSession(session.id, "mine"))
      assert.strictEqual((yield* store.session(session.id)).title, "mine")
      const untitled = yield* store.createSession({ cwd: "/w" })
      assert.isTrue(yield* store.renameSession(untitled.id, "first", { whileTitle: null }))
      assert.isFalse(yield* store.renameSession(untitled.id, "second", { whileTitle: null }))
      const missing = yield* Effect.flip(store.renameSession(SessionId.make("nope"), "x"))
      assert.strictEqual(missing._tag, "SessionNotFoundError")
    })
  )

  it.scoped("ST-1 deleteSessions removes sessions with their descendants and all they hold, in one transaction", () =>
    Effect.gen(function* () {
      const { count, store } = yield* fileStore
      const root = yield* filled(store, { cwd: "/w", id: SessionId.make("root") }, deadOwner)
      const child = yield* filled(store, { cwd: "/w", id: SessionId.make("child"), parentId: root.id }, deadOwner)
      yield* filled(store, { cwd: "/w", id: SessionId.make("grandchild"), parentId: child.id }, deadOwner)
      const other = yield* filled(store, { cwd: "/w", id: SessionId.make("other") }, deadOwner)
      // A lock a dead process left does not hold the session either.
      yield* Effect.scoped(store.lockSession(child.id, deadOwner))
      const tables = ["sessions", "messages", "events", "tool_calls", "runs", "run_requests"]
      const before = yield* Effect.forEach(tables, (table) => count(table))
      assert.deepStrictEqual(before, [4, 4, 4, 4, 4, 2], "root runs claim their request ids")

      const { deleted } = yield* store.deleteSessions([root.id])
      assert.sameMembers([...deleted], ["root", "child", "grandchild"])
      const after = yield* Effect.forEach(tables, (table) => count(table))
      assert.deepStrictEqual(after, [1, 1, 1, 1, 1, 1], "only the other session's rows are left")
      assert.strictEqual(yield* count("session_locks"), 0)
      assert.strictEqual((yield* store.session(other.id)).id, other.id)
      assert.strictEqual((yield* Effect.flip(store.session(child.id)))._tag, "SessionNotFoundError")
    })
  )

  it.scoped("ST-1 deleteSessions refuses a tree with a live run and deletes none of the sessions named", () =>
    Effect.gen(function* () {
      const { count, store } = yield* fileStore
      const idle = yield* filled(store, { cwd: "/w", id: SessionId.make("idle") }, deadOwner)
      const root = yield* store.createSession({ cwd: "/w", id: SessionId.make("busy-root"), status: "completed" })
      // The run goes on in a child session, and this process is alive.
      yield* filled(store, { cwd: "/w", id: SessionId.make("busy-child"), parentId: root.id }, currentOwner)

      const refused = yield* Effect.flip(store.deleteSessions([idle.id, root.id]))
      assert.strictEqual(refused._tag, "SessionLockedError")
      assert.include(refused.message, "busy-child has a run in progress")
      assert.include(refused.message, `pid ${process.pid}`)
      assert.strictEqual(yield* count("sessions"), 3, "nothing was deleted")

      const unknown = yield* Effect.exit(store.deleteSessions([idle.id, SessionId.make("nope")]))
      assert.isTrue(Exit.isFailure(unknown))
      assert.strictEqual(yield* count("sessions"), 3)

      yield* store.endRun!(RunId.make("run-busy-child"), { status: "completed" })
      const { deleted } = yield* store.deleteSessions([idle.id, root.id])
      assert.sameMembers([...deleted], ["idle", "busy-root", "busy-child"])
      assert.strictEqual(yield* count("sessions"), 0)
    })
  )

  it.scoped("ST-1 deleteSessions refuses a session whose lock a live process holds", () =>
    Effect.gen(function* () {
      const { count, store } = yield* fileStore
      const session = yield* store.createSession({ cwd: "/w", status: "completed" })
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* store.lockSession(session.id, currentOwner)
          const refused = yield* Effect.flip(store.deleteSessions([session.id]))
          assert.strictEqual(refused._tag, "SessionLockedError")
        })
      )
      assert.strictEqual(yield* count("sessions"), 1)
      assert.deepStrictEqual(yield* store.deleteSessions([session.id]), { deleted: [session.id] })
    })
  )
})

describe("SessionStore: moving a session to another folder", () => {
  it.scoped("ST-1 moveSession moves a tree, and not while a live process holds a lock in it", () =>
    Effect.gen(function* () {
      const { count, store } = yield* fileStore
      const root = yield* store.createSession({ cwd: "/a", status: "completed" })
      const child = yield* store.createSession({ cwd: "/a", parentId: root.id, status: "completed" })
      const cwdOf = (id: SessionId) => Effect.map(store.session(id), (session) => session.cwd)

      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* store.lockSession(child.id, currentOwner)
          const refused = yield* Effect.flip(store.moveSession(root.id, "/b"))
          assert.strictEqual(refused._tag, "SessionLockedError")
          assert.include(refused.message, `${child.id} has a run in progress (pid ${process.pid}`)
          assert.include(refused.message, "then move the session.")
          assert.deepStrictEqual([yield* cwdOf(root.id), yield* cwdOf(child.id)], ["/a", "/a"])
        })
      )

      yield* store.moveSession(root.id, "/b")
      assert.deepStrictEqual([yield* cwdOf(root.id), yield* cwdOf(child.id)], ["/b", "/b"])
      assert.strictEqual(yield* count("sessions", "cwd = '/b'"), 2)
      const unknown = yield* Effect.flip(store.moveSession(SessionId.make("nope"), "/c"))
      assert.strictEqual(unknown._tag, "SessionNotFoundError")
    })
  )
  it.scoped(
    "ST-1 a session row with a damaged field (status, times, title, a run's usage) still lists, shows and deletes; the others are untouched",
    () =>
      Effect.gen(function* () {
        const { store, count, filename } = yield* fileStore
        const damaged = yield* filled(store, { cwd: "/w", id: SessionId.make("damaged-1") }, deadOwner)
        const sound = yield* filled(store, { cwd: "/w", id: SessionId.make("sound-1"), title: "fine" }, deadOwner)
        yield* Effect.scoped(
          Effect.flatMap(Database.open(filename), (db) =>
            db.use(
              Effect.all([
                db.run(
                  "UPDATE sessions SET status = 'paused', created_at = 'yesterday', updated_at = X'00ff', title = X'01' WHERE id = ?",
                  [damaged.id]
                ),
                db.run(
                  "UPDATE runs SET status = 'sleeping', usage = '{not json', created_at = 'x' WHERE session_id = ?",
                  [damaged.id]
                )
              ])
            )
          )
        )
        const listed = yield* store.sessionSummaries({ parentId: null })
        assert.deepStrictEqual(
          listed.map((s) => [s.id, s.status]).sort(),
          [
            [damaged.id, "interrupted"],
            [sound.id, "queued"]
          ].sort()
        )
        const read = yield* store.session(damaged.id)
        assert.strictEqual(read.title, undefined)
        assert.strictEqual(read.createdAt, 0)
        const [run] = yield* store.runs!(damaged.id)
        assert.strictEqual(run!.status, "interrupted")
        assert.strictEqual(run!.usage, undefined)
        assert.deepStrictEqual(
          (yield* store.sessionsByIdPrefix("damaged", 5)).map((s) => s.id),
          [damaged.id]
        )
        assert.deepStrictEqual(yield* store.deleteSessions([damaged.id]), { deleted: [damaged.id] })
        assert.strictEqual(yield* count("sessions"), 1)
        assert.strictEqual((yield* store.session(sound.id)).title, "fine")
      })
  )
})
