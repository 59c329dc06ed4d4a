// The session lock, across processes and inside one, and waits on another process's write lock (ST-1).

import { join } from "node:path"
import { SessionLockedError, StoreError } from "@alisio/domain/Errors"
import { SessionId } from "@alisio/domain/Ids"
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
import { loadSqliteDriver } from "../src/internal/sqliteDriver.js"
import { currentOwner } from "../src/ProcessOwner.js"
import { Runner } from "../src/Runner.js"
import * as SessionStore from "../src/SessionStore.js"
import { spawnStoreChild, spawnWriteLockHolder, tempDir } from "./fixtures/storeTesting.js"
import { baseOptions, runnerLayer } from "./helpers/harness.js"
import { rawQuery, user } from "./helpers/sessionStore.js"

describe("SessionStore", () => {
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
    "ST-1 opening waits while another connection writes the database in its rollback journal (two processes creating it at once)",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        // What the first of two processes starting together holds while the second opens: a write
        // transaction before the file is in WAL mode. SQLite refuses the second's switch to WAL at
        // once (a deadlock to it), without waiting.
        const Sqlite = loadSqliteDriver() as new (file: string) => { exec: (sql: string) => void; close: () => void }
        const first = new Sqlite(filename)
        first.exec("BEGIN IMMEDIATE")
        yield* Effect.acquireRelease(
          Effect.sync(() =>
            setTimeout(() => {
              first.exec("COMMIT")
              first.close()
            }, 300)
          ),
          (timer) => Effect.sync(() => clearTimeout(timer))
        )
        const store = yield* SessionStore.make({ filename })
        const session = yield* store.createSession({ cwd: "/w" })
        assert.strictEqual((yield* store.session(session.id)).cwd, "/w")
        assert.deepStrictEqual(yield* rawQuery(filename, "PRAGMA journal_mode"), [{ journal_mode: "wal" }])
      }),
    { timeout: 30_000 }
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
})
