import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** A SQLite statement failed; `message` is the driver's. */
export class SqlDatabaseError extends Schema.TaggedError<SqlDatabaseError>()("SqlDatabaseError", {
  message: Schema.String
}) {}

export type SqlValue = string | number | bigint | Uint8Array | null

/** A prepared statement (PL-4). */
export interface SqlStatement {
  readonly run: (
    ...params: ReadonlyArray<SqlValue>
  ) => Effect.Effect<{ readonly changes: number; readonly lastInsertRowid: number | bigint }, SqlDatabaseError>
  readonly get: (...params: ReadonlyArray<SqlValue>) => Effect.Effect<unknown, SqlDatabaseError>
  readonly all: (...params: ReadonlyArray<SqlValue>) => Effect.Effect<ReadonlyArray<unknown>, SqlDatabaseError>
}

/** The storage port plugins get from `api.storage.sqlite(path)`; FTS5 is available (PL-4). */
export interface SqlDatabase {
  readonly exec: (sql: string) => Effect.Effect<void, SqlDatabaseError>
  readonly prepare: (sql: string) => Effect.Effect<SqlStatement, SqlDatabaseError>
  /** Runs `effect` in one transaction: committed when it succeeds, rolled back when it fails. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlDatabaseError, R>
  readonly close: Effect.Effect<void>
}
