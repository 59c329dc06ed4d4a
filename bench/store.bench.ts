// Session store (ST-1, ST-3): event appends, message pages and an events scan, each next to a
// floor measured in the same run with bare better-sqlite3 on a database of the same schema.
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RunId, SessionId } from "@alisio/domain/Ids"
import type { Message } from "@alisio/domain/Message"
import { encodeRunEvent, type KnownRunEvent } from "@alisio/domain/RunEvent"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import { median, row } from "./measure.js"

interface BareStatement {
  run(...params: ReadonlyArray<unknown>): unknown
  get(...params: ReadonlyArray<unknown>): unknown
  all(...params: ReadonlyArray<unknown>): Array<unknown>
}
interface BareDatabase {
  pragma(source: string): unknown
  prepare(source: string): BareStatement
  close(): void
}
const Sqlite = createRequire(import.meta.url)("better-sqlite3") as new (filename: string) => BareDatabase

const EVENTS = 100_000
const CHUNK = 10_000
const MESSAGES = 10_000
const PAGE = 50
const SCAN_PAGE = 500
const PAGE_RUNS = 200

const sessionId = SessionId.make("bench-session")
const runId = RunId.make("bench-run")

const event = (seq: number): KnownRunEvent => ({
  schemaVersion: 1,
  type: "tool_call_completed",
  runId,
  seq,
  sessionId,
  time: "2026-11-30T12:00:00.000Z",
  data: {
    toolCallId: "call_1" as never,
    name: "read",
    status: "completed",
    result: "42 lines of src/main.ts",
    durationMs: 12
  }
})

const message = (i: number): Message =>
  i % 2 === 0
    ? { role: "user", content: [{ _tag: "text", text: `question ${i}: what does this function do?` }] }
    : { role: "assistant", content: [{ _tag: "text", text: `answer ${i}: it reads the file and counts the lines.` }] }

/** A database with the store's schema, opened bare with the store's pragmas. */
const openBare = (filename: string): Effect.Effect<BareDatabase> =>
  Effect.gen(function* () {
    yield* Effect.scoped(Effect.orDie(SessionStore.make({ filename })))
    const db = new Sqlite(filename)
    db.pragma("journal_mode = WAL")
    db.pragma("busy_timeout = 5000")
    db.pragma("foreign_keys = ON")
    db.pragma("synchronous = NORMAL")
    db.prepare(
      "INSERT INTO sessions (id, cwd, status, created_at, updated_at) VALUES (?, '/bench', 'running', 0, 0)"
    ).run(sessionId)
    return db
  })

const microsPer = (ms: number, count: number) => (ms * 1000) / count

const timeEach = (runs: number, effect: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function* () {
    const times: Array<number> = []
    for (let i = 0; i < runs; i++) {
      const start = performance.now()
      yield* effect
      times.push(performance.now() - start)
    }
    return median(times)
  })

