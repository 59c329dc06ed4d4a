// The database file: its folder, WAL mode and modes (ST-6), and the files or disks it refuses (ST-1).

import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { SessionId } from "@alisio/domain/Ids"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Database from "../src/internal/sessionDatabase.js"
import * as SessionStore from "../src/SessionStore.js"
import { tempDir } from "./fixtures/storeTesting.js"
import { event, rawQuery, user } from "./helpers/sessionStore.js"

describe("SessionStore", () => {
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

  it.scoped("RT-1 on this Node (20 or later), the store's SQLite through @effect/sql-sqlite-node has FTS5", () =>
    Effect.gen(function* () {
      assert.isAtLeast(Number(process.versions.node.split(".")[0]), 20)
      const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
        dependencies: Record<string, string>
      }
      assert.property(manifest.dependencies, "@effect/sql-sqlite-node")
      const db = yield* Database.open(join(yield* tempDir, "alisio.db"))
      const query = (sql: string, params?: ReadonlyArray<unknown>) => db.use(db.run(sql, params))
      assert.deepStrictEqual(yield* query("SELECT sqlite_compileoption_used('ENABLE_FTS5') AS fts5"), [{ fts5: 1 }])
      yield* query("CREATE VIRTUAL TABLE notes USING fts5(title, body)")
      for (const [title, body] of [
        ["parsing", "the config parser reads yaml files"],
        ["yaml yaml", "yaml everywhere: yaml config, yaml tests"],
        ["unrelated", "nothing to see here"]
      ]) {
        yield* query("INSERT INTO notes (title, body) VALUES (?, ?)", [title, body])
      }
      const rows = (yield* query("SELECT title, bm25(notes) AS rank FROM notes WHERE notes MATCH ? ORDER BY rank", [
        '"yaml"'
      ])) as ReadonlyArray<{ title: string; rank: number }>
      assert.deepStrictEqual(
        rows.map((row) => row.title),
        ["yaml yaml", "parsing"]
      )
      assert.isBelow(rows[0]!.rank, rows[1]!.rank)
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

  // A real full disk needs a small file system of its own: a tmpfs, which only root may mount.
  const tmpfs = (dir: string): boolean => {
    if (process.platform !== "linux" || process.getuid?.() !== 0) return false
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir], { stdio: "ignore" })
      return true
    } catch {
      return false
    }
  }

  it.scoped("ST-1 opening a database on a full disk says the disk is full, not `disk I/O error`", () =>
    Effect.gen(function* () {
      const dir = join(yield* tempDir, "small")
      mkdirSync(dir)
      if (!tmpfs(dir)) return
      yield* Effect.addFinalizer(() => Effect.sync(() => execFileSync("umount", [dir])))
      const filename = join(dir, "alisio.db")
      yield* Effect.scoped(
        Effect.flatMap(SessionStore.make({ filename }), (store) => store.createSession({ cwd: "/w" }))
      )
      // Fills what is left; WAL mode's shared-memory file, made again on open, then cannot grow.
      try {
        writeFileSync(join(dir, "filler"), Buffer.alloc(2 * 1024 * 1024))
      } catch {
        // ENOSPC: the disk is full, as wanted.
      }
      const error = yield* Effect.flip(Effect.scoped(SessionStore.make({ filename })))
      assert.strictEqual(error.reason, "disk_full", error.message)
      assert.include(error.message, "Free some disk space")
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

  it.scoped("ST-1 a folder where the database file goes is refused in one line naming the remedy", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      mkdirSync(filename)
      const error = yield* Effect.flip(Effect.scoped(SessionStore.make({ filename })))
      assert.strictEqual(error.reason, "not_a_database")
      assert.strictEqual(
        error.message,
        `${filename} is a folder, not a SQLite database file. Move the file aside (Alisio then starts a new database there) or point Alisio at another state directory.`
      )
    })
  )

  it.scoped(
    "ST-1 a reader (readOnlyFallback) reads a database on a read-only folder, which WAL mode needs for its -shm file; writes still fail as read_only",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const filename = join(dir, "alisio.db")
        const made = yield* Effect.scoped(
          Effect.gen(function* () {
            const store = yield* SessionStore.make({ filename })
            const session = yield* store.createSession({ cwd: "/w", title: "kept" })
            yield* store.appendMessages(session.id, [user("hello")])
            return session
          })
        )
        // Closed cleanly: SQLite removed the -wal and -shm files, and cannot make them again here.
        assert.isFalse(existsSync(`${filename}-shm`))
        yield* makeReadOnly(dir, filename)
        yield* Effect.scoped(
          Effect.gen(function* () {
            const store = yield* SessionStore.make({ filename, readOnlyFallback: true })
            assert.deepStrictEqual(
              (yield* store.sessions()).map((s) => [s.id, s.title]),
              [[made.id, "kept"]]
            )
            assert.strictEqual((yield* store.messages(made.id)).length, 1)
            const refused = yield* Effect.flip(store.createSession({ cwd: "/w" }))
            assert.strictEqual(refused.reason, "read_only")
            assert.include(refused.message, filename)
          })
        )
        // Without it (a run, which writes) the open fails as before, naming the remedy.
        const error = yield* Effect.flip(Effect.scoped(SessionStore.make({ filename })))
        assert.strictEqual(error.reason, "read_only")
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
