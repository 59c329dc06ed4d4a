// The memory file's schema, versioned with `PRAGMA user_version`: each step runs once, in order,
// in its own transaction, and never edits an earlier one.
import { PluginError } from "@alisio/domain/Plugin"
import type { SqlDatabase, SqlDatabaseError } from "@alisio/domain/SqlDatabase"
import * as Effect from "effect/Effect"

const ftsTriggers = (columns: ReadonlyArray<string>): string => {
  const list = columns.join(", ")
  const values = (row: "new" | "old") => columns.map((column) => `${row}.${column}`).join(", ")
  return `
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
      INSERT INTO memories_fts (rowid, ${list}) VALUES (new.id, ${values("new")});
    END;
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
      INSERT INTO memories_fts (memories_fts, rowid, ${list}) VALUES ('delete', old.id, ${values("old")});
    END;
    CREATE TRIGGER memories_fts_update AFTER UPDATE ON memories BEGIN
      INSERT INTO memories_fts (memories_fts, rowid, ${list}) VALUES ('delete', old.id, ${values("old")});
      INSERT INTO memories_fts (rowid, ${list}) VALUES (new.id, ${values("new")});
    END;`
}

/** Step `n` brings a version `n - 1` file to version `n`. */
export const MIGRATIONS: ReadonlyArray<string> = [
  // 1: memories of a project, searchable by title and content.
  `CREATE TABLE memories (
     id INTEGER PRIMARY KEY,
     project TEXT NOT NULL,
     title TEXT NOT NULL DEFAULT '',
     content TEXT NOT NULL,
     type TEXT NOT NULL DEFAULT 'note',
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE VIRTUAL TABLE memories_fts USING fts5 (title, content, content = 'memories', content_rowid = 'id');
   ${ftsTriggers(["title", "content"])}`,
  // 2: personal records, topic keys, soft deletes; the index learns topic and type, and stems words.
  `ALTER TABLE memories ADD COLUMN scope TEXT NOT NULL DEFAULT 'project';
   ALTER TABLE memories ADD COLUMN topic_key TEXT;
   ALTER TABLE memories ADD COLUMN deleted_at INTEGER;
   CREATE UNIQUE INDEX memories_topic ON memories (scope, project, topic_key)
     WHERE topic_key IS NOT NULL AND deleted_at IS NULL;
   CREATE INDEX memories_recent ON memories (project, updated_at) WHERE deleted_at IS NULL;
   DROP TRIGGER memories_fts_insert;
   DROP TRIGGER memories_fts_delete;
   DROP TRIGGER memories_fts_update;
   DROP TABLE memories_fts;
   CREATE VIRTUAL TABLE memories_fts USING fts5 (
     title, content, topic_key, type,
     content = 'memories', content_rowid = 'id',
     tokenize = 'porter unicode61 remove_diacritics 2'
   );
   INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
   ${ftsTriggers(["title", "content", "topic_key", "type"])}`
]

export const SCHEMA_VERSION = MIGRATIONS.length

/**
 * Brings the file to `upTo` (the current version by default). A file from a newer plugin is
 * refused rather than guessed at.
 */
export const migrate = (
  db: SqlDatabase,
  options: { readonly upTo?: number | undefined } = {}
): Effect.Effect<number, SqlDatabaseError | PluginError> =>
  Effect.gen(function* () {
    const target = options.upTo ?? SCHEMA_VERSION
    const statement = yield* db.prepare("PRAGMA user_version")
    const readVersion = Effect.map(statement.get(), (row) => (row as { readonly user_version: number }).user_version)
    const current = yield* readVersion
    if (current > SCHEMA_VERSION) {
      return yield* new PluginError({
        pluginId: "memory",
        message: `The memory file has schema version ${current}, newer than this plugin's ${SCHEMA_VERSION}. Update Alisio, or move the file aside to start a new one.`
      })
    }
    // Another process may be upgrading the same file: each step re-reads the version under the write lock.
    for (let version = current + 1; version <= target; version++) {
      yield* db.transaction(
        Effect.flatMap(readVersion, (now) =>
          now >= version
            ? Effect.void
            : Effect.zipRight(db.exec(MIGRATIONS[version - 1]!), db.exec(`PRAGMA user_version = ${version}`))
        )
      )
    }
    return yield* readVersion
  })
