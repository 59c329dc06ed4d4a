import { randomUUID } from "node:crypto"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { SessionLockedError, SessionNotFoundError, type StoreError } from "@alisio/domain/Errors"
import { type BlobHash, EventId, type RunId, SessionId, type ToolCallId } from "@alisio/domain/Ids"
import type { Message } from "@alisio/domain/Message"
import {
  decodeRunEvent,
  encodeRunEvent,
  type KnownRunEvent,
  RunStatus,
  ToolCallStatus
} from "@alisio/domain/RunEvent"
import { ToolEffect } from "@alisio/domain/Tool"
import type { Usage } from "@alisio/domain/Usage"
import * as Database from "./internal/sessionDatabase.js"
import { migrate } from "./internal/sessionMigrations.js"
import * as Rows from "./internal/sessionRows.js"
import { currentOwner, isAliveSync, type ProcessOwner } from "./ProcessOwner.js"

/** A session row. Child sessions have a parent and a status of their own. */
export interface Session {
  readonly id: SessionId
  readonly parentId?: SessionId
  readonly title?: string
  readonly cwd: string
  readonly status: RunStatus
  readonly pinned: boolean
  readonly archived: boolean
  /** Epoch milliseconds. */
  readonly createdAt: number
  readonly updatedAt: number
}

export interface NewSession {
  readonly id?: SessionId
  readonly parentId?: SessionId
  readonly title?: string
  readonly cwd: string
  /** Defaults to `queued`. */
  readonly status?: RunStatus
  /** The process answering for the session while it is queued or running; defaults to this one. */
  readonly owner?: ProcessOwner
}

/** A stored message with its position in the session (1-based, increasing). */
export interface StoredMessage {
  readonly sessionId: SessionId
  readonly position: number
  readonly runId?: RunId
  readonly message: Message
  readonly createdAt: number
}

/** A persisted event: the event as published, with its global `eventId`. */
export type StoredEvent = KnownRunEvent & { readonly eventId: EventId }

export type { ProcessOwner } from "./ProcessOwner.js"

export interface RunRecord {
  readonly id: RunId
  readonly sessionId: SessionId
  readonly requestId?: string
  readonly status: RunStatus
  readonly model: string
  readonly provider: string
  readonly usage?: Usage
  readonly error?: string
  readonly owner: ProcessOwner
  readonly createdAt: number
  readonly startedAt?: number
  readonly endedAt?: number
}

export interface BeginRun {
  readonly id: RunId
  readonly sessionId: SessionId
  readonly requestId?: string
  readonly model: string
  readonly provider: string
  readonly owner: ProcessOwner
}

export interface EndRun {
  readonly status: RunStatus
  readonly usage?: Usage
  readonly error?: string
}

/** A journal entry: one tool call (TL-4). */
export interface ToolCallRecord {
  readonly id: ToolCallId
  readonly sessionId: SessionId
  readonly runId?: RunId
  readonly name: string
  readonly effect?: ToolEffect
  readonly arguments: string
  readonly status: ToolCallStatus | "running"
  readonly result?: string
  readonly startedAt?: number
  readonly endedAt?: number
}

/** A page of rows and the cursor of the next one (absent at the end). */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly next?: string
}

export interface PageRequest {
  readonly limit: number
  /** A cursor returned by a previous page; absent for the first page. */
  readonly cursor?: string
  /** `backward` starts at the newest row (the last page first). */
  readonly direction?: "forward" | "backward"
}

/** The metadata row of a blob held by the BlobStore (ST-5). */
export interface BlobMeta {
  readonly hash: BlobHash
  readonly size: number
  readonly mediaType: string
  /** Epoch milliseconds. */
  readonly createdAt: number
}

export type StoreFailure = StoreError

/**
 * The session database (ST-1…ST-4). Every method is one transaction. The run methods are
 * optional (ST-3): the runner records runs only when the store implements them.
 */
export interface SessionStoreService {
  readonly createSession: (input: NewSession) => Effect.Effect<Session, StoreFailure>
  readonly session: (id: SessionId) => Effect.Effect<Session, SessionNotFoundError | StoreFailure>
  readonly sessions: (filter?: {
    readonly cwd?: string
    readonly parentId?: SessionId | null
    readonly limit?: number
  }) => Effect.Effect<ReadonlyArray<Session>, StoreFailure>
  /** The most recently updated root session in `cwd`. */
  readonly latestSession: (cwd: string) => Effect.Effect<Option.Option<Session>, StoreFailure>
  readonly setSessionStatus: (id: SessionId, status: RunStatus) => Effect.Effect<void, StoreFailure>

  /** Appends messages atomically (an assistant message with its tool results is one call). */
  readonly appendMessages: (
    sessionId: SessionId,
    messages: ReadonlyArray<Message>,
    runId?: RunId
  ) => Effect.Effect<ReadonlyArray<StoredMessage>, StoreFailure>
  readonly messages: (sessionId: SessionId) => Effect.Effect<ReadonlyArray<StoredMessage>, StoreFailure>

