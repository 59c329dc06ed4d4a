import { randomUUID } from "node:crypto"
import { SessionLockedError, SessionNotFoundError, type StoreError } from "@alisio/domain/Errors"
import { type BlobHash, EventId, type RunId, SessionId, type ToolCallId } from "@alisio/domain/Ids"
import type { Message } from "@alisio/domain/Message"
import {
  decodeRunEvent,
  encodeRunEvent,
  type KnownRunEvent,
  type RunStatus,
  type ToolCallStatus
} from "@alisio/domain/RunEvent"
import type { ToolEffect } from "@alisio/domain/Tool"
import type { Usage } from "@alisio/domain/Usage"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Database from "./internal/sessionDatabase.js"
import { migrate } from "./internal/sessionMigrations.js"
import { makeQueries } from "./internal/sessionQueries.js"
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

  readonly beginRun?: (
    input: BeginRun
  ) => Effect.Effect<{ readonly run: RunRecord; readonly existing: boolean }, StoreFailure>
  /** Ends the run and gives its session the same status, in one transaction. */
  readonly endRun?: (id: RunId, end: EndRun) => Effect.Effect<void, StoreFailure>
  readonly runByRequest?: (
    sessionId: SessionId,
    requestId: string
  ) => Effect.Effect<Option.Option<RunRecord>, StoreFailure>
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
    const q = makeQueries(db)
    const notFound = (what: string) =>
      Database.storeError(db.filename, "not_found", `${what} does not exist in ${q.file}.`)
    const ownerColumns = (owner: ProcessOwner) => ({
      owner_pid: owner.pid,
      owner_token: owner.token,
      owner_host: owner.host ?? null
    })

    const createSession = (input: NewSession): Effect.Effect<Session, StoreError> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const id = input.id ?? SessionId.make(randomUUID())
        const status = input.status ?? "queued"
        yield* db.use(
          q.sessions.insert({
            id,
            parent_id: input.parentId ?? null,
            title: input.title ?? null,
            cwd: input.cwd,
            status,
            ...ownerColumns(input.owner ?? currentOwner),
            now
          })
        )
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
      Effect.flatMap(
        db.use(q.sessions.byId(id)),
        Option.match({
          onNone: () =>
            Effect.fail(new SessionNotFoundError({ sessionId: id, message: `No session ${id} in ${q.file}.` })),
          onSome: (row) => Effect.succeed(Rows.toSession(row))
        })
      )

    const sessions: SessionStoreService["sessions"] = (filter = {}) =>
      Effect.map(db.use(q.sessions.list(filter)), (rows) => rows.map(Rows.toSession))

    const latestSession = (cwd: string) => Effect.map(db.use(q.sessions.latestRoot(cwd)), Option.map(Rows.toSession))

    const setSessionStatus = (id: SessionId, status: RunStatus): Effect.Effect<void, StoreError> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        // A queued or running session is answered for by the process that says so (ST-4).
        const owner = status === "queued" || status === "running" ? ownerColumns(currentOwner) : null
        const updated = yield* db.use(q.sessions.setStatus({ id, status, now, owner }))
        if (updated.length === 0) return yield* notFound(`Session ${id}`)
      })

    const appendMessages = (sessionId: SessionId, messages: ReadonlyArray<Message>, runId?: RunId) =>
      Effect.gen(function* () {
        if (messages.length === 0) return []
        const now = yield* Clock.currentTimeMillis
        return yield* db.transaction(
          Effect.gen(function* () {
            const { found, last } = yield* q.messages.tail(sessionId)
            if (found === 0) return yield* notFound(`Session ${sessionId}`)
            const stored: Array<StoredMessage> = []
            for (const [index, message] of messages.entries()) {
              const position = last + index + 1
              yield* q.messages.insert({
                session_id: sessionId,
                position,
                run_id: runId ?? null,
                role: message.role,
                message,
                now
              })
              stored.push({ sessionId, position, ...(runId === undefined ? {} : { runId }), message, createdAt: now })
            }
            yield* q.sessions.touch({ id: sessionId, now })
            return stored
          })
        )
      })

    const messages = (sessionId: SessionId) =>
      Effect.map(db.use(q.messages.all(sessionId)), (rows) => rows.map(Rows.toStoredMessage))

    const appendEvent = (event: KnownRunEvent): Effect.Effect<EventId, StoreError> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        // The eventId is the row's seq, assigned by this insert; one the event already carried is not kept.
        const { eventId: _, ...encoded } = encodeRunEvent(event) as { readonly eventId?: unknown }
        const row = yield* db.use(
          q.events.insert({
            session_id: event.sessionId,
            run_id: event.runId,
            type: event.type,
            payload: JSON.stringify(encoded),
            now,
            correlation_id: event.correlationId ?? null
          })
        )
        return EventId.make(String(row.seq))
      })

    const toStoredEvents = (rows: ReadonlyArray<typeof Rows.EventRow.Type>) =>
      Effect.gen(function* () {
        const events: Array<StoredEvent> = []
        for (const row of rows) {
          const payload = typeof row.payload === "object" && row.payload !== null ? row.payload : {}
          const decoded = decodeRunEvent({ ...payload, eventId: String(row.seq) })
          if (Either.isLeft(decoded)) {
            return yield* Database.storeError(
              db.filename,
              "corrupt",
              `Event ${row.seq} in ${q.file} is not in the shape Alisio wrote (${decoded.left.message.slice(0, 300)}).`
            )
          }
          // A type this version does not know was written by a newer Alisio: skip it (EV-2).
          if (decoded.right._tag === "Known") events.push(decoded.right.event as StoredEvent)
        }
        return events
      })

    const events = (sessionId: SessionId, runId?: RunId) =>
      Effect.flatMap(db.use(q.events.all({ session_id: sessionId, run_id: runId ?? null })), toStoredEvents)

    const toolCallStarted: SessionStoreService["toolCallStarted"] = (call) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        yield* db.use(
          q.toolCalls.insert({
            id: call.id,
            session_id: call.sessionId,
            run_id: call.runId ?? null,
            name: call.name,
            effect: call.effect ?? null,
            arguments: call.arguments,
            started_at: call.startedAt ?? now
          })
        )
      })

    const toolCallEnded: SessionStoreService["toolCallEnded"] = (id, outcome) =>
      db.use(q.toolCalls.end({ id, status: outcome.status, result: outcome.result, ended_at: outcome.endedAt }))

    const toolCalls = (sessionId: SessionId) =>
      Effect.map(db.use(q.toolCalls.all(sessionId)), (rows) => rows.map(Rows.toToolCallRecord))

    const pluginState: SessionStoreService["pluginState"] = {
      get: (pluginId, key) =>
        Effect.map(
          db.use(q.pluginState.get({ plugin_id: pluginId, key })),
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
                `Plugin ${pluginId}'s state "${key}" cannot be stored as JSON (${
                  error instanceof Error ? error.message : String(error)
                }).`
              )
          })
          const now = yield* Clock.currentTimeMillis
          // A value with no JSON form (undefined) removes the key.
          yield* db.use(
            json === undefined
              ? q.pluginState.remove({ plugin_id: pluginId, key })
              : q.pluginState.set({ plugin_id: pluginId, key, json, now })
          )
        })
    }

    const blobs: SessionStoreService["blobs"] = {
      record: (meta) =>
        db.use(
          q.blobs.insert({ hash: meta.hash, size: meta.size, media_type: meta.mediaType, created_at: meta.createdAt })
        ),
      get: (hash) => Effect.map(db.use(q.blobs.byHash(hash)), Option.map(Rows.toBlobMeta))
    }

    const sameOwner = (a: ProcessOwner, b: ProcessOwner) => a.pid === b.pid && a.token === b.token
    // Locks this store holds, by session and owner: nested holders in one process share the row.
    const held = new Map<string, number>()

    const acquireLock = (id: SessionId, owner: ProcessOwner) =>
      db.transaction(
        Effect.gen(function* () {
          const holder = yield* Effect.map(
            q.locks.holder(id),
            Option.map(
              (row): ProcessOwner => ({
                pid: row.pid,
                token: row.token,
                ...(row.host === null ? {} : { host: row.host })
              })
            )
          )
          // A lock left by a dead process is simply taken over.
          if (Option.isSome(holder) && !sameOwner(holder.value, owner) && isAliveSync(holder.value)) {
            const { host, pid } = holder.value
            return yield* new SessionLockedError({
              sessionId: id,
              holderPid: pid,
              ...(host === undefined ? {} : { holderHost: host }),
              message: `Session ${id} is in use by another Alisio process (pid ${pid}${
                host === undefined ? "" : ` on ${host}`
              }). Wait for it to finish or stop that process, then try again.`
            })
          }
          if (!(yield* q.sessions.exists(id))) return yield* notFound(`Session ${id}`)
          const now = yield* Clock.currentTimeMillis
          yield* q.locks.take({ session_id: id, pid: owner.pid, token: owner.token, host: owner.host ?? null, now })
        })
      )

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
            yield* db
              .use(q.locks.release({ session_id: id, pid: owner.pid, token: owner.token }))
              .pipe(
                Effect.catchAll((error) =>
                  Effect.logWarning(`Could not release the lock of session ${id}: ${error.message}`)
                )
              )
          })
      ).pipe(Effect.asVoid)
    }

    const beginRun: NonNullable<SessionStoreService["beginRun"]> = (input) =>
      db.transaction(
        Effect.gen(function* () {
          const earlier =
            input.requestId === undefined
              ? yield* q.runs.byId(input.id)
              : yield* q.runs.byRequest({ session_id: input.sessionId, request_id: input.requestId })
          if (Option.isSome(earlier)) return { run: Rows.toRunRecord(earlier.value), existing: true }
          const now = yield* Clock.currentTimeMillis
          yield* q.runs.insert({
            id: input.id,
            session_id: input.sessionId,
            request_id: input.requestId ?? null,
            provider: input.provider,
            model: input.model,
            ...ownerColumns(input.owner),
            now
          })
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
        })
      )

    const endRun: NonNullable<SessionStoreService["endRun"]> = (id, end) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        yield* db.transaction(
          Effect.gen(function* () {
            const updated = yield* q.runs.update({
              id,
              status: end.status,
              usage: end.usage ?? null,
              error: end.error ?? null,
              now
            })
            if (updated.length === 0) return yield* notFound(`Run ${id}`)
            yield* q.sessions.endedBy({ run: id, status: end.status, now })
          })
        )
      })

    const runByRequest: NonNullable<SessionStoreService["runByRequest"]> = (sessionId, requestId) =>
      Effect.map(
        db.use(q.runs.byRequest({ session_id: sessionId, request_id: requestId })),
        Option.map(Rows.toRunRecord)
      )

    const runs: NonNullable<SessionStoreService["runs"]> = (sessionId) =>
      Effect.map(db.use(q.runs.ofSession(sessionId)), (rows) => rows.map(Rows.toRunRecord))

    // Keyset pagination on position / seq: rows appended meanwhile never shift a page.
    const pageBounds = (page: PageRequest) => {
      const limit = Number.isFinite(page.limit) ? Math.min(MAX_PAGE, Math.max(1, Math.floor(page.limit))) : MAX_PAGE
      const forward = page.direction !== "backward"
      if (page.cursor === undefined) {
        return Effect.succeed({ limit, forward, after: forward ? 0 : Number.MAX_SAFE_INTEGER })
      }
      if (!/^[0-9]{1,15}$/.test(page.cursor)) {
        return Effect.fail(
          Database.storeError(
            db.filename,
            "not_found",
            `The page cursor "${page.cursor.slice(0, 40)}" was not returned by this store.`
          )
        )
      }
      return Effect.succeed({ limit, forward, after: Number(page.cursor) })
    }

    /** One more row than asked tells whether a next page exists; items come oldest first either way. */
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
        const query = forward ? q.messages.after : q.messages.before
        const rows = yield* db.use(query({ session_id: sessionId, after, limit: limit + 1 }))
        return yield* paged(
          rows,
          limit,
          forward,
          (row) => row.position,
          (rows) => Effect.succeed(rows.map(Rows.toStoredMessage))
        )
      })

    const eventsPage: NonNullable<SessionStoreService["eventsPage"]> = (sessionId, page) =>
      Effect.gen(function* () {
        const { after, forward, limit } = yield* pageBounds(page)
        const query = forward ? q.events.after : q.events.before
        const rows = yield* db.use(query({ session_id: sessionId, after, limit: limit + 1 }))
        return yield* paged(rows, limit, forward, (row) => row.seq, toStoredEvents)
      })

    const interruptRuns: NonNullable<SessionStoreService["interruptRuns"]> = () =>
      Effect.gen(function* () {
        const unfinishedRuns = yield* db.use(q.runs.unfinished(undefined))
        const unfinishedChildren = yield* db.use(q.sessions.unfinishedChildren(undefined))
        const liveness = new Map<string, boolean>()
        // A row without an owner predates owners (v3): no process of this version is running it.
        const ownerIsGone = (row: typeof Rows.UnfinishedRow.Type) => {
          if (row.owner_pid === null || row.owner_token === null) return true
          const owner: ProcessOwner = {
            pid: row.owner_pid,
            token: row.owner_token,
            ...(row.owner_host === null ? {} : { host: row.owner_host })
          }
          const key = `${owner.pid}\u0000${owner.token}\u0000${owner.host ?? ""}`
          let alive = liveness.get(key)
          if (alive === undefined) {
            alive = isAliveSync(owner)
            liveness.set(key, alive)
          }
          return !alive
        }
        const deadRuns = unfinishedRuns.filter(ownerIsGone)
        const deadChildren = unfinishedChildren.filter(ownerIsGone)
        if (deadRuns.length === 0 && deadChildren.length === 0) return { runs: 0, sessions: 0 }
        const now = yield* Clock.currentTimeMillis
        return yield* db.transaction(
          Effect.gen(function* () {
            let runCount = 0
            let sessionCount = 0
            for (const row of deadRuns) {
              const changed = yield* q.runs.interrupt({
                id: row.id,
                owner_pid: row.owner_pid!,
                owner_token: row.owner_token!,
                now
              })
              runCount += changed.length
            }
            for (const row of deadChildren) {
              const changed = yield* q.sessions.interrupt({
                id: row.id,
                owner_pid: row.owner_pid,
                owner_token: row.owner_token,
                now
              })
              sessionCount += changed.length
            }
            if (runCount > 0) sessionCount += (yield* q.sessions.settleRoots({ now })).length
            return { runs: runCount, sessions: sessionCount }
          })
        )
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
