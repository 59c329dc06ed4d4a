// Session store (ST-1, ST-3): event appends, message pages and an events scan, each next to a
// floor measured in the same run with bare better-sqlite3 on a database of the same schema; and
// the longest event-loop stall while another process holds the write lock (issue 10, goal < 100 ms).
import { spawn } from "node:child_process"
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
const require = createRequire(import.meta.url)
const Sqlite = require("better-sqlite3") as new (filename: string) => BareDatabase

const HOLD_MS = 1000

/** Another process takes the write lock of `filename` and keeps it for `ms`; resolves once it holds it. */
const holdWriteLock = (filename: string, ms: number) =>
  new Promise<{ readonly released: Promise<void> }>((resolve, reject) => {
    const script = `
      const Sqlite = require(${JSON.stringify(require.resolve("better-sqlite3"))})
      const db = new Sqlite(${JSON.stringify(filename)})
      db.exec("BEGIN IMMEDIATE")
      db.prepare("INSERT INTO plugin_state (plugin_id, key, value, updated_at) VALUES ('bench', 'hold', '1', 0) ON CONFLICT DO NOTHING").run()
      process.stdout.write("held\\n")
      setTimeout(() => { db.exec("COMMIT"); db.close() }, ${ms})`
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
    const released = new Promise<void>((done) => child.on("close", () => done()))
    child.on("error", reject)
    child.stdout.once("data", () => resolve({ released }))
  })

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * The longest event-loop stall (ms) while `work` runs: the largest gap between two ticks of a
 * 5 ms interval, less the interval. (`perf_hooks.monitorEventLoopDelay` missed a whole blocked second here.)
 */
const longestStall = async (work: () => Promise<void>): Promise<number> => {
  let last = performance.now()
  let longest = 0
  const probe = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, 5)
  await work()
  // The stall of a blocking call shows when the probe finally runs: give it a turn.
  await sleep(20)
  clearInterval(probe)
  return Math.max(0, longest - 5)
}

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

const STALL_ROUNDS = 5

/**
 * Writes while another process holds the write lock for HOLD_MS, STALL_ROUNDS times: the store
 * waits between attempts on the Effect clock. The floor is the same probe over an idle HOLD_MS
 * (what the machine's load alone costs); bare better-sqlite3 with the old 5 s busy_timeout shows
 * what the store did before.
 */
const lockedStall = async () => {
  const dir = mkdtempSync(join(tmpdir(), "alisio-bench-lock-"))
  try {
    const filename = join(dir, "store.db")
    const idle: Array<number> = []
    const locked: Array<number> = []
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const store = yield* Effect.orDie(SessionStore.make({ filename }))
          yield* Effect.orDie(store.createSession({ id: sessionId, cwd: "/bench", status: "running" }))
          for (let round = 0; round < STALL_ROUNDS; round++) {
            idle.push(yield* Effect.promise(() => longestStall(() => sleep(HOLD_MS))))
            const holder = yield* Effect.promise(() => holdWriteLock(filename, HOLD_MS))
            const stall = yield* Effect.promise(() =>
              longestStall(async () => {
                for (let i = 1; i <= 20; i++) {
                  await Effect.runPromise(Effect.orDie(store.appendEvent(event(round * 20 + i))))
                }
              })
            )
            yield* Effect.promise(() => holder.released)
            locked.push(stall)
          }
        })
      )
    )
    const bare = new Sqlite(filename)
    bare.pragma("busy_timeout = 5000")
    const insert = bare.prepare(
      "INSERT INTO plugin_state (plugin_id, key, value, updated_at) VALUES ('bench', ?, '1', 0)"
    )
    const holder = await holdWriteLock(filename, HOLD_MS)
    const blocked = await longestStall(async () => {
      insert.run("bare")
    })
    await holder.released
    bare.close()
    const floor = median(idle)
    row(`event-loop stall, idle ${HOLD_MS} ms (floor), median`, floor, "ms")
    row(`longest stall, store under a ${HOLD_MS} ms write lock, median`, median(locked), "ms", floor)
    row(`longest stall, same, worst of ${STALL_ROUNDS}`, Math.max(...locked), "ms")
    row("same, bare better-sqlite3 busy_timeout 5 s (before)", blocked, "ms")
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const run = async (): Promise<void> => {
  await Effect.runPromise(Effect.scoped(bench))
  await lockedStall()
}
