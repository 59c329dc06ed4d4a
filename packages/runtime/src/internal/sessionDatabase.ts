// The session database's connection: opening checks, pragmas, error mapping and transactions.
import { constants as fsConstants } from "node:fs"
import { access, open as openFile, stat, statfs } from "node:fs/promises"
import { dirname } from "node:path"
import { pathToFileURL } from "node:url"
import { StoreError } from "@alisio/domain/Errors"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { makeFolders } from "../Folders.js"
import { errnoCode, errnoReason, errorDetail } from "./errno.js"
import { PRIVATE_FILE, PRIVATE_FOLDER, tightenNow } from "./privateFiles.js"
import { loadSqliteDriver } from "./sqliteDriver.js"

/** Runs one SQL statement; the rows for statements that return rows, `[]` otherwise. */
export type Run = (sql: string, params?: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<unknown>, StoreError>

export interface Database {
  readonly filename: string
  /** The statement runner; call it only inside `use` or `transaction`, which own the connection. */
  readonly run: Run
  /** Runs `body` with the connection to itself; a single statement is its own transaction. */
  readonly use: <A, E, R>(body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Runs `body` as one write transaction (`BEGIN IMMEDIATE`), rolled back on failure or interruption. */
  readonly transaction: <A, E, R>(body: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
}

export const MEMORY = ":memory:"

/**
 * How long one statement waits inside SQLite for another connection's lock: not at all.
 * better-sqlite3 is synchronous, so that wait would block the event loop (timers, watchdogs,
 * Ctrl-C), and under load even SQLite's 1 ms sleeps overshoot to tens of ms. A busy statement
 * fails at once and is attempted again after a wait on the Effect clock (`busyRetries`).
 */
export const BUSY_TIMEOUT_MS = 0

/** How long a call waits in all for a database another process keeps locked before failing as `busy`. */
export const BUSY_WAIT_MS = 10_000

const isBusy = (error: StoreError) => error.reason === "busy"

/** Between attempts: 5 ms doubling up to 100 ms, jittered so two waiting processes do not retry in step. */
const busyRetries = Schedule.exponential(Duration.millis(5)).pipe(
  Schedule.union(Schedule.spaced(Duration.millis(100))),
  Schedule.jittered,
  Schedule.upTo(Duration.millis(BUSY_WAIT_MS)),
  Schedule.whileInput(isBusy)
)

const SQLITE_HEADER = "SQLite format 3\u0000"

const describe = (filename: string): string => (filename === MEMORY ? "the in-memory session database" : filename)

const sqliteCode = (error: unknown): string | undefined => {
  for (let value: unknown = error, depth = 0; depth < 3 && typeof value === "object" && value !== null; depth++) {
    const code = (value as { readonly code?: unknown }).code
    if (typeof code === "string") return code
    value = (value as { readonly cause?: unknown }).cause
  }
  return undefined
}

const detailOf = (error: unknown): string => {
  const cause = typeof error === "object" && error !== null && "cause" in error ? error.cause : error
  return cause instanceof Error ? cause.message : String(cause)
}

/** What the person can do about `reason`, for the message. */
const remedy = {
  not_a_database:
    "Move the file aside (Alisio then starts a new database there) or point Alisio at another state directory.",
  newer_version: "Update Alisio, or point it at another state directory; the file was left as it was.",
  read_only: "Make the file and its folder writable, or point Alisio at another state directory.",
  disk_full: "Free some disk space and try again; nothing was half-written.",
  corrupt: "Restore the file from a backup, or move it aside so Alisio starts a new database.",
  not_found: "",
  busy: "Let the other Alisio process finish (or stop it), then try again.",
  io: "Check the file and its folder, then try again."
} as const

export const storeError = (filename: string, reason: StoreError["reason"], what: string): StoreError =>
  new StoreError({
    reason,
    message: `${what}${remedy[reason] === "" ? "" : ` ${remedy[reason]}`}`,
    ...(filename === MEMORY ? {} : { path: filename })
  })

const isWritable = (path: string): Effect.Effect<boolean> =>
  Effect.promise(() =>
    access(path, fsConstants.W_OK).then(
      () => true,
      () => false
    )
  )

/** Turns a SQLite failure into a `StoreError` whose message names the file and what to do. */
export const fromSqlite = (filename: string, error: unknown): Effect.Effect<StoreError> => {
  const code = sqliteCode(error) ?? ""
  const file = describe(filename)
  const detail = detailOf(error)
  if (code === "SQLITE_NOTADB") {
    return Effect.succeed(storeError(filename, "not_a_database", `${file} is not a SQLite database.`))
  }
  if (code.startsWith("SQLITE_CORRUPT")) {
    return Effect.succeed(storeError(filename, "corrupt", `${file} is damaged (${detail}).`))
  }
  if (code === "SQLITE_FULL") {
    return Effect.succeed(storeError(filename, "disk_full", `Cannot write ${file}: the disk is full.`))
  }
  if (code.startsWith("SQLITE_READONLY") || code === "SQLITE_PERM" || code === "SQLITE_AUTH") {
    return Effect.succeed(storeError(filename, "read_only", `Cannot write ${file}: it or its folder is read-only.`))
  }
  if (code.startsWith("SQLITE_CANTOPEN")) {
    const folder = filename === MEMORY ? filename : dirname(filename)
    return Effect.map(isWritable(folder), (writable) =>
      writable
        ? storeError(filename, "io", `Cannot open ${file} (${detail}).`)
        : storeError(filename, "read_only", `Cannot write ${file}: its folder ${folder} is read-only.`)
    )
  }
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return Effect.succeed(
      storeError(filename, "busy", `${file} stayed locked by another process for more than ${BUSY_WAIT_MS / 1000} s.`)
    )
  }
  if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") {
    return Effect.succeed(storeError(filename, "not_found", `A write to ${file} names a session that does not exist.`))
  }
  // A full disk is not always SQLITE_FULL: the shared-memory file of WAL mode, created on open,
  // fails to grow with a plain I/O error, so every command failed as "disk I/O error".
  if (code.startsWith("SQLITE_IOERR") && filename !== MEMORY) {
    return Effect.map(diskIsFull(dirname(filename)), (full) =>
      full
        ? storeError(filename, "disk_full", `Cannot write ${file}: the disk is full.`)
        : storeError(filename, "io", `Cannot use ${file} (${detail}).`)
    )
  }
  return Effect.succeed(storeError(filename, "io", `Cannot use ${file} (${detail}).`))
}

/** Whether the file system of `folder` has (next to) no room left for this user. */
const diskIsFull = (folder: string): Effect.Effect<boolean> =>
  Effect.promise(() =>
    statfs(folder).then(
      (stats) => stats.bavail * stats.bsize < 64 * 1024,
      () => false
    )
  )

/** The files SQLite keeps for a database in WAL mode. */
export const databaseFiles = (filename: string): ReadonlyArray<string> => [
  filename,
  `${filename}-wal`,
  `${filename}-shm`
]

/** Creates the database's folder 0700, or narrows it to that (ST-6). */
const prepareFolder = (filename: string): Effect.Effect<void, StoreError> =>
  Effect.tryPromise({
    try: async () => {
      const folder = dirname(filename)
      await makeFolders(folder, PRIVATE_FOLDER)
      await tightenNow(folder)
    },
    catch: (error) =>
      storeError(filename, errnoReason(error), `Cannot create the folder of ${filename} (${errorDetail(error)}).`)
  })

/**
 * Creates the database file 0600 before SQLite does (SQLite gives `-wal` and `-shm` the mode of
 * the database file), and narrows the three files if an older Alisio or a loose umask left them wider.
 */
const prepareFiles = (filename: string): Effect.Effect<void, StoreError> =>
  Effect.tryPromise({
    try: async () => {
      await openFile(filename, "wx", PRIVATE_FILE).then(
        (handle) => handle.close(),
        (error: unknown) => {
          if (errnoCode(error) !== "EEXIST") throw error
        }
      )
      for (const file of databaseFiles(filename)) await tightenNow(file)
    },
    catch: (error) => storeError(filename, errnoReason(error), `Cannot create ${filename} (${errorDetail(error)}).`)
  })

/** Refuses a file that is not empty and does not start like a SQLite database, before SQLite touches it. */
const checkHeader = (filename: string): Effect.Effect<void, StoreError> =>
  Effect.tryPromise({
    try: async () => {
      const handle = await openFile(filename, "r").catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return undefined
        throw error
      })
      if (handle === undefined) return true
      try {
        const { buffer, bytesRead } = await handle.read(Buffer.alloc(16), 0, 16, 0)
        return bytesRead === 0 || buffer.toString("latin1", 0, bytesRead) === SQLITE_HEADER
      } finally {
        await handle.close()
      }
    },
    catch: (error) =>
      errnoCode(error) === "EISDIR"
        ? storeError(filename, "not_a_database", `${filename} is a folder, not a SQLite database file.`)
        : storeError(filename, errnoReason(error), `Cannot read ${filename} (${errorDetail(error)}).`)
  }).pipe(
    Effect.filterOrFail(
      (isSqlite) => isSqlite,
      () =>
        storeError(
          filename,
          "not_a_database",
          `${filename} is not a SQLite database, so Alisio cannot keep sessions in it.`
        )
    ),
    Effect.asVoid
  )

