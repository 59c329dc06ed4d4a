// Run events for the CLI's unit tests, built as the runner emits them (Schema-typed payloads).
import { RunId, SessionId } from "@alisio/domain/Ids"
import type { KnownRunEvent, RunEventDataMap, RunEventType } from "@alisio/domain/RunEvent"

export const sessionId = SessionId.make("1a2b3c4d-0000-4000-8000-000000000001")
export const runId = RunId.make("run-1")

/** A stream of events of one run: each call stamps the next `seq`, at `atMs` after 12:00:00 UTC. */
export const eventsOfOneRun = () => {
  let seq = 0
  return <K extends RunEventType>(type: K, data: RunEventDataMap[K], atMs = 0): KnownRunEvent =>
    ({
      schemaVersion: 1,
      type,
      runId,
      seq: ++seq,
      sessionId,
      time: new Date(Date.UTC(2026, 0, 1, 12) + atMs).toISOString(),
      data
    }) as KnownRunEvent
}
