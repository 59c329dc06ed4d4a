import type { SessionLockedError, SessionNotFoundError, StoreError } from "@alisio/domain/Errors"
import type { BlobHash, EventId, RunId, SessionId, ToolCallId } from "@alisio/domain/Ids"
import type { Message } from "@alisio/domain/Message"
import type { KnownRunEvent, RunStatus, ToolCallStatus } from "@alisio/domain/RunEvent"
import type { ToolEffect } from "@alisio/domain/Tool"
import type { Usage } from "@alisio/domain/Usage"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Database from "./internal/sessionDatabase.js"
import { migrate } from "./internal/sessionMigrations.js"
import { makeBlobRows } from "./internal/store/blobRows.js"
import { makeCompactions } from "./internal/store/compactions.js"
import { makeEvents } from "./internal/store/events.js"
import { makeLocks } from "./internal/store/locks.js"
import { makePages } from "./internal/store/pages.js"
import { makePluginState } from "./internal/store/pluginState.js"
import { makeReconcile } from "./internal/store/reconcile.js"
import { makeRuns } from "./internal/store/runs.js"
import { makeSessionAdmin } from "./internal/store/sessionAdmin.js"
import { makeSessions } from "./internal/store/sessions.js"
import { makeSql } from "./internal/store/sql.js"
import { makeToolJournal } from "./internal/store/toolJournal.js"
import type { ProcessOwner } from "./ProcessOwner.js"

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

/** A session as a list shows it: the row with its run and child counts, and its first prompt. */
export interface SessionSummary extends Session {
  readonly runCount: number
  readonly childCount: number
  /** The text of its first user message (the title of sessions stored before titles were). */
  readonly firstPrompt?: string
}

/** Which sessions `sessionSummaries` lists, newest first. */
export interface SessionFilter {
  readonly cwd?: string | undefined
  /** Sessions of this folder come first, then the others (each newest first). */
  readonly firstCwd?: string | undefined
  /** `null`: root sessions only. */
  readonly parentId?: SessionId | null | undefined
  readonly limit?: number | undefined
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

/**
 * A summary standing for the stored messages at positions `firstPosition`…`lastPosition` of a
 * session (CTX-1): they stay stored, marked compacted by this row; requests use the summary instead.
 */
export interface CompactionRecord {
  readonly id: string
  readonly sessionId: SessionId
  /** The run that compacted, absent for `/compact` outside a run. */
  readonly runId?: RunId
  readonly firstPosition: number
  readonly lastPosition: number
  readonly summary: string
  /** Estimated tokens of the request before and after. */
  readonly tokensBefore: number
  readonly tokensAfter: number
  /** How many stored messages the summary stands for. */
  readonly messagesCompacted: number
  /** What the person asked the summary to focus on (`/compact <focus>`). */
  readonly focus?: string
  /** Epoch milliseconds. */
  readonly createdAt: number
}

export interface NewCompaction {
  readonly id?: string | undefined
  readonly sessionId: SessionId
  readonly runId?: RunId | undefined
  readonly firstPosition: number
  readonly lastPosition: number
  readonly summary: string
  readonly tokensBefore: number
  readonly tokensAfter: number
  readonly messagesCompacted: number
  readonly focus?: string | undefined
}

/** A page of rows and the cursor of the next one (absent at the end). */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly next?: string
  /** Rows of the page that could not be read (a damaged disk, a hand edit, another schemaVersion), left out of `items`. */
  readonly unreadable?: ReadonlyArray<UnreadableRow>
}

/** A row a page left out: its key (an event's eventId) and why, on one line. */
export interface UnreadableRow {
  readonly id: string
  readonly problem: string
}

export interface EventsOptions {
  /** Told of each row left out because it cannot be read, once. */
  readonly onUnreadable?: (row: UnreadableRow) => Effect.Effect<void>
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
 * The session database (ST-1…ST-4, CTX-1). Every method is one transaction. The run methods are
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
  /** Sessions with their run and child counts and first prompt, newest first. */
  readonly sessionSummaries: (filter?: SessionFilter) => Effect.Effect<ReadonlyArray<SessionSummary>, StoreFailure>
  /** The sessions whose id starts with `prefix` (at most `limit`, by id): how a short id is found. */
  readonly sessionsByIdPrefix: (prefix: string, limit: number) => Effect.Effect<ReadonlyArray<Session>, StoreFailure>
  /**
   * Sets a session's title. With `whileTitle` the title changes only while it is still that one
   * (`null`: none), so a title found later never replaces one a person gave. Returns whether it changed.
   */
  readonly renameSession: (
    id: SessionId,
    title: string,
    options?: { readonly whileTitle?: string | null | undefined }
  ) => Effect.Effect<boolean, SessionNotFoundError | StoreFailure>
  /**
   * Gives a session and every descendant another workspace folder (resumed elsewhere on purpose).
   * A tree with a run that a live process still answers for is not moved: `SessionLockedError`.
   */
  readonly moveSession: (
    id: SessionId,
    cwd: string
  ) => Effect.Effect<void, SessionNotFoundError | SessionLockedError | StoreFailure>
  /**
   * Deletes sessions with every descendant and all they hold (messages, events, tool calls, runs,
   * request ids, locks), in one transaction: all of them or, on any failure, none. A session of
   * the trees with a run that a live process still answers for fails it with `SessionLockedError`.
   * Returns the ids deleted.
   */
  readonly deleteSessions: (
    ids: ReadonlyArray<SessionId>
  ) => Effect.Effect<
    { readonly deleted: ReadonlyArray<SessionId> },
    SessionNotFoundError | SessionLockedError | StoreFailure
  >