/** Whether the write-ahead log of `filename` holds nothing: absent or empty. */
const walIsEmpty = (filename: string): Effect.Effect<boolean> =>
  Effect.promise(() =>
    stat(`${filename}-wal`).then(
      (stats) => stats.size === 0,
      (error: unknown) => errnoCode(error) === "ENOENT"
    )
  )

const connect = (filename: string, options: { readonly immutable?: boolean } = {}) =>
  SqliteClient.make(
    options.immutable === true
      ? { filename: `${pathToFileURL(filename).href}?immutable=1`, readonly: true, disableWAL: true }
      : { filename }
  ).pipe(
    Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
    // better-sqlite3 throws while opening (a damaged file, a read-only folder): convert it here.
    Effect.catchAllDefect((defect) =>
      sqliteCode(defect) === undefined ? Effect.die(defect) : Effect.flatMap(fromSqlite(filename, defect), Effect.fail)
    ),
    // Opening turns the file to WAL, which needs it alone. While another connection writes in the
    // rollback journal (two processes creating the database at once, or an older SQLite user),
    // SQLite sees a deadlock and refuses at once instead of waiting: so the open waits here.
    Effect.retry(busyRetries)
  )

export interface OpenOptions {
  /**
   * The caller only reads. A database SQLite cannot open for writing because its folder is
   * read-only (a WAL database needs its `-shm` file there) is then opened read-only as it is on
   * disk (`immutable`), provided its write-ahead log holds nothing it would miss. Every write
   * then fails as `read_only`.
   */
  readonly readOnlyFallback?: boolean
}

