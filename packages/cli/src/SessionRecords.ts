// What `alisio sessions … --json` writes: Schemas of the records, encoded, never objects built by
// hand. Times are ISO-8601 text on the wire and epoch milliseconds in the store's records.

import { RunId, SessionId } from "@alisio/domain/Ids"
import { Message } from "@alisio/domain/Message"
import { RunStatus } from "@alisio/domain/RunEvent"
import { Usage } from "@alisio/domain/Usage"
import type { RunRecord, Session, SessionSummary, StoredMessage } from "@alisio/runtime/SessionStore"
import { fromPrompt } from "@alisio/runtime/SessionTitles"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Schema from "effect/Schema"
import { jsonLine } from "./JsonLine.js"
import { shortId } from "./ShortIds.js"

/** Epoch milliseconds, written as an ISO-8601 timestamp. */
const IsoTime = Schema.transform(Schema.String, Schema.Number, {
  strict: true,
  decode: (text) => Date.parse(text),
  encode: (ms) => new Date(ms).toISOString()
})

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const sessionFields = {
  id: SessionId,
  /** The first characters of the id, as lists show it and commands accept it. */
  shortId: Schema.String,
  parentId: optional(SessionId),
  title: optional(Schema.String),
  cwd: Schema.String,
  status: RunStatus,
  pinned: Schema.Boolean,
  archived: Schema.Boolean,
  createdAt: IsoTime,
  updatedAt: IsoTime
}

/** A session row as the CLI reports it. */
export const SessionRecord = Schema.Struct(sessionFields)
export type SessionRecord = typeof SessionRecord.Type

/** One line of `sessions list --json`. */
export const SessionListItem = Schema.Struct({
  ...sessionFields,
  runs: Schema.NonNegativeInt,
  children: Schema.NonNegativeInt
})

export const RunJson = Schema.Struct({
  id: RunId,
  status: RunStatus,
  provider: Schema.String,
  model: Schema.String,
  requestId: optional(Schema.String),
  usage: optional(Usage),
  error: optional(Schema.String),
  createdAt: IsoTime,
  startedAt: optional(IsoTime),
  endedAt: optional(IsoTime)
})

export const MessageJson = Schema.Struct({
  position: Schema.Int,
  runId: optional(RunId),
  createdAt: IsoTime,
  message: Message
})

/** A child session and its own children. */
export interface SessionNode extends SessionRecord {
  readonly children: ReadonlyArray<SessionNode>
}
interface SessionNodeEncoded extends Schema.Struct.Encoded<typeof sessionFields> {
  readonly children: ReadonlyArray<SessionNodeEncoded>
}
export const SessionNode = Schema.Struct({
  ...sessionFields,
  children: Schema.Array(Schema.suspend((): Schema.Schema<SessionNode, SessionNodeEncoded> => SessionNode))
})

/** `sessions show --json`: the session, its runs, its messages themselves, and its tree of children. */
export const SessionDetail = Schema.Struct({
  ...sessionFields,
  runs: Schema.Array(RunJson),
  messages: Schema.Array(MessageJson),
  children: Schema.Array(SessionNode)
})

/**
 * The title a person sees: the stored one, else the first line of the first prompt. Plain text on
 * one line, whatever wrote the stored one (another program, a hand edit): it reaches terminals.
 */
export const displayTitle = (session: Session | SessionSummary): string | undefined =>
  session.title !== undefined
    ? plainTitle(session.title)
    : "firstPrompt" in session && session.firstPrompt !== undefined
      ? fromPrompt(session.firstPrompt)
      : undefined

/** A title without escape sequences or control characters, its white space made single spaces. */
export const plainTitle = (title: string): string => terminalSafe(title).replace(/\s+/g, " ").trim()

export const sessionRecord = (session: Session, title = displayTitle(session)): SessionRecord => ({
  id: session.id,
  shortId: shortId(session.id),
  ...(session.parentId === undefined ? {} : { parentId: session.parentId }),
  ...(title === undefined ? {} : { title }),
  cwd: session.cwd,
  status: session.status,
  pinned: session.pinned,
  archived: session.archived,
  createdAt: session.createdAt,
  updatedAt: session.updatedAt
})

export const runJson = (run: RunRecord): typeof RunJson.Type => ({
  id: run.id,
  status: run.status,
  provider: run.provider,
  model: run.model,
  ...(run.requestId === undefined ? {} : { requestId: run.requestId }),
  ...(run.usage === undefined ? {} : { usage: run.usage }),
  ...(run.error === undefined ? {} : { error: run.error }),
  createdAt: run.createdAt,
  ...(run.startedAt === undefined ? {} : { startedAt: run.startedAt }),
  ...(run.endedAt === undefined ? {} : { endedAt: run.endedAt })
})

export const messageJson = (stored: StoredMessage): typeof MessageJson.Type => ({
  position: stored.position,
  ...(stored.runId === undefined ? {} : { runId: stored.runId }),
  createdAt: stored.createdAt,
  message: stored.message
})

/** Writes one encoded record as a line of JSON on stdout. */
export const writeRecord = <A, I>(schema: Schema.Schema<A, I>, value: A): void => {
  process.stdout.write(jsonLine(Schema.encodeSync(schema)(value)))
}
