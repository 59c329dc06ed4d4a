import { existsSync, lstatSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { SqlDatabase } from "@alisio/domain/SqlDatabase"
import { openSqlite } from "@alisio/runtime/PluginStorage"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import { tempDir } from "./tools/context.js"

const mode = (file: string) => statSync(file).mode & 0o777

const open = (folder: string, path = "plugin.db") => openSqlite({ folder, path, pluginId: "demo" })

const withItems = (db: SqlDatabase) =>
  db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, data BLOB)")

const names = (db: SqlDatabase) =>
  Effect.flatMap(db.prepare("SELECT name FROM items ORDER BY id"), (statement) =>
    Effect.map(statement.all(), (rows) => rows.map((row) => (row as { name: string }).name))
  )

const insertName = (db: SqlDatabase, name: string) =>
  Effect.flatMap(db.prepare("INSERT INTO items (name) VALUES (?)"), (statement) => statement.run(name))

describe("PluginStorage", () => {
  it.scoped("PL-4 round trip: rows written through the port are read back, also after reopening", () =>
    Effect.gen(function* () {
      const folder = join(yield* tempDir, "state")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const db = yield* open(folder)
          yield* withItems(db)
          const insert = yield* db.prepare("INSERT INTO items (name, data) VALUES (?, ?)")
          const first = yield* insert.run("alpha", new Uint8Array([1, 2, 3]))
          assert.deepStrictEqual(first, { changes: 1, lastInsertRowid: 1 })
          yield* insert.run("beta", null)
          const byName = yield* db.prepare("SELECT id, name FROM items WHERE name = ?")
          assert.deepStrictEqual(yield* byName.get("beta"), { id: 2, name: "beta" })
          assert.isUndefined(yield* byName.get("gamma"))
        })
      )
      const db = yield* open(folder)
      assert.deepStrictEqual(yield* names(db), ["alpha", "beta"])
      const blob = (yield* Effect.flatMap(db.prepare("SELECT data FROM items WHERE id = 1"), (s) => s.get())) as {
        data: Uint8Array
      }
      assert.deepStrictEqual([...blob.data], [1, 2, 3])
    })
  )

  it.scoped("PL-4 FTS5 is available: MATCH ranks rows by bm25()", () =>
    Effect.gen(function* () {
      const db = yield* open(yield* tempDir)
      yield* db.exec("CREATE VIRTUAL TABLE notes USING fts5(title, body)")
      const insert = yield* db.prepare("INSERT INTO notes (title, body) VALUES (?, ?)")
      yield* insert.run("parsing", "the config parser reads yaml files")
      yield* insert.run("yaml yaml", "yaml everywhere: yaml config, yaml tests, yaml yaml")
      yield* insert.run("unrelated", "nothing to see here")
      const search = yield* db.prepare("SELECT title, bm25(notes) AS rank FROM notes WHERE notes MATCH ? ORDER BY rank")
      const rows = (yield* search.all('"yaml"')) as ReadonlyArray<{ title: string; rank: number }>
      assert.deepStrictEqual(
        rows.map((row) => row.title),
        ["yaml yaml", "parsing"]
      )
      assert.isBelow(rows[0]!.rank, rows[1]!.rank)
    })
  )

  it.scoped("PL-4 the file and its -wal/-shm are 0600, new folders 0700; WAL, foreign keys and a busy timeout", () =>
    Effect.gen(function* () {
      const folder = join(yield* tempDir, "state")
      const db = yield* open(folder, "nested/deeper/plugin.db")
      yield* withItems(db)
      yield* insertName(db, "alpha")
      const file = join(folder, "nested", "deeper", "plugin.db")
      assert.strictEqual(mode(folder), 0o700)
      assert.strictEqual(mode(join(folder, "nested")), 0o700)
      assert.strictEqual(mode(join(folder, "nested", "deeper")), 0o700)
      assert.strictEqual(mode(file), 0o600)
      assert.isTrue(existsSync(`${file}-wal`))
      assert.strictEqual(mode(`${file}-wal`), 0o600)
      assert.strictEqual(mode(`${file}-shm`), 0o600)
      const pragma = (name: string) => Effect.flatMap(db.prepare(`PRAGMA ${name}`), (s) => s.get())
      assert.deepStrictEqual(yield* pragma("journal_mode"), { journal_mode: "wal" })
      assert.deepStrictEqual(yield* pragma("foreign_keys"), { foreign_keys: 1 })
      assert.deepStrictEqual(yield* pragma("busy_timeout"), { timeout: 1000 })
    })
  )

  it.scoped("PL-4 paths escaping the folder are refused with a PluginError and create nothing outside", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const folder = join(root, "state")
      const outside = join(root, "outside")
      mkdirSync(folder)
      mkdirSync(outside)
      symlinkSync(outside, join(folder, "link-out"))
      symlinkSync(join(outside, "target.db"), join(folder, "file-out.db"))
      symlinkSync(join(outside, "missing.db"), join(folder, "dangling.db"))
      const attempts = [
        "../escape.db",
        "a/../../escape.db",
        "a/../b.db",
        join(outside, "absolute.db"),
        "C:\\absolute.db",
        "",
        "   ",
        "dir/",
        "nul\u0000.db",
        "link-out/escape.db",
        "link-out/deeper/escape.db",
        "file-out.db",
        "dangling.db"
      ]
      for (const path of attempts) {
        const exit = yield* Effect.exit(Effect.scoped(open(folder, path)))
        assert.isTrue(Exit.isFailure(exit), `accepted ${JSON.stringify(path)}`)
        if (Exit.isFailure(exit)) {
          const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
          assert.strictEqual(failure?._tag, "PluginError", `${JSON.stringify(path)}: ${String(exit.cause)}`)
          if (failure?._tag === "PluginError") {
            assert.strictEqual(failure.pluginId, "demo")
            assert.include(failure.message, "storage.sqlite(")
          }
        }
      }
      assert.deepStrictEqual(readdirSync(outside), [])
      assert.deepStrictEqual(readdirSync(root).sort(), ["outside", "state"])
    })
  )

  it.scoped(
    "PL-4 a folder or a link out where the file goes is named with the remedy for the person, not the plugin",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir
        const folder = join(root, "state")
        mkdirSync(join(folder, "memory.db"), { recursive: true })
        writeFileSync(join(root, "elsewhere.db"), "")
        symlinkSync(join(root, "elsewhere.db"), join(folder, "linked.db"))
        for (const [path, why] of [
          ["memory.db", `${join(folder, "memory.db")} is not a file`],
          ["linked.db", `${join(folder, "linked.db")} is a symbolic link leading outside the folder`]
        ] as const) {
          const error = yield* Effect.flip(Effect.scoped(open(folder, path)))
          assert.strictEqual(
            (error as { message: string }).message,
            `storage.sqlite(${JSON.stringify(path)}): ${why}. Move it aside (or remove it), and the file is made there.`
          )
        }
      })
  )

  it.scoped("PL-4 a symbolic link that stays inside the folder is followed", () =>
    Effect.gen(function* () {
      const folder = yield* tempDir
      mkdirSync(join(folder, "real"))
      symlinkSync(join(folder, "real"), join(folder, "alias"))
      const db = yield* open(folder, "alias/plugin.db")
      yield* withItems(db)
      assert.isTrue(lstatSync(join(folder, "real", "plugin.db")).isFile())
    })
  )

  it.scoped("PL-4 SQL errors and a file that is not a database are SqlDatabaseErrors with the driver's message", () =>
    Effect.gen(function* () {
      const folder = yield* tempDir
      const db = yield* open(folder)
      const syntax = yield* Effect.flip(db.exec("SELEKT 1"))
      assert.strictEqual(syntax._tag, "SqlDatabaseError")
      assert.include(syntax.message, "syntax error")
      const reader = yield* Effect.flip(Effect.flatMap(db.prepare("CREATE TABLE t (a)"), (s) => s.get()))
      assert.strictEqual(reader._tag, "SqlDatabaseError")
      writeFileSync(join(folder, "text.db"), "this is not a database, just some text that is long enough")
      const notDb = yield* Effect.flip(Effect.scoped(open(folder, "text.db")))
      assert.strictEqual(notDb._tag, "SqlDatabaseError")
      assert.include(notDb.message, "not a database")
    })
  )

  it.scoped("PL-4 a transaction commits when its effect succeeds", () =>
    Effect.gen(function* () {
      const db = yield* open(yield* tempDir)
      yield* withItems(db)
      const result = yield* db.transaction(
        Effect.zipRight(Effect.all([insertName(db, "a"), insertName(db, "b")]), Effect.succeed("done"))
      )
      assert.strictEqual(result, "done")
      assert.deepStrictEqual(yield* names(db), ["a", "b"])
    })
  )

  it.scoped("PL-4 a transaction rolls back when its effect fails or dies", () =>
    Effect.gen(function* () {
      const db = yield* open(yield* tempDir)
      yield* withItems(db)
      const failed = yield* Effect.flip(db.transaction(Effect.zipRight(insertName(db, "lost"), Effect.fail("nope"))))
      assert.strictEqual(failed, "nope")
      const died = yield* Effect.exit(db.transaction(Effect.zipRight(insertName(db, "lost too"), Effect.die("boom"))))
      assert.isTrue(Exit.isFailure(died))
      const sqlFailure = yield* Effect.flip(db.transaction(Effect.zipRight(insertName(db, "x"), db.exec("SELEKT"))))
      assert.strictEqual(sqlFailure._tag, "SqlDatabaseError")
      assert.deepStrictEqual(yield* names(db), [])
      yield* insertName(db, "after")
      assert.deepStrictEqual(yield* names(db), ["after"])
    })
  )

  it.scoped("PL-4 an interrupted transaction is rolled back", () =>
    Effect.gen(function* () {
      const db = yield* open(yield* tempDir)
      yield* withItems(db)
      const inside = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        db.transaction(
          Effect.zipRight(insertName(db, "lost"), Effect.zipRight(Deferred.succeed(inside, undefined), Effect.never))
        )
      )
      yield* Deferred.await(inside)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(yield* names(db), [])
    })
  )

  it.scoped("PL-4 a nested transaction is a savepoint: its failure undoes only its own part", () =>
    Effect.gen(function* () {
      const db = yield* open(yield* tempDir)
      yield* withItems(db)
      yield* db.transaction(
        Effect.gen(function* () {
          yield* insertName(db, "outer")
          yield* Effect.ignore(db.transaction(Effect.zipRight(insertName(db, "inner lost"), Effect.fail("inner"))))
          yield* db.transaction(insertName(db, "inner kept"))
        })
      )
      assert.deepStrictEqual(yield* names(db), ["outer", "inner kept"])
      yield* Effect.ignore(
        db.transaction(Effect.zipRight(db.transaction(insertName(db, "both lost")), Effect.fail("outer")))
      )
      assert.deepStrictEqual(yield* names(db), ["outer", "inner kept"])
    })
  )

  it.scoped("PL-4 a statement from another fiber waits for an open transaction instead of joining it", () =>
    Effect.gen(function* () {
      const db = yield* open(yield* tempDir)
      yield* withItems(db)
      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const transaction = yield* Effect.fork(
        db.transaction(
          Effect.gen(function* () {
            yield* insertName(db, "rolled back")
            yield* Deferred.succeed(inside, undefined)
            yield* Deferred.await(release)
            return yield* Effect.fail("abandon")
          })
        )
      )
      yield* Deferred.await(inside)
      const outsider = yield* Effect.fork(insertName(db, "outsider"))
      yield* Effect.yieldNow()
      assert.isNull(outsider.unsafePoll(), "the outsider ran inside the open transaction")
      yield* Deferred.succeed(release, undefined)
      yield* Effect.exit(Fiber.join(transaction))
      yield* Fiber.join(outsider)
      assert.deepStrictEqual(yield* names(db), ["outsider"])
    })
  )

  it.effect("PL-4 the database is closed with its scope (and its WAL checkpointed away)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const folder = yield* tempDir
        const scope = yield* Scope.make()
        const db = yield* Scope.extend(open(folder), scope)
        yield* withItems(db)
        yield* insertName(db, "kept")
        assert.isTrue(existsSync(join(folder, "plugin.db-wal")))
        yield* Scope.close(scope, Exit.void)
        const closed = yield* Effect.flip(db.exec("SELECT 1"))
        assert.strictEqual(closed._tag, "SqlDatabaseError")
        assert.include(closed.message, "not open")
        assert.isFalse(existsSync(join(folder, "plugin.db-wal")))
        yield* db.close
      })
    )
  )
})