  /** Commits one event and returns its global `eventId`. */
  readonly appendEvent: (event: KnownRunEvent) => Effect.Effect<EventId, StoreFailure>
  readonly events: (sessionId: SessionId, runId?: RunId) => Effect.Effect<ReadonlyArray<StoredEvent>, StoreFailure>

  readonly toolCallStarted: (
    call: Omit<ToolCallRecord, "status" | "result" | "endedAt">
  ) => Effect.Effect<void, StoreFailure>
  readonly toolCallEnded: (
    id: ToolCallId,
    outcome: { readonly status: ToolCallStatus; readonly result: string; readonly endedAt: number }
  ) => Effect.Effect<void, StoreFailure>
  readonly toolCalls: (sessionId: SessionId) => Effect.Effect<ReadonlyArray<ToolCallRecord>, StoreFailure>

  /** The `blobs` metadata rows; the bytes themselves live in the BlobStore's folder. */
  readonly blobs: {
    /** Records a blob; recording the same hash again keeps the first row. */
    readonly record: (meta: BlobMeta) => Effect.Effect<void, StoreFailure>
    readonly get: (hash: BlobHash) => Effect.Effect<Option.Option<BlobMeta>, StoreFailure>
  }

  readonly pluginState: {
    readonly get: (pluginId: string, key: string) => Effect.Effect<Option.Option<unknown>, StoreFailure>
    readonly set: (pluginId: string, key: string, value: unknown) => Effect.Effect<void, StoreFailure>
  }

  /**
   * Holds the session's write lock for the life of the scope. A lock held by a live process
   * fails with `SessionLockedError`; one left by a dead process is taken over.
   */
  readonly lockSession: (
    id: SessionId,
    owner: ProcessOwner
  ) => Effect.Effect<void, SessionLockedError | StoreFailure, Scope.Scope>

  readonly beginRun?: (input: BeginRun) => Effect.Effect<{ readonly run: RunRecord; readonly existing: boolean }, StoreFailure>
  readonly endRun?: (id: RunId, end: EndRun) => Effect.Effect<void, StoreFailure>
  readonly runByRequest?: (sessionId: SessionId, requestId: string) => Effect.Effect<Option.Option<RunRecord>, StoreFailure>
  readonly runs?: (sessionId: SessionId) => Effect.Effect<ReadonlyArray<RunRecord>, StoreFailure>
  readonly messagesPage?: (sessionId: SessionId, page: PageRequest) => Effect.Effect<Page<StoredMessage>, StoreFailure>
  readonly eventsPage?: (sessionId: SessionId, page: PageRequest) => Effect.Effect<Page<StoredEvent>, StoreFailure>
  /**
   * Marks `interrupted` the runs and child sessions left queued or running by processes that
   * are no longer alive (ST-4, CH-3); returns how many runs and sessions changed.
   */
  readonly interruptRuns?: () => Effect.Effect<{ readonly runs: number; readonly sessions: number }, StoreFailure>
}

export class SessionStore extends Context.Tag("@alisio/runtime/SessionStore")<SessionStore, SessionStoreService>() {}


/** Where the database lives; `":memory:"` keeps it in memory. */
export interface SessionStoreOptions {
  readonly filename: string
}

const MAX_PAGE = 1000
const unfinished = "('queued', 'running')"

/**
 * Opens (creating or migrating) the session database for the life of the scope. A file that is
 * not an Alisio database, or one from a newer Alisio, fails with a `StoreError` and is left as it was.
 */
export const make = (options: SessionStoreOptions): Effect.Effect<SessionStoreService, StoreError, Scope.Scope> =>
  Effect.flatMap(Database.open(options.filename), makeWithDatabase)

