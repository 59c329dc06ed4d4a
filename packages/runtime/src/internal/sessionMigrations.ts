// The session database's schema as numbered, forward-only, additive steps (ST-1, ST-2; v5: issue 10;
// v6: compactions, CTX-1).
// The version lives in `PRAGMA user_version`; each step is one transaction that re-reads it, so
// two processes opening an old database at once migrate it exactly once.

import type { StoreError } from "@alisio/domain/Errors"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Database, storeError } from "./sessionDatabase.js"

/** The newest schema this code knows. */
export const SCHEMA_VERSION = 6

/** `PRAGMA application_id` of an Alisio database ("Alsi"). */
export const APPLICATION_ID = 0x416c7369

export interface MigrationStep {
  readonly version: number
  readonly name: string
  /** One statement per entry; every step only adds tables, indexes and columns. */
  readonly statements: ReadonlyArray<string>
}

export const steps: ReadonlyArray<MigrationStep> = [
  {
    version: 1,
    name: "sessions, messages, events",
    statements: [
      `PRAGMA application_id = ${APPLICATION_ID}`,
      `CREATE TABLE sessions (
        id TEXT PRIMARY KEY NOT NULL,
        title TEXT,
        cwd TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
      "CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at)",
      `CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        run_id TEXT,
        role TEXT NOT NULL,
        message TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, position)
      )`,
      `CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        run_id TEXT NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL
      )`,
      "CREATE INDEX events_by_session ON events (session_id, seq)",
      "CREATE INDEX events_by_run ON events (run_id, seq)"
    ]
  },
  {
    version: 2,
    name: "tool-call journal, plugin state",
    statements: [
      `CREATE TABLE tool_calls (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        arguments TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT
      )`,
      "CREATE INDEX tool_calls_by_session ON tool_calls (session_id, seq)",
      "CREATE INDEX tool_calls_by_id ON tool_calls (id)",
      `CREATE TABLE plugin_state (
        plugin_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (plugin_id, key)
      )`
    ]
  },
  {
    version: 3,
    name: "session lock, child sessions",
    statements: [
      "ALTER TABLE sessions ADD COLUMN parent_id TEXT REFERENCES sessions (id) ON DELETE CASCADE",
      "ALTER TABLE sessions ADD COLUMN status TEXT NOT NULL DEFAULT 'completed'",
      "CREATE INDEX sessions_by_parent ON sessions (parent_id)",
      `CREATE TABLE session_locks (
        session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        pid INTEGER NOT NULL,
        token TEXT NOT NULL,
        host TEXT,
        acquired_at INTEGER NOT NULL
      )`
    ]
  },
  {
    version: 4,
    name: "runs, workspaces, blobs and nullable columns",
    statements: [
      `CREATE TABLE runs (
        id TEXT PRIMARY KEY NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        request_id TEXT,
        status TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        usage TEXT,
        error TEXT,
        owner_pid INTEGER NOT NULL,
        owner_token TEXT NOT NULL,
        owner_host TEXT,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        ended_at INTEGER
      )`,
      "CREATE UNIQUE INDEX runs_by_request ON runs (session_id, request_id) WHERE request_id IS NOT NULL",
      "CREATE INDEX runs_by_session ON runs (session_id, created_at)",
      "CREATE INDEX runs_unfinished ON runs (status) WHERE status IN ('queued', 'running')",
      `CREATE TABLE workspaces (
        path TEXT PRIMARY KEY NOT NULL,
        label TEXT,
        pinned INTEGER NOT NULL DEFAULT 0,
        last_opened_at INTEGER
      )`,
      `CREATE TABLE blobs (
        hash TEXT PRIMARY KEY NOT NULL,
        size INTEGER NOT NULL,
        media_type TEXT NOT NULL,
        created_at INTEGER NOT NULL
      )`,
      "ALTER TABLE sessions ADD COLUMN pinned INTEGER",
      "ALTER TABLE sessions ADD COLUMN archived INTEGER",
      "ALTER TABLE sessions ADD COLUMN owner_pid INTEGER",
      "ALTER TABLE sessions ADD COLUMN owner_token TEXT",
      "ALTER TABLE sessions ADD COLUMN owner_host TEXT",
      "CREATE INDEX sessions_unfinished ON sessions (status) WHERE status IN ('queued', 'running')",
      "ALTER TABLE events ADD COLUMN created_at INTEGER",
      "ALTER TABLE events ADD COLUMN correlation_id TEXT",
      "ALTER TABLE tool_calls ADD COLUMN run_id TEXT",
      "ALTER TABLE tool_calls ADD COLUMN name TEXT",
      "ALTER TABLE tool_calls ADD COLUMN effect TEXT",
      "ALTER TABLE tool_calls ADD COLUMN started_at INTEGER",
      "ALTER TABLE tool_calls ADD COLUMN ended_at INTEGER"
    ]
  },
  {
    version: 5,
    name: "request ids of root runs, unique across the database; running tool calls",
    statements: [
      // A request id names one root run in the whole database, whichever session it ran in: two
      // processes racing on one id both try to claim it here, and the second finds the first's run.
      `CREATE TABLE run_requests (
        request_id TEXT PRIMARY KEY NOT NULL,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL
      )`,
      // v4 kept request ids unique per session only: the earliest root run of an id claims it.
      `INSERT OR IGNORE INTO run_requests (request_id, run_id, created_at)
        SELECT runs.request_id, runs.id, runs.created_at FROM runs JOIN sessions ON sessions.id = runs.session_id
        WHERE runs.request_id IS NOT NULL AND sessions.parent_id IS NULL
        ORDER BY runs.created_at, runs.rowid`,
      "CREATE INDEX run_requests_by_run ON run_requests (run_id)",
      "CREATE INDEX tool_calls_running ON tool_calls (run_id) WHERE status = 'running'"
    ]
  },
  {
    version: 6,
    name: "compactions: summaries standing for ranges of stored messages",
    statements: [
      // Messages are never rewritten: a compaction row says which positions its summary stands
      // for, and the latest row of a session is what requests use (CTX-1). One insert, so a
      // process killed while a summary streams leaves either no row or a whole one.
      `CREATE TABLE compactions (
        id TEXT PRIMARY KEY NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        run_id TEXT,
        first_position INTEGER NOT NULL,
        last_position INTEGER NOT NULL,
        summary TEXT NOT NULL,
        tokens_before INTEGER NOT NULL,
        tokens_after INTEGER NOT NULL,
        messages_compacted INTEGER NOT NULL,
        focus TEXT,
        created_at INTEGER NOT NULL
      )`,
      "CREATE INDEX compactions_by_session ON compactions (session_id, last_position)"
    ]
  }
]

const Header = Schema.Struct({ version: Schema.Int, applicationId: Schema.Int, objects: Schema.Int })

const readHeader = (db: Database) =>
  db.use(
    Effect.flatMap(
      db.run(`SELECT (SELECT user_version FROM pragma_user_version) AS version,
        (SELECT application_id FROM pragma_application_id) AS applicationId,
        (SELECT count(*) FROM sqlite_schema) AS objects`),
      (rows) => Effect.orDie(Schema.decodeUnknown(Header)(rows[0]))
    )
  )

/**
 * Brings the database to `upTo` (default: the newest version). Fails without writing when the
 * database belongs to another program or to a newer Alisio.
 */
export const migrate = (
  db: Database,
  upTo: number = SCHEMA_VERSION
): Effect.Effect<{ readonly from: number; readonly to: number }, StoreError> =>
  Effect.gen(function* () {
    const header = yield* readHeader(db)
    const foreign =
      header.applicationId !== APPLICATION_ID &&
      (header.applicationId !== 0 || header.version !== 0 || header.objects > 0)
    if (foreign) {
      return yield* storeError(
        db.filename,
        "not_a_database",
        `${db.filename} is a SQLite database of another program, not an Alisio session database.`
      )
    }
    if (header.version > SCHEMA_VERSION) {
      return yield* storeError(
        db.filename,
        "newer_version",
        `${db.filename} was written by a newer Alisio (database version ${header.version}; this Alisio knows up to ${SCHEMA_VERSION}).`
      )
    }
    for (const step of steps) {
      if (step.version <= header.version || step.version > upTo) continue
      yield* db.transaction(
        Effect.gen(function* () {
          const rows = yield* db.run("SELECT user_version AS version FROM pragma_user_version")
          const now = (rows[0] as { readonly version?: unknown } | undefined)?.version
          if (typeof now === "number" && now >= step.version) return
          for (const statement of step.statements) yield* db.run(statement)
          yield* db.run(`PRAGMA user_version = ${step.version}`)
        })
      )
    }
    return { from: header.version, to: Math.max(header.version, Math.min(upTo, SCHEMA_VERSION)) }
  })
