// What the SessionStore tests share: the in-memory store, a run id, events, user messages, a tool
// call id, and a plain query on the database file.

import { RunId, type SessionId, ToolCallId } from "@alisio/domain/Ids"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Database from "@alisio/runtime/internal/sessionDatabase"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"

export const withMemoryStore = <A, E>(body: (store: SessionStore.SessionStoreService) => Effect.Effect<A, E>) =>
  Effect.flatMap(SessionStore.SessionStore, body).pipe(Effect.provide(SessionStore.layerMemory))

export const runId = RunId.make("run-1")

export const event = (
  sessionId: SessionId,
  seq: number,
  run: RunId = runId,
  correlationId?: string
): KnownRunEvent => ({
  schemaVersion: 1,
  type: "turn_completed",
  runId: run,
  seq,
  sessionId,
  time: "2026-11-30T12:00:00.000Z",
  ...(correlationId === undefined ? {} : { correlationId }),
  data: { turn: seq, durationMs: 10, finishReason: "stop", usage: { inputTokens: 3, outputTokens: 4 } }
})

export { user } from "./messages.js"

export const callId = ToolCallId.make("call_1")

/** A plain connection to the same file, for what the store does not expose (integrity, lock rows). */
export const rawQuery = (filename: string, sql: string) =>
  Effect.scoped(Effect.flatMap(Database.open(filename), (db) => db.use(db.run(sql))))
