// PL-4: the SQLite files plugins keep under their state folder, behind the domain's `SqlDatabase`.
import { chmod } from "node:fs/promises"
import type { PluginError } from "@alisio/domain/Plugin"
import { type SqlDatabase, SqlDatabaseError, type SqlStatement, type SqlValue } from "@alisio/domain/SqlDatabase"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import type * as Scope from "effect/Scope"
import { loadSqliteDriver } from "./internal/sqliteDriver.js"
import { prepareDatabasePath } from "./internal/storagePath.js"

/**
 * How long a statement waits for another process's write lock before failing. Short on purpose:
 * the wait blocks this process's event loop (the driver is synchronous).
 */
export const BUSY_TIMEOUT_MS = 1000

export interface OpenSqliteOptions {
  /** The plugin's state folder; created 0700 when missing. */
  readonly folder: string
  /** The file, relative to `folder`. */
  readonly path: string
  /** Named in the errors. */
  readonly pluginId: string
}

interface DriverStatement {
  run(...params: ReadonlyArray<SqlValue>): { changes: number; lastInsertRowid: number | bigint }
  get(...params: ReadonlyArray<SqlValue>): unknown
  all(...params: ReadonlyArray<SqlValue>): Array<unknown>
}
interface DriverDatabase {
  readonly inTransaction: boolean
  pragma(source: string): unknown
  exec(source: string): unknown
  prepare(source: string): DriverStatement
  close(): unknown
}
type Driver = new (filename: string, options?: { readonly timeout?: number }) => DriverDatabase

let driver: Driver | undefined
// Loaded on first use: start-up without plugin storage never pays for the native module.
const loadDriver = (): Driver => {
  driver ??= loadSqliteDriver() as Driver
  return driver
}

const sqlError = (error: unknown): SqlDatabaseError =>
  new SqlDatabaseError({ message: error instanceof Error ? error.message : String(error) })

const attempt = <A>(run: () => A): Effect.Effect<A, SqlDatabaseError> => Effect.try({ try: run, catch: sqlError })

// Closing twice is harmless; a close refused mid-iteration leaves the file to the process exit.
const closeQuietly = (db: DriverDatabase): Effect.Effect<void> =>
  Effect.sync(() => {
    try {
      db.close()
    } catch {}
  })

/**
 * Opens `<folder>/<path>` for the life of the scope: file 0600 (its -wal and -shm too), parent
 * folders 0700, WAL, foreign keys on, a short busy timeout, FTS5 available.
 *
 * `transaction(effect)` begins `IMMEDIATE`, commits when `effect` succeeds and rolls back when it
 * fails, dies or is interrupted. Nested inside a transaction (same fiber, or a fiber it forked),
 * it becomes a savepoint: an inner failure undoes only the inner part. While a transaction is
 * open, statements from other fibers wait for it to end, so they are never swept into it.
 */
export const openSqlite = (
  options: OpenSqliteOptions
): Effect.Effect<SqlDatabase, SqlDatabaseError | PluginError, Scope.Scope> =>
  Effect.gen(function* () {
    const file = yield* prepareDatabasePath(options.pluginId, options.folder, options.path)
    const db = yield* Effect.acquireRelease(
      attempt(() => {
        const opened = new (loadDriver())(file, { timeout: BUSY_TIMEOUT_MS })
        try {
          opened.pragma("journal_mode = WAL")
          opened.pragma("synchronous = NORMAL")
          opened.pragma("foreign_keys = ON")
        } catch (error) {
          opened.close()
          throw error
        }
        return opened
      }),
      closeQuietly
    )
    // SQLite copies the database file's mode to them; this only repairs files left by an older opener.
    yield* Effect.promise(() =>
      Promise.all([`${file}-wal`, `${file}-shm`].map((companion) => chmod(companion, 0o600).catch(() => undefined)))
    )

    const lock = yield* Effect.makeSemaphore(1)
    const depth = yield* FiberRef.make(0)

    // The fast path: with no transaction open, a statement is one synchronous call, atomic for fibers.
    const guarded = <A>(run: () => A): Effect.Effect<A, SqlDatabaseError> =>
      Effect.suspend(() =>
        db.inTransaction
          ? Effect.flatMap(FiberRef.get(depth), (inside) =>
              inside > 0 ? attempt(run) : lock.withPermits(1)(attempt(run))
            )
          : attempt(run)
      )

    const prepare = (sql: string): Effect.Effect<SqlStatement, SqlDatabaseError> =>
      Effect.map(
        guarded(() => db.prepare(sql)),
        (statement) => ({
          run: (...params) => guarded(() => statement.run(...params)),
          get: (...params) => guarded(() => statement.get(...params)),
          all: (...params) => guarded(() => statement.all(...params))
        })
      )

    let savepoints = 0
    const transaction: SqlDatabase["transaction"] = (body) =>
      Effect.flatMap(FiberRef.get(depth), (level) => {
        const nested = level > 0
        const name = nested ? `alisio_sp_${++savepoints}` : ""
        const [begin, commit, rollback] = nested
          ? [`SAVEPOINT ${name}`, `RELEASE ${name}`, `ROLLBACK TO ${name}; RELEASE ${name}`]
          : ["BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"]
        const undo = Effect.ignore(attempt(() => db.exec(rollback)))
        const run = Effect.uninterruptibleMask((restore) =>
          Effect.gen(function* () {
            yield* attempt(() => db.exec(begin))
            const exit = yield* Effect.exit(restore(Effect.locally(body, depth, level + 1)))
            if (Exit.isFailure(exit)) {
              yield* undo
              return yield* exit
            }
            const committed = yield* Effect.exit(attempt(() => db.exec(commit)))
            if (Exit.isFailure(committed)) {
              yield* undo
              return yield* Effect.failCause(committed.cause)
            }
            return exit.value
          })
        )
        return nested ? run : lock.withPermits(1)(run)
      })

    return {
      exec: (sql) => Effect.asVoid(guarded(() => db.exec(sql))),
      prepare,
      transaction,
      close: closeQuietly(db)
    } satisfies SqlDatabase
  })