/** The store over an opened database: migrates it to the current version first. */
export const makeWithDatabase = (db: Database.Database): Effect.Effect<SessionStoreService, StoreError> =>
  Effect.gen(function* () {
    yield* migrate(db)
    const file = db.filename === Database.MEMORY ? "the in-memory session database" : db.filename
    const { run } = db

    // A read whose row does not decode means the file holds something we never wrote.
    const reading = <A, E, R>(what: string, effect: Effect.Effect<A, E | ParseResult.ParseError, R>) =>
      Effect.catchIf(effect, ParseResult.isParseError, (error) =>
        Effect.fail(Database.storeError(
          db.filename,
          "corrupt",
          `${what} in ${file} is not in the shape Alisio wrote (${ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 300)}).`
        )))
    // Encoding a value of the right type cannot fail; if it does, the caller built it wrongly.
    const writing = <A, E, R>(effect: Effect.Effect<A, E | ParseResult.ParseError, R>) =>
      Effect.catchIf(effect, ParseResult.isParseError, (error) => Effect.die(error))

    // `SqlSchema.single` on a statement that always returns a row.
    const always = <A, E, R>(effect: Effect.Effect<A, E | Cause.NoSuchElementException, R>) =>
      Effect.catchIf(effect, Cause.isNoSuchElementException, (error) => Effect.die(error))

    const notFound = (what: string) => Database.storeError(db.filename, "not_found", `${what} does not exist in ${file}.`)
    const badCursor = (cursor: string) =>
      Database.storeError(db.filename, "not_found", `The page cursor "${cursor}" was not returned by this store.`)

    // Sessions

    const insertSession = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        parent_id: Schema.NullOr(Schema.String),
        title: Schema.NullOr(Schema.String),
        cwd: Schema.String,
        status: RunStatus,
        owner_pid: Schema.Int,
        owner_token: Schema.String,
        owner_host: Schema.NullOr(Schema.String),
        now: Schema.Number
      }),
      execute: (r) =>
        run(
          `INSERT INTO sessions (id, parent_id, title, cwd, status, pinned, archived, owner_pid, owner_token, owner_host, created_at, updated_at)
          VALUES (?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?)`,
          [r.id, r.parent_id, r.title, r.cwd, r.status, r.owner_pid, r.owner_token, r.owner_host, r.now, r.now]
        )
    })
    const findSession = SqlSchema.findOne({
      Request: Schema.String,
      Result: Rows.SessionRow,
      execute: (id) => run(`SELECT ${Rows.sessionColumns} FROM sessions WHERE id = ?`, [id])
    })
    const SessionFilter = Schema.Struct({
      cwd: Schema.optional(Schema.String),
      parentId: Schema.optional(Schema.NullOr(Schema.String)),
      limit: Schema.optional(Schema.Number)
    })
    const findSessions = SqlSchema.findAll({
      Request: SessionFilter,
      Result: Rows.SessionRow,
      execute: (filter) => {
        const where: Array<string> = []
        const params: Array<unknown> = []
        if (filter.cwd !== undefined) {
          where.push("cwd = ?")
          params.push(filter.cwd)
        }
        if (filter.parentId === null) where.push("parent_id IS NULL")
        else if (filter.parentId !== undefined) {
          where.push("parent_id = ?")
          params.push(filter.parentId)
        }
        const limit = filter.limit === undefined ? "" : " LIMIT ?"
        if (filter.limit !== undefined) params.push(Number.isFinite(filter.limit) ? Math.max(0, Math.floor(filter.limit)) : -1)
        return run(
          `SELECT ${Rows.sessionColumns} FROM sessions${where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`}
          ORDER BY updated_at DESC, rowid DESC${limit}`,
          params
        )
      }
    })
    const findLatestSession = SqlSchema.findOne({
      Request: Schema.String,
      Result: Rows.SessionRow,
      execute: (cwd) =>
        run(
          `SELECT ${Rows.sessionColumns} FROM sessions
          WHERE cwd = ? AND parent_id IS NULL AND coalesce(archived, 0) = 0
          ORDER BY updated_at DESC, rowid DESC LIMIT 1`,
          [cwd]
        )
    })
    const updateSessionStatus = SqlSchema.findAll({
      Request: Schema.Struct({
        id: Schema.String,
        status: RunStatus,
        now: Schema.Number,
        owner_pid: Schema.NullOr(Schema.Int),
        owner_token: Schema.NullOr(Schema.String),
        owner_host: Schema.NullOr(Schema.String)
      }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (r) =>
        r.owner_pid === null
          ? run("UPDATE sessions SET status = ?, updated_at = ? WHERE id = ? RETURNING id", [r.status, r.now, r.id])
          : run(
            `UPDATE sessions SET status = ?, updated_at = ?, owner_pid = ?, owner_token = ?, owner_host = ?
            WHERE id = ? RETURNING id`,
            [r.status, r.now, r.owner_pid, r.owner_token, r.owner_host, r.id]
          )
    })

    const createSession = (input: NewSession): Effect.Effect<Session, StoreError> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const id = input.id ?? SessionId.make(randomUUID())
        const status = input.status ?? "queued"
        const owner = input.owner ?? currentOwner
        yield* db.use(writing(insertSession({
          id,
          parent_id: input.parentId ?? null,
          title: input.title ?? null,
          cwd: input.cwd,
          status,
          owner_pid: owner.pid,
          owner_token: owner.token,
          owner_host: owner.host ?? null,
          now
        })))
        return {
          id,
          ...(input.parentId === undefined ? {} : { parentId: input.parentId }),
          ...(input.title === undefined ? {} : { title: input.title }),
          cwd: input.cwd,
          status,
          pinned: false,
          archived: false,
          createdAt: now,
          updatedAt: now
        }
      })

    const session = (id: SessionId): Effect.Effect<Session, SessionNotFoundError | StoreError> =>
      db.use(reading(`Session ${id}`, findSession(id))).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new SessionNotFoundError({ sessionId: id, message: `No session ${id} in ${file}.` })),
          onSome: (row) => Effect.succeed(Rows.toSession(row))
        }))
      )

    const sessions: SessionStoreService["sessions"] = (filter = {}) =>
      Effect.map(db.use(reading("A session", findSessions(filter))), (rows) => rows.map(Rows.toSession))

    const latestSession = (cwd: string) =>
      Effect.map(db.use(reading("A session", findLatestSession(cwd))), Option.map(Rows.toSession))

    const setSessionStatus = (id: SessionId, status: RunStatus): Effect.Effect<void, StoreError> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const owning = status === "queued" || status === "running"
        const updated = yield* db.use(writing(updateSessionStatus({
          id,
          status,
          now,
          owner_pid: owning ? currentOwner.pid : null,
          owner_token: owning ? currentOwner.token : null,
          owner_host: owning ? currentOwner.host ?? null : null
        })))
        if (updated.length === 0) return yield* notFound(`Session ${id}`)
      })

    // Messages

    const lastPosition = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ found: Schema.Int, last: Schema.Int }),
      execute: (id) =>
        run(
          `SELECT (SELECT count(*) FROM sessions WHERE id = ?) AS found,
          coalesce((SELECT max(position) FROM messages WHERE session_id = ?), 0) AS last`,
          [id, id]
        )
    })
    const insertMessage = SqlSchema.void({
      Request: Schema.Struct({
        session_id: Schema.String,
        position: Schema.Int,
        run_id: Schema.NullOr(Schema.String),
        role: Schema.String,
        message: Rows.MessageJson,
        now: Schema.Number
      }),
      execute: (r) =>
        run(
          "INSERT INTO messages (session_id, position, run_id, role, message, created_at) VALUES (?, ?, ?, ?, ?, ?)",
          [r.session_id, r.position, r.run_id, r.role, r.message, r.now]
        )
    })
    const touchSession = (id: string, now: number) => run("UPDATE sessions SET updated_at = ? WHERE id = ?", [now, id])
    const findMessages = SqlSchema.findAll({
      Request: Schema.String,
      Result: Rows.MessageRow,
      execute: (id) => run(`SELECT ${Rows.messageColumns} FROM messages WHERE session_id = ? ORDER BY position`, [id])
    })

    const appendMessages = (sessionId: SessionId, messages: ReadonlyArray<Message>, runId?: RunId) =>
      Effect.gen(function* () {
        if (messages.length === 0) return []
        const now = yield* Clock.currentTimeMillis
        return yield* db.transaction(Effect.gen(function* () {
          const { found, last } = yield* reading(`Session ${sessionId}`, always(lastPosition(sessionId)))
          if (found === 0) return yield* notFound(`Session ${sessionId}`)
          const stored: Array<StoredMessage> = []
          for (const [index, message] of messages.entries()) {
            const position = last + index + 1
            yield* writing(insertMessage({
              session_id: sessionId,
              position,
              run_id: runId ?? null,
              role: message.role,
              message,
              now
            }))
            stored.push({ sessionId, position, ...(runId === undefined ? {} : { runId }), message, createdAt: now })
          }
          yield* touchSession(sessionId, now)
          return stored
        }))
      })

    const messages = (sessionId: SessionId) =>
      Effect.map(db.use(reading("A message", findMessages(sessionId))), (rows) => rows.map(Rows.toStoredMessage))

    // Events

    const insertEvent = SqlSchema.single({
      Request: Schema.Struct({
        session_id: Schema.String,
        run_id: Schema.String,
        type: Schema.String,
        payload: Schema.String,
        now: Schema.Number,
        correlation_id: Schema.NullOr(Schema.String)
      }),
      Result: Schema.Struct({ seq: Schema.Int }),
      execute: (r) =>
        run(
          "INSERT INTO events (session_id, run_id, type, payload, created_at, correlation_id) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq",
          [r.session_id, r.run_id, r.type, r.payload, r.now, r.correlation_id]
        )
    })
    const findEvents = SqlSchema.findAll({
      Request: Schema.Struct({ session_id: Schema.String, run_id: Schema.NullOr(Schema.String) }),
      Result: Rows.EventRow,
      execute: (r) =>
        r.run_id === null
          ? run("SELECT seq, payload FROM events WHERE session_id = ? ORDER BY seq", [r.session_id])
          : run("SELECT seq, payload FROM events WHERE session_id = ? AND run_id = ? ORDER BY seq", [r.session_id, r.run_id])
    })

    const appendEvent = (event: KnownRunEvent): Effect.Effect<EventId, StoreError> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        // The eventId is the row's seq, assigned by this insert; a stale one is not kept.
        const { eventId: _, ...encoded } = encodeRunEvent(event) as { readonly eventId?: unknown }
        const row = yield* db.use(insertEvent({
          session_id: event.sessionId,
          run_id: event.runId,
          type: event.type,
          payload: JSON.stringify(encoded),
          now,
          correlation_id: event.correlationId ?? null
        })).pipe(writing, always)
        return EventId.make(String(row.seq))
      })

    const toStoredEvents = (rows: ReadonlyArray<typeof Rows.EventRow.Type>) =>
      Effect.gen(function* () {
        const events: Array<StoredEvent> = []
        for (const row of rows) {
          const payload = typeof row.payload === "object" && row.payload !== null ? row.payload : {}
          const decoded = decodeRunEvent({ ...payload, eventId: String(row.seq) })
          if (Either.isLeft(decoded)) {
            return yield* reading(`Event ${row.seq}`, Effect.fail(decoded.left))
          }
          // A type this version does not know was written by a newer Alisio: skip it (EV-2).
          if (decoded.right._tag === "Known") events.push(decoded.right.event as StoredEvent)
        }
        return events
      })

    const events = (sessionId: SessionId, runId?: RunId) =>
      db.use(reading("An event", findEvents({ session_id: sessionId, run_id: runId ?? null }))).pipe(
        Effect.flatMap(toStoredEvents)
      )

    // Tool-call journal

    const insertToolCall = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        session_id: Schema.String,
        run_id: Schema.NullOr(Schema.String),
        name: Schema.String,
        effect: Schema.NullOr(ToolEffect),
        arguments: Schema.String,
        started_at: Schema.Number
      }),
      execute: (r) =>
        run(
          `INSERT INTO tool_calls (id, session_id, run_id, name, effect, arguments, status, started_at)
          VALUES (?, ?, ?, ?, ?, ?, 'running', ?)`,
          [r.id, r.session_id, r.run_id, r.name, r.effect, r.arguments, r.started_at]
        )
    })
    const endToolCall = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        status: ToolCallStatus,
        result: Schema.String,
        ended_at: Schema.Number
      }),
      // Call ids come from the model and may repeat; the latest running call with the id is the one ending.
      execute: (r) =>
        run(
          `UPDATE tool_calls SET status = ?, result = ?, ended_at = ?
          WHERE seq = (SELECT seq FROM tool_calls WHERE id = ? AND status = 'running' ORDER BY seq DESC LIMIT 1)`,
          [r.status, r.result, r.ended_at, r.id]
        )
    })
    const findToolCalls = SqlSchema.findAll({
      Request: Schema.String,
      Result: Rows.ToolCallRow,
      execute: (id) => run(`SELECT ${Rows.toolCallColumns} FROM tool_calls WHERE session_id = ? ORDER BY seq`, [id])
    })

    const toolCallStarted: SessionStoreService["toolCallStarted"] = (call) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        yield* db.use(writing(insertToolCall({
          id: call.id,
          session_id: call.sessionId,
          run_id: call.runId ?? null,
          name: call.name,
          effect: call.effect ?? null,
          arguments: call.arguments,
          started_at: call.startedAt ?? now
        })))
      })

    const toolCallEnded: SessionStoreService["toolCallEnded"] = (id, outcome) =>
      db.use(writing(endToolCall({ id, ...outcome, ended_at: outcome.endedAt })))

    const toolCalls = (sessionId: SessionId) =>
      Effect.map(db.use(reading("A tool call", findToolCalls(sessionId))), (rows) => rows.map(Rows.toToolCallRecord))

    // Plugin state

    const findPluginValue = SqlSchema.findOne({
      Request: Schema.Struct({ plugin_id: Schema.String, key: Schema.String }),
      Result: Rows.PluginValueRow,
      execute: (r) => run("SELECT value FROM plugin_state WHERE plugin_id = ? AND key = ?", [r.plugin_id, r.key])
    })

    const pluginState: SessionStoreService["pluginState"] = {
      get: (pluginId, key) =>
        Effect.map(
          db.use(reading(`Plugin ${pluginId}'s state "${key}"`, findPluginValue({ plugin_id: pluginId, key }))),
          Option.map((row) => row.value)
        ),
      set: (pluginId, key, value) =>
        Effect.gen(function* () {
          const json = yield* Effect.try({
            try: () => JSON.stringify(value) as string | undefined,
            catch: (error) =>
              Database.storeError(
                db.filename,
                "io",
                `Plugin ${pluginId}'s state "${key}" cannot be stored as JSON (${error instanceof Error ? error.message : String(error)}).`
              )
          })
          const now = yield* Clock.currentTimeMillis
          // A value with no JSON form (undefined) removes the key.
          yield* db.use(
            json === undefined
              ? run("DELETE FROM plugin_state WHERE plugin_id = ? AND key = ?", [pluginId, key])
              : run(
                `INSERT INTO plugin_state (plugin_id, key, value, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (plugin_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
                [pluginId, key, json, now]
              )
          )
        })
    }

    // Blobs

    const findBlob = SqlSchema.findOne({
      Request: Schema.String,
      Result: Rows.BlobRow,
      execute: (hash) => run("SELECT hash, size, media_type, created_at FROM blobs WHERE hash = ?", [hash])
    })
    const blobs: SessionStoreService["blobs"] = {
      record: (meta) =>
        db.use(run(
          "INSERT INTO blobs (hash, size, media_type, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
          [meta.hash, meta.size, meta.mediaType, meta.createdAt]
        )).pipe(Effect.asVoid),
      get: (hash) => Effect.map(db.use(reading(`Blob ${hash}`, findBlob(hash))), Option.map(Rows.toBlobMeta))
    }

    // Session lock

    const findLock = SqlSchema.findOne({
      Request: Schema.String,
      Result: Rows.LockRow,
      execute: (id) => run("SELECT pid, token, host FROM session_locks WHERE session_id = ?", [id])
    })
    const sameOwner = (a: ProcessOwner, b: ProcessOwner) => a.pid === b.pid && a.token === b.token
    // Locks this store holds, by session and owner: nested holders in one process share the row.
    const held = new Map<string, number>()

    const acquireLock = (id: SessionId, owner: ProcessOwner) =>
      db.transaction(Effect.gen(function* () {
        const holder = yield* reading(`The lock of session ${id}`, findLock(id))
        if (Option.isSome(holder)) {
          const current: ProcessOwner = {
            pid: holder.value.pid,
            token: holder.value.token,
            ...(holder.value.host === null ? {} : { host: holder.value.host })
          }
          if (!sameOwner(current, owner) && isAliveSync(current)) {
            return yield* new SessionLockedError({
              sessionId: id,
              holderPid: current.pid,
              ...(current.host === undefined ? {} : { holderHost: current.host }),
              message: `Session ${id} is in use by another Alisio process (pid ${current.pid}${
                current.host === undefined ? "" : ` on ${current.host}`
              }). Wait for it to finish or stop that process, then try again.`
            })
          }
        }
        const now = yield* Clock.currentTimeMillis
        const sessionExists = yield* run("SELECT 1 AS found FROM sessions WHERE id = ?", [id])
        if (sessionExists.length === 0) return yield* notFound(`Session ${id}`)
        // A lock left by a dead process is simply taken over.
        yield* run(
          `INSERT INTO session_locks (session_id, pid, token, host, acquired_at) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (session_id) DO UPDATE SET
            pid = excluded.pid, token = excluded.token, host = excluded.host, acquired_at = excluded.acquired_at`,
          [id, owner.pid, owner.token, owner.host ?? null, now]
        )
      }))

    const releaseLock = (id: SessionId, owner: ProcessOwner) =>
      db.use(run("DELETE FROM session_locks WHERE session_id = ? AND pid = ? AND token = ?", [id, owner.pid, owner.token]))

    const lockSession = (id: SessionId, owner: ProcessOwner) => {
      const key = `${id}\u0000${owner.pid}\u0000${owner.token}`
      return Effect.acquireRelease(
        Effect.gen(function* () {
          const count = held.get(key) ?? 0
          if (count === 0) yield* acquireLock(id, owner)
          held.set(key, count + 1)
        }),
        () =>
          Effect.gen(function* () {
            const count = (held.get(key) ?? 1) - 1
            if (count > 0) return held.set(key, count)
            held.delete(key)
            yield* Effect.catchAll(releaseLock(id, owner), (error) =>
              Effect.logWarning(`Could not release the lock of session ${id}: ${error.message}`))
          })
      ).pipe(Effect.asVoid)
    }

    // Runs (ST-2, ST-3)

    const findRunByRequest = SqlSchema.findOne({
      Request: Schema.Struct({ session_id: Schema.String, request_id: Schema.String }),
      Result: Rows.RunRow,
      execute: (r) =>
        run(`SELECT ${Rows.runColumns} FROM runs WHERE session_id = ? AND request_id = ?`, [r.session_id, r.request_id])
    })
    const findRun = SqlSchema.findOne({
      Request: Schema.String,
      Result: Rows.RunRow,
      execute: (id) => run(`SELECT ${Rows.runColumns} FROM runs WHERE id = ?`, [id])
    })
    const findRuns = SqlSchema.findAll({
      Request: Schema.String,
      Result: Rows.RunRow,
      execute: (id) => run(`SELECT ${Rows.runColumns} FROM runs WHERE session_id = ? ORDER BY created_at, rowid`, [id])
    })
    const insertRun = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        session_id: Schema.String,
        request_id: Schema.NullOr(Schema.String),
        provider: Schema.String,
        model: Schema.String,
        owner_pid: Schema.Int,
        owner_token: Schema.String,
        owner_host: Schema.NullOr(Schema.String),
        now: Schema.Number
      }),
      execute: (r) =>
        run(
          `INSERT INTO runs (id, session_id, request_id, status, provider, model, owner_pid, owner_token, owner_host, created_at, started_at)
          VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)`,
          [r.id, r.session_id, r.request_id, r.provider, r.model, r.owner_pid, r.owner_token, r.owner_host, r.now, r.now]
        )
    })
    const updateRun = SqlSchema.findAll({
      Request: Schema.Struct({
        id: Schema.String,
        status: RunStatus,
        usage: Schema.NullOr(Rows.UsageJson),
        error: Schema.NullOr(Schema.String),
        now: Schema.Number
      }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (r) =>
        run(
          `UPDATE runs SET status = ?, usage = coalesce(?, usage), error = coalesce(?, error),
            started_at = CASE WHEN ? = 'running' THEN coalesce(started_at, ?) ELSE started_at END,
            ended_at = CASE WHEN ? IN ${unfinished} THEN ended_at ELSE ? END
          WHERE id = ? RETURNING id`,
          [r.status, r.usage, r.error, r.status, r.now, r.status, r.now, r.id]
        )
    })

    const beginRun: NonNullable<SessionStoreService["beginRun"]> = (input) =>
      db.transaction(Effect.gen(function* () {
        const earlier = input.requestId === undefined
          ? yield* reading(`Run ${input.id}`, findRun(input.id))
          : yield* reading(
            `The run for request ${input.requestId}`,
            findRunByRequest({ session_id: input.sessionId, request_id: input.requestId })
          )
        if (Option.isSome(earlier)) return { run: Rows.toRunRecord(earlier.value), existing: true }
        const now = yield* Clock.currentTimeMillis
        yield* writing(insertRun({
          id: input.id,
          session_id: input.sessionId,
          request_id: input.requestId ?? null,
          provider: input.provider,
          model: input.model,
          owner_pid: input.owner.pid,
          owner_token: input.owner.token,
          owner_host: input.owner.host ?? null,
          now
        }))
        const run: RunRecord = {
          id: input.id,
          sessionId: input.sessionId,
          ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
          status: "running",
          provider: input.provider,
          model: input.model,
          owner: input.owner,
          createdAt: now,
          startedAt: now
        }
        return { run, existing: false }
      }))

    const endRun: NonNullable<SessionStoreService["endRun"]> = (id, end) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const updated = yield* db.use(writing(updateRun({
          id,
          status: end.status,
          usage: end.usage ?? null,
          error: end.error ?? null,
          now
        })))
        if (updated.length === 0) return yield* notFound(`Run ${id}`)
      })

    const runByRequest: NonNullable<SessionStoreService["runByRequest"]> = (sessionId, requestId) =>
      Effect.map(
        db.use(reading(`The run for request ${requestId}`, findRunByRequest({ session_id: sessionId, request_id: requestId }))),
        Option.map(Rows.toRunRecord)
      )

    const runs: NonNullable<SessionStoreService["runs"]> = (sessionId) =>
      Effect.map(db.use(reading("A run", findRuns(sessionId))), (rows) => rows.map(Rows.toRunRecord))

    // Pages: keyset pagination on position / seq, so rows appended meanwhile never shift a page.

    const pageBounds = (page: PageRequest) =>
      Effect.gen(function* () {
        const limit = Number.isFinite(page.limit) ? Math.min(MAX_PAGE, Math.max(1, Math.floor(page.limit))) : MAX_PAGE
        const forward = page.direction !== "backward"
        if (page.cursor === undefined) return { limit, forward, after: forward ? 0 : Number.MAX_SAFE_INTEGER }
        if (!/^[0-9]{1,15}$/.test(page.cursor)) return yield* badCursor(page.cursor)
        return { limit, forward, after: Number(page.cursor) }
      })

    const PageQuery = Schema.Struct({ session_id: Schema.String, after: Schema.Number, limit: Schema.Int })
    const messagesForward = SqlSchema.findAll({
      Request: PageQuery,
      Result: Rows.MessageRow,
      execute: (r) =>
        run(
          `SELECT ${Rows.messageColumns} FROM messages WHERE session_id = ? AND position > ? ORDER BY position LIMIT ?`,
          [r.session_id, r.after, r.limit]
        )
    })
    const messagesBackward = SqlSchema.findAll({
      Request: PageQuery,
      Result: Rows.MessageRow,
      execute: (r) =>
        run(
          `SELECT ${Rows.messageColumns} FROM messages WHERE session_id = ? AND position < ? ORDER BY position DESC LIMIT ?`,
          [r.session_id, r.after, r.limit]
        )
    })
    const eventsForward = SqlSchema.findAll({
      Request: PageQuery,
      Result: Rows.EventRow,
      execute: (r) =>
        run("SELECT seq, payload FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?", [
          r.session_id,
          r.after,
          r.limit
        ])
    })
    const eventsBackward = SqlSchema.findAll({
      Request: PageQuery,
      Result: Rows.EventRow,
      execute: (r) =>
        run("SELECT seq, payload FROM events WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?", [
          r.session_id,
          r.after,
          r.limit
        ])
    })

    /** Reads one more row than asked to know whether a next page exists; items come oldest first. */
    const paged = <Row, A>(
      rows: ReadonlyArray<Row>,
      limit: number,
      forward: boolean,
      key: (row: Row) => number,
      items: (rows: ReadonlyArray<Row>) => Effect.Effect<ReadonlyArray<A>, StoreError>
    ): Effect.Effect<Page<A>, StoreError> => {
      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      const next = rows.length > limit && last !== undefined ? String(key(last)) : undefined
      return Effect.map(items(forward ? page : [...page].reverse()), (items) => ({
        items,
        ...(next === undefined ? {} : { next })
      }))
    }

    const messagesPage: NonNullable<SessionStoreService["messagesPage"]> = (sessionId, page) =>
      Effect.gen(function* () {
        const { after, forward, limit } = yield* pageBounds(page)
        const query = forward ? messagesForward : messagesBackward
        const rows = yield* db.use(reading("A message", query({ session_id: sessionId, after, limit: limit + 1 })))
        return yield* paged(rows, limit, forward, (row) => row.position, (rows) => Effect.succeed(rows.map(Rows.toStoredMessage)))
      })

    const eventsPage: NonNullable<SessionStoreService["eventsPage"]> = (sessionId, page) =>
      Effect.gen(function* () {
        const { after, forward, limit } = yield* pageBounds(page)
        const query = forward ? eventsForward : eventsBackward
        const rows = yield* db.use(reading("An event", query({ session_id: sessionId, after, limit: limit + 1 })))
        return yield* paged(rows, limit, forward, (row) => row.seq, toStoredEvents)
      })

    // Reconciliation at start-up (ST-4)

    const findUnfinishedRuns = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Rows.UnfinishedRow,
      execute: () => run(`SELECT id, owner_pid, owner_token, owner_host FROM runs WHERE status IN ${unfinished}`)
    })
    const findUnfinishedChildren = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Rows.UnfinishedRow,
      execute: () =>
        run(
          `SELECT id, owner_pid, owner_token, owner_host FROM sessions
          WHERE status IN ${unfinished} AND parent_id IS NOT NULL`
        )
    })

    const interruptRuns: NonNullable<SessionStoreService["interruptRuns"]> = () =>
      Effect.gen(function* () {
        const [unfinishedRuns, unfinishedChildren] = yield* db.use(Effect.all([
          reading("A run", findUnfinishedRuns(undefined)),
          reading("A session", findUnfinishedChildren(undefined))
        ]))
        const liveness = new Map<string, boolean>()
        // A row without an owner predates owners (v3): nothing can be running it now.
        const ownerIsGone = (row: typeof Rows.UnfinishedRow.Type) => {
          if (row.owner_pid === null || row.owner_token === null) return true
          const owner: ProcessOwner = {
            pid: row.owner_pid,
            token: row.owner_token,
            ...(row.owner_host === null ? {} : { host: row.owner_host })
          }
          const key = `${owner.pid}\u0000${owner.token}\u0000${owner.host ?? ""}`
          let alive = liveness.get(key)
          if (alive === undefined) liveness.set(key, alive = isAliveSync(owner))
          return !alive
        }
        const deadRuns = unfinishedRuns.filter(ownerIsGone)
        const deadChildren = unfinishedChildren.filter(ownerIsGone)
        if (deadRuns.length === 0 && deadChildren.length === 0) return { runs: 0, sessions: 0 }
        const now = yield* Clock.currentTimeMillis
        return yield* db.transaction(Effect.gen(function* () {
          let runCount = 0
          let sessionCount = 0
          // The owner is part of the match, so a row taken over since it was read is left alone.
          for (const row of deadRuns) {
            const changed = yield* run(
              `UPDATE runs SET status = 'interrupted', ended_at = ?,
                error = coalesce(error, 'The process running it (pid ' || owner_pid || ') ended before the run finished.')
              WHERE id = ? AND status IN ${unfinished} AND owner_pid = ? AND owner_token = ? RETURNING id`,
              [now, row.id, row.owner_pid, row.owner_token]
            )
            runCount += changed.length
          }
          for (const row of deadChildren) {
            const changed = yield* run(
              `UPDATE sessions SET status = 'interrupted', updated_at = ?
              WHERE id = ? AND status IN ${unfinished} AND owner_pid IS ? AND owner_token IS ? RETURNING id`,
              [now, row.id, row.owner_pid, row.owner_token]
            )
            sessionCount += changed.length
          }
          return { runs: runCount, sessions: sessionCount }
        }))
      })

    return SessionStore.of({
      createSession,
      session,
      sessions,
      latestSession,
      setSessionStatus,
      appendMessages,
      messages,
      appendEvent,
      events,
      toolCallStarted,
      toolCallEnded,
      toolCalls,
      blobs,
      pluginState,
      lockSession,
      beginRun,
      endRun,
      runByRequest,
      runs,
      messagesPage,
      eventsPage,
      interruptRuns
    })
  })

/** The store in `filename` (parent folders are created); WAL, foreign keys, `synchronous=NORMAL`. */
export const layer = (options: SessionStoreOptions): Layer.Layer<SessionStore, StoreError> =>
  Layer.scoped(SessionStore, make(options))

/** A fresh in-memory store, for tests. */
export const layerMemory: Layer.Layer<SessionStore> = Layer.scoped(
  SessionStore,
  Effect.orDie(make({ filename: Database.MEMORY }))
)
