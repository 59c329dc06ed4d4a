// Row Schemas of the session database and their mapping to the store's records.

import { BlobHash, RunId, SessionId, ToolCallId } from "@alisio/domain/Ids"
import { Message } from "@alisio/domain/Message"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import { RunStatus, ToolCallStatus } from "@alisio/domain/RunEvent"
import { ToolEffect } from "@alisio/domain/Tool"
import { Usage } from "@alisio/domain/Usage"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { BlobMeta, RunRecord, Session, StoredMessage, ToolCallRecord } from "../SessionStore.js"
import { firstProblem } from "./store/sql.js"

// A session or run row stays readable when its status, times, title, error or usage is not what
// Alisio wrote (a damaged disk, a hand edit, a status a newer Alisio added): one such row would
// otherwise fail every list that holds it, and the session could be neither shown nor deleted.
// The field reads as a neutral value instead; other damage (an id, a flag) still fails as corrupt.

const toMillis = (value: unknown): number => {
  const ms = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN
  return Number.isFinite(ms) ? ms : 0
}

/** Epoch milliseconds; a value that is no number reads as 0. */
const Millis = Schema.transform(Schema.Unknown, Schema.Number, { strict: true, decode: toMillis, encode: (ms) => ms })

/** Epoch milliseconds, or none. */
const OptionalMillis = Schema.transform(Schema.Unknown, Schema.NullOr(Schema.Number), {
  strict: true,
  decode: (value) => (value === null || value === undefined ? null : toMillis(value)),
  encode: (ms) => ms
})
const Flag = Schema.NullOr(Schema.Number)

/** A status this Alisio does not know reads as `interrupted`: nothing it understands is running. */
const StoredStatus = Schema.transform(Schema.Unknown, RunStatus, {
  strict: true,
  decode: (value) => (Schema.is(RunStatus)(value) ? value : "interrupted"),
  encode: (status) => status
})

/** Text, or none; a number or a blob where text belongs reads as none. */
const OptionalText = Schema.transform(Schema.Unknown, Schema.NullOr(Schema.String), {
  strict: true,
  decode: (value) => (typeof value === "string" ? value : null),
  encode: (text) => text
})

export const MessageJson = Schema.parseJson(Message)
export const UsageJson = Schema.parseJson(Usage)

const decodeUsage = onFirstCall(() => Schema.decodeUnknownOption(UsageJson))

/** Token usage as JSON text; damaged usage reads as none. */
const StoredUsage = Schema.transform(Schema.Unknown, Schema.NullOr(Usage), {
  strict: true,
  decode: (value) => (typeof value === "string" ? Option.getOrNull(decodeUsage(value)) : null),
  encode: (usage) => usage
})

export const SessionRow = Schema.Struct({
  id: SessionId,
  parent_id: Schema.NullOr(SessionId),
  title: OptionalText,
  cwd: Schema.String,
  status: StoredStatus,
  pinned: Flag,
  archived: Flag,
  created_at: Millis,
  updated_at: Millis
})
export const sessionColumns = "id, parent_id, title, cwd, status, pinned, archived, created_at, updated_at"