  /** Appends messages atomically (an assistant message with its tool results is one call). */
  readonly appendMessages: (
    sessionId: SessionId,
    messages: ReadonlyArray<Message>,
    runId?: RunId
  ) => Effect.Effect<ReadonlyArray<StoredMessage>, StoreFailure>
  /** The session's messages in order; with `afterPosition`, only the later ones (what a compaction left). */
  readonly messages: (
    sessionId: SessionId,
    options?: { readonly afterPosition?: number | undefined }
  ) => Effect.Effect<ReadonlyArray<StoredMessage>, StoreFailure>

  /** Commits one event and returns its global `eventId`. */
  readonly appendEvent: (event: KnownRunEvent) => Effect.Effect<EventId, StoreFailure>
  /** The events of a session (or one run), oldest first; a row that cannot be read is left out (see `EventsOptions`). */
  readonly events: (
    sessionId: SessionId,
    runId?: RunId,
    options?: EventsOptions
  ) => Effect.Effect<ReadonlyArray<StoredEvent>, StoreFailure>

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
   * Holds the session's write lock for the life of the scope: one holder at a time, in this
   * process as across processes. A lock held here or by another live process fails with
   * `SessionLockedError`; one left by a dead process is taken over.
   */
  readonly lockSession: (
    id: SessionId,
    owner: ProcessOwner
  ) => Effect.Effect<void, SessionLockedError | StoreFailure, Scope.Scope>

  /**
   * Records a run as running. Retried with the same `requestId` in the session, or, for a root
   * session, with a request id another root run claimed anywhere in the database, it returns that
   * run (`existing`) instead; a session created just for the request (still empty and queued, by
   * the same owner) is then removed, as the request already has its session.
   */
  readonly beginRun?: (
    input: BeginRun
  ) => Effect.Effect<{ readonly run: RunRecord; readonly existing: boolean }, StoreFailure>
  /** Ends the run and gives its session the same status, in one transaction. */
  readonly endRun?: (id: RunId, end: EndRun) => Effect.Effect<void, StoreFailure>
  readonly runByRequest?: (
    sessionId: SessionId,
    requestId: string
  ) => Effect.Effect<Option.Option<RunRecord>, StoreFailure>
  /** The root run that claimed `requestId`, whichever session it ran in (one indexed query). */
  readonly runForRequest?: (requestId: string) => Effect.Effect<Option.Option<RunRecord>, StoreFailure>
  readonly runs?: (sessionId: SessionId) => Effect.Effect<ReadonlyArray<RunRecord>, StoreFailure>
  readonly messagesPage?: (sessionId: SessionId, page: PageRequest) => Effect.Effect<Page<StoredMessage>, StoreFailure>
  readonly eventsPage?: (sessionId: SessionId, page: PageRequest) => Effect.Effect<Page<StoredEvent>, StoreFailure>
  /**
   * Marks `interrupted` the runs and child sessions left queued or running by processes that
   * are no longer alive (ST-4, CH-3); returns how many runs and sessions changed.
   */
  readonly interruptRuns?: () => Effect.Effect<{ readonly runs: number; readonly sessions: number }, StoreFailure>
  /**
   * Compactions (CTX-1): `add` stores one in a single statement; `latest` is what requests use.
   * Optional: a store without them still runs, compacting for the length of a run only.
   */
  readonly compactions?: {
    readonly add: (input: NewCompaction) => Effect.Effect<CompactionRecord, StoreFailure>
    readonly latest: (sessionId: SessionId) => Effect.Effect<Option.Option<CompactionRecord>, StoreFailure>
    readonly list: (sessionId: SessionId) => Effect.Effect<ReadonlyArray<CompactionRecord>, StoreFailure>
  }
}

export class SessionStore extends Context.Tag("@alisio/runtime/SessionStore")<SessionStore, SessionStoreService>() {}

/** Where the database lives; `":memory:"` keeps it in memory. */
export interface SessionStoreOptions {
  readonly filename: string
  /** Only reads follow: a database on a read-only folder is opened read-only instead of failing. */
  readonly readOnlyFallback?: boolean
}

/**
 * Opens (creating or migrating) the session database for the life of the scope. A file that is
 * not an Alisio database, or one from a newer Alisio, fails with a `StoreError` and is left as it was.
 */
export const make = (options: SessionStoreOptions): Effect.Effect<SessionStoreService, StoreError, Scope.Scope> =>
  Effect.flatMap(
    Database.open(
      options.filename,
      options.readOnlyFallback === undefined ? {} : { readOnlyFallback: options.readOnlyFallback }
    ),
    makeWithDatabase
  )

/** The store over an opened database: migrates it to the current version first. */
export const makeWithDatabase = (db: Database.Database): Effect.Effect<SessionStoreService, StoreError> =>
  Effect.gen(function* () {
    yield* migrate(db)
    const sql = makeSql(db)
    return SessionStore.of({
      ...makeSessions(sql),
      ...makeSessionAdmin(sql),
      ...makeEvents(sql),
      ...makeToolJournal(sql),
      blobs: makeBlobRows(sql),
      pluginState: makePluginState(sql),
      ...makeLocks(sql),
      ...makeRuns(sql),
      ...makePages(sql),
      ...makeReconcile(sql),
      compactions: makeCompactions(sql)
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