/**
 * Opens the database for the life of the scope. The store is the client's only user: it
 * reserves the single connection once and serialises its own work with a semaphore, because
 * going through the statement API costs a scope per statement — more than the insert itself.
 */
export const open = (filename: string, options: OpenOptions = {}): Effect.Effect<Database, StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    if (filename !== MEMORY) {
      yield* prepareFolder(filename)
      yield* checkHeader(filename)
      yield* prepareFiles(filename)
    }
    yield* Effect.sync(loadSqliteDriver)
    const client = yield* connect(filename).pipe(
      Effect.catchIf(
        (error) => options.readOnlyFallback === true && filename !== MEMORY && error.reason === "read_only",
        (error) =>
          Effect.flatMap(walIsEmpty(filename), (empty) =>
            empty ? Effect.orElse(connect(filename, { immutable: true }), () => Effect.fail(error)) : Effect.fail(error)
          )
      )
    )
    const connection = yield* Effect.orDie(client.reserve)
    const mutex = yield* Effect.makeSemaphore(1)
    const attempt: Run = (sql, params = []) =>
      Effect.catchAll(connection.execute(sql, params, undefined), (error) => Effect.flip(fromSqlite(filename, error)))
    /**
     * Attempts `statement` again after a busy failure until `busyRetries` gives up. Only the waits
     * go through `wait`: `begin` runs its attempts uninterruptibly and restores interruption there.
     */
    const retryBusy = <A>(
      statement: Effect.Effect<A, StoreError>,
      first: StoreError,
      wait: <B, E>(effect: Effect.Effect<B, E>) => Effect.Effect<B, E> = (effect) => effect
    ) =>
      Effect.gen(function* () {
        const driver = yield* Schedule.driver(busyRetries)
        let error = first
        for (;;) {
          if (Either.isLeft(yield* Effect.either(wait(driver.next(error))))) return yield* Effect.fail(error)
          const result = yield* Effect.either(statement)
          if (Either.isRight(result)) return result.right
          error = result.left
        }
      })
    // A busy database is waited for between attempts on the Effect clock, interruptibly; the free
    // path costs nothing more than the attempt.
    const run: Run = (sql, params) =>
      Effect.catchIf(attempt(sql, params), isBusy, (error) => retryBusy(attempt(sql, params), error))

    yield* run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
    yield* run("PRAGMA foreign_keys = ON")
    yield* run("PRAGMA synchronous = NORMAL")

    const rollback = Effect.ignore(attempt("ROLLBACK"))
    /**
     * `BEGIN IMMEDIATE`, retried while another connection writes. Each attempt is uninterruptible
     * (a transaction begun is always seen, so it is always ended); only the waits between attempts
     * are `restore`d, so interrupting a waiting fiber leaves no transaction open.
     */
    const begin = (restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
      Effect.catchIf(attempt("BEGIN IMMEDIATE"), isBusy, (error) =>
        retryBusy(attempt("BEGIN IMMEDIATE"), error, restore)
      )
    const transaction: Database["transaction"] = (body) =>
      mutex.withPermits(1)(
        Effect.uninterruptibleMask((restore) =>
          Effect.gen(function* () {
            yield* begin(restore)
            const exit = yield* Effect.exit(restore(body))
            if (Exit.isFailure(exit)) {
              yield* rollback
              return yield* exit
            }
            const committed = yield* Effect.exit(attempt("COMMIT"))
            if (Exit.isFailure(committed)) {
              yield* rollback
              return yield* Effect.failCause(committed.cause)
            }
            return exit.value
          })
        )
      )

    return {
      filename,
      run,
      use: mutex.withPermits(1),
      transaction
    }
  })