export const toSession = (row: typeof SessionRow.Type): Session => ({
  id: row.id,
  ...(row.parent_id === null ? {} : { parentId: row.parent_id }),
  ...(row.title === null ? {} : { title: row.title }),
  cwd: row.cwd,
  status: row.status,
  pinned: row.pinned === 1,
  archived: row.archived === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

/** Its `message` is decoded row by row (`toStoredMessage`), so one damaged row does not hide the rest. */
export const MessageRow = Schema.Struct({
  session_id: SessionId,
  position: Schema.Int,
  run_id: Schema.NullOr(RunId),
  message: Schema.String,
  created_at: Millis
})
export const messageColumns = "session_id, position, run_id, message, created_at"

const decodeMessage = onFirstCall(() => Schema.decodeUnknownEither(MessageJson))

/** The call a damaged tool result still names, so it stays paired with its call in later requests. */
const toolCallOf = (json: string): { readonly id: string; readonly name: string } | undefined => {
  try {
    const parsed = JSON.parse(json) as { role?: unknown; toolCallId?: unknown; toolName?: unknown }
    if (parsed.role !== "tool" || typeof parsed.toolCallId !== "string" || parsed.toolCallId === "") return undefined
    return { id: parsed.toolCallId, name: typeof parsed.toolName === "string" ? parsed.toolName : "unknown" }
  } catch {
    return undefined
  }
}

/**
 * A message row that is not in the shape Alisio wrote (a damaged disk, a hand edit) stands as a
 * note saying so, where it was: the rest of the session still shows, exports and resumes.
 */
const damagedMessage = (row: typeof MessageRow.Type, problem: string): Message => {
  const text = `[Message ${row.position} of this session could not be read, so it is left out: ${problem}]`
  const call = toolCallOf(row.message)
  return call === undefined
    ? { role: "user", content: [{ _tag: "text", text }] }
    : {
        role: "tool",
        toolCallId: ToolCallId.make(call.id),
        toolName: call.name,
        content: [{ _tag: "text", text }],
        isError: true
      }
}

export const toStoredMessage = (row: typeof MessageRow.Type): StoredMessage => {
  const decoded = decodeMessage(row.message)
  return {
    sessionId: row.session_id,
    position: row.position,
    ...(row.run_id === null ? {} : { runId: row.run_id }),
    message: Either.isRight(decoded) ? decoded.right : damagedMessage(row, firstProblem(decoded.left)),
    createdAt: row.created_at
  }
}

/** An event row: its global seq and the JSON of the event as the producer encoded it. */
export const EventRow = Schema.Struct({
  seq: Schema.Int,
  payload: Schema.parseJson()
})

export const RunRow = Schema.Struct({
  id: RunId,
  session_id: SessionId,
  request_id: Schema.NullOr(Schema.String),
  status: StoredStatus,
  provider: Schema.String,
  model: Schema.String,
  usage: StoredUsage,
  error: OptionalText,
  owner_pid: Schema.Int,
  owner_token: Schema.String,
  owner_host: Schema.NullOr(Schema.String),
  created_at: Millis,
  started_at: OptionalMillis,
  ended_at: OptionalMillis
})
export const runColumns =
  "id, session_id, request_id, status, provider, model, usage, error, owner_pid, owner_token, owner_host, created_at, started_at, ended_at"

export const toRunRecord = (row: typeof RunRow.Type): RunRecord => ({
  id: row.id,
  sessionId: row.session_id,
  ...(row.request_id === null ? {} : { requestId: row.request_id }),
  status: row.status,
  provider: row.provider,
  model: row.model,
  ...(row.usage === null ? {} : { usage: row.usage }),
  ...(row.error === null ? {} : { error: row.error }),
  owner: {
    pid: row.owner_pid,
    token: row.owner_token,
    ...(row.owner_host === null ? {} : { host: row.owner_host })
  },
  createdAt: row.created_at,
  ...(row.started_at === null ? {} : { startedAt: row.started_at }),
  ...(row.ended_at === null ? {} : { endedAt: row.ended_at })
})

export const ToolCallRow = Schema.Struct({
  id: ToolCallId,
  session_id: SessionId,
  run_id: Schema.NullOr(RunId),
  name: Schema.NullOr(Schema.String),
  effect: Schema.NullOr(ToolEffect),
  arguments: Schema.String,
  status: Schema.Union(ToolCallStatus, Schema.Literal("running")),
  result: Schema.NullOr(Schema.String),
  started_at: OptionalMillis,
  ended_at: OptionalMillis
})
export const toolCallColumns = "id, session_id, run_id, name, effect, arguments, status, result, started_at, ended_at"

export const toToolCallRecord = (row: typeof ToolCallRow.Type): ToolCallRecord => ({
  id: row.id,
  sessionId: row.session_id,
  ...(row.run_id === null ? {} : { runId: row.run_id }),
  // Journals written before v4 did not record the tool's name.
  name: row.name ?? "",
  ...(row.effect === null ? {} : { effect: row.effect }),
  arguments: row.arguments,
  status: row.status,
  ...(row.result === null ? {} : { result: row.result }),
  ...(row.started_at === null ? {} : { startedAt: row.started_at }),
  ...(row.ended_at === null ? {} : { endedAt: row.ended_at })
})

/** A live owner candidate: a row left queued or running, and who left it. */
export const UnfinishedRow = Schema.Struct({
  id: Schema.String,
  owner_pid: Schema.NullOr(Schema.Int),
  owner_token: Schema.NullOr(Schema.String),
  owner_host: Schema.NullOr(Schema.String)
})

export const LockRow = Schema.Struct({
  pid: Schema.Int,
  token: Schema.String,
  host: Schema.NullOr(Schema.String)
})

export const BlobRow = Schema.Struct({
  hash: BlobHash,
  size: Schema.Int,
  media_type: Schema.String,
  created_at: Millis
})

export const toBlobMeta = (row: typeof BlobRow.Type): BlobMeta => ({
  hash: row.hash,
  size: row.size,
  mediaType: row.media_type,
  createdAt: row.created_at
})

export const PluginValueRow = Schema.Struct({ value: Schema.parseJson() })