const bench = Effect.gen(function* () {
  const dir = mkdtempSync(join(tmpdir(), "alisio-bench-store-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
  const store = yield* Effect.orDie(SessionStore.make({ filename: join(dir, "store.db") }))
  const bare = yield* openBare(join(dir, "bare.db"))
  yield* Effect.addFinalizer(() => Effect.sync(() => bare.close()))
  yield* Effect.orDie(store.createSession({ id: sessionId, cwd: "/bench", status: "running" }))

  // Appends, alternating chunks so that drift (WAL growth, checkpoints, disk) hits both alike.
  const insert = bare.prepare(
    "INSERT INTO events (session_id, run_id, type, payload, created_at, correlation_id) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq"
  )
  const sample = event(1)
  const payload = JSON.stringify(encodeRunEvent(sample))
  let floorMs = 0
  let storeMs = 0
  for (let done = 0; done < EVENTS; done += CHUNK) {
    let start = performance.now()
    for (let i = 0; i < CHUNK; i++) insert.get(sessionId, runId, sample.type, payload, Date.now(), null)
    floorMs += performance.now() - start
    start = performance.now()
    for (let i = 0; i < CHUNK; i++) yield* Effect.orDie(store.appendEvent(event(done + i + 1)))
    storeMs += performance.now() - start
  }
  const floorAppend = microsPer(floorMs, EVENTS)
  row("bare better-sqlite3 insert (floor), per event", floorAppend, "µs")
  row(`appendEvent ×${EVENTS / 1000}k, 1 tx each, per event`, microsPer(storeMs, EVENTS), "µs", floorAppend)

  // Pages of a 10k-message session.
  const messagesSession = SessionId.make("bench-messages")
  yield* Effect.orDie(store.createSession({ id: messagesSession, cwd: "/bench", status: "completed" }))
  for (let i = 0; i < MESSAGES; i += 100) {
    yield* Effect.orDie(
      store.appendMessages(
        messagesSession,
        Array.from({ length: 100 }, (_, k) => message(i + k))
      )
    )
  }
  const reader = new Sqlite(join(dir, "store.db"))
  yield* Effect.addFinalizer(() => Effect.sync(() => reader.close()))
  const firstBare = reader.prepare(
    "SELECT session_id, position, run_id, message, created_at FROM messages WHERE session_id = ? AND position > ? ORDER BY position LIMIT ?"
  )
  const lastBare = reader.prepare(
    "SELECT session_id, position, run_id, message, created_at FROM messages WHERE session_id = ? AND position < ? ORDER BY position DESC LIMIT ?"
  )
  const floorFirst = yield* timeEach(
    PAGE_RUNS,
    Effect.sync(() => firstBare.all(messagesSession, 0, PAGE + 1))
  )
  const floorLast = yield* timeEach(
    PAGE_RUNS,
    Effect.sync(() => lastBare.all(messagesSession, Number.MAX_SAFE_INTEGER, PAGE + 1))
  )
  const first = yield* timeEach(PAGE_RUNS, Effect.orDie(store.messagesPage!(messagesSession, { limit: PAGE })))
  const last = yield* timeEach(
    PAGE_RUNS,
    Effect.orDie(store.messagesPage!(messagesSession, { limit: PAGE, direction: "backward" }))
  )
  row(`bare select, first ${PAGE}-message page (floor)`, floorFirst * 1000, "µs")
  row(`messagesPage, first page of ${MESSAGES / 1000}k messages`, first * 1000, "µs", floorFirst * 1000)
  row(`bare select, last ${PAGE}-message page (floor)`, floorLast * 1000, "µs")
  row(`messagesPage, last page of ${MESSAGES / 1000}k messages`, last * 1000, "µs", floorLast * 1000)

  // A full eventsPage scan of the 100k events, decoded.
  const scanBare = reader.prepare(
    "SELECT seq, payload FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?"
  )
  let start = performance.now()
  let count = 0
  for (let after = 0; ; ) {
    const rows = scanBare.all(sessionId, after, SCAN_PAGE) as Array<{ seq: number; payload: string }>
    for (const r of rows) JSON.parse(r.payload)
    count += rows.length
    if (rows.length < SCAN_PAGE) break
    after = rows[rows.length - 1]!.seq
  }
  const floorScan = microsPer(performance.now() - start, count)
  start = performance.now()
  let scanned = 0
  for (let cursor: string | undefined = undefined; ; ) {
    const page: SessionStore.Page<SessionStore.StoredEvent> = yield* Effect.orDie(
      store.eventsPage!(sessionId, { limit: SCAN_PAGE, ...(cursor === undefined ? {} : { cursor }) })
    )
    scanned += page.items.length
    if (page.next === undefined) break
    cursor = page.next
  }
  if (scanned !== EVENTS) return yield* Effect.dieMessage(`scanned ${scanned} events, expected ${EVENTS}`)
  row(`bare select + JSON.parse by ${SCAN_PAGE} (floor), per event`, floorScan, "µs")
  row(
    `eventsPage scan of ${EVENTS / 1000}k by ${SCAN_PAGE}, per event`,
    microsPer(performance.now() - start, scanned),
    "µs",
    floorScan
  )
})

export const run = (): Promise<void> => Effect.runPromise(Effect.scoped(bench))
