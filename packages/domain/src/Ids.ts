import * as Schema from "effect/Schema"

/** Identifies a conversation (root or child) in the session database. */
export const SessionId = Schema.NonEmptyTrimmedString.pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

/** Identifies one run of the agent loop; callers may assign it, otherwise a UUID. */
export const RunId = Schema.NonEmptyTrimmedString.pipe(Schema.brand("RunId"))
export type RunId = typeof RunId.Type

/** Identifies a tool call, as assigned by the model (or by the adapter when the server sent none). */
export const ToolCallId = Schema.NonEmptyString.pipe(Schema.brand("ToolCallId"))
export type ToolCallId = typeof ToolCallId.Type

/** The persisted global `events.seq`, as decimal text: unique and increasing across runs. */
export const EventId = Schema.String.pipe(Schema.pattern(/^[1-9][0-9]*$/), Schema.brand("EventId"))
export type EventId = typeof EventId.Type

/** A lowercase hex SHA-256 digest naming a blob's bytes. */
export const BlobHash = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/), Schema.brand("BlobHash"))
export type BlobHash = typeof BlobHash.Type
