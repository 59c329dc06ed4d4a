import { join } from "node:path"
import { RunId, SessionId, ToolCallId } from "@alisio/domain/Ids"
import type { Message } from "@alisio/domain/Message"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Database from "../src/internal/sessionDatabase.js"
import { migrate, SCHEMA_VERSION, steps } from "../src/internal/sessionMigrations.js"
import * as SessionStore from "../src/SessionStore.js"
import { tempDir } from "./fixtures/storeTesting.js"

/** A database brought to `version` by the migrator, then filled by `write` in that era's shape. */
const fixture = (filename: string, version: number, write: ReadonlyArray<readonly [string, ReadonlyArray<unknown>]>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const db = yield* Database.open(filename)
      assert.deepStrictEqual(yield* migrate(db, version), { from: 0, to: version })
      yield* db.transaction(Effect.forEach(write, ([sql, params]) => db.run(sql, params), { discard: true }))
    })
  )

const query = (filename: string, sql: string) =>
  Effect.scoped(Effect.flatMap(Database.open(filename), (db) => db.use(db.run(sql))))

const question: Message = { role: "user", content: [{ _tag: "text", text: "what is in a.ts?" }] }
const answer: Message = {
  role: "assistant",
  content: [{ _tag: "tool_call", id: ToolCallId.make("call_1"), name: "read", arguments: '{"path":"a.ts"}' }]
}
const oldEvent = {
  schemaVersion: 1,
  type: "run_completed",
  runId: "run-old",
  seq: 3,
  sessionId: "ses-1",
  time: "2025-01-02T03:04:05.000Z",
  data: { text: "done", turns: 1, usage: { inputTokens: 10, outputTokens: 2 } }
}

const v1Rows = [
  [
    "INSERT INTO sessions (id, title, cwd, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
    ["ses-1", "old", "/work", 100, 200]
  ],
  [
    "INSERT INTO messages (session_id, position, run_id, role, message, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ["ses-1", 1, "run-old", "user", JSON.stringify(question), 110]
  ],
  [
    "INSERT INTO messages (session_id, position, run_id, role, message, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ["ses-1", 2, "run-old", "assistant", JSON.stringify(answer), 120]
  ],
  [
    "INSERT INTO events (session_id, run_id, type, payload) VALUES (?, ?, ?, ?)",
    ["ses-1", "run-old", "run_completed", JSON.stringify(oldEvent)]
  ]
] as const

const v2Rows = [
  ...v1Rows,
  [
    "INSERT INTO tool_calls (id, session_id, arguments, status, result) VALUES (?, ?, ?, ?, ?)",
    ["call_1", "ses-1", '{"path":"a.ts"}', "completed", "1 line"]
  ],
  [
    "INSERT INTO plugin_state (plugin_id, key, value, updated_at) VALUES (?, ?, ?, ?)",
    ["memory", "notes", '["remember"]', 130]
  ]
] as const

const v3Rows = [
  ...v2Rows,
  [
    "INSERT INTO sessions (id, title, cwd, created_at, updated_at, parent_id, status) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ["ses-child", "child", "/work", 140, 150, "ses-1", "running"]
  ],
  [
    "INSERT INTO session_locks (session_id, pid, token, host, acquired_at) VALUES (?, ?, ?, ?, ?)",
    ["ses-1", 1, "t", null, 160]
  ]
] as const

const v4Run = (id: string, session: string, requestId: string | null, at: number) =>
  [
    `INSERT INTO runs (id, session_id, request_id, status, provider, model, owner_pid, owner_token, created_at, started_at, ended_at)
      VALUES (?, ?, ?, 'completed', 'p', 'm', 1, 't', ?, ?, ?)`,
    [id, session, requestId, at, at, at + 1]
  ] as const

const v4Rows = [
  ...v3Rows,
  [
    "INSERT INTO sessions (id, title, cwd, created_at, updated_at, status, pinned, archived) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    ["ses-2", "second", "/elsewhere", 300, 300, "completed", 1, 0]
  ],
  // v4 kept request ids unique per session only: "req-dup" ran in two root sessions.
  v4Run("run-a", "ses-1", "req-dup", 310),
  v4Run("run-b", "ses-2", "req-dup", 320),
  v4Run("run-c", "ses-child", "req-child", 330),
  v4Run("run-d", "ses-2", "req-solo", 340),
  v4Run("run-e", "ses-2", null, 350),
  ["INSERT INTO workspaces (path, label, pinned, last_opened_at) VALUES (?, ?, ?, ?)", ["/work", "Work", 1, 360]],
  ["INSERT INTO blobs (hash, size, media_type, created_at) VALUES (?, ?, ?, ?)", ["ab".repeat(32), 3, "image/png", 370]]
] as const

/** Every row written by the fixtures of era `version`, read back through the current store. */
const assertKept = (store: SessionStore.SessionStoreService, version: number) =>
  Effect.gen(function* () {
    const session = yield* store.session(SessionId.make("ses-1"))
    assert.deepStrictEqual(session, {
      id: SessionId.make("ses-1"),
      title: "old",
      cwd: "/work",
      status: "completed",
      pinned: false,
      archived: false,
      createdAt: 100,
      updatedAt: 200
    })
    const messages = yield* store.messages(session.id)
    assert.deepStrictEqual(
      messages.map((m) => ({ position: m.position, runId: m.runId, message: m.message, at: m.createdAt })),
      [
        { position: 1, runId: RunId.make("run-old"), message: question, at: 110 },
        { position: 2, runId: RunId.make("run-old"), message: answer, at: 120 }
      ]
    )
    const events = yield* store.events(session.id)
    assert.deepStrictEqual(events, [{ ...oldEvent, eventId: "1" }] as unknown as typeof events)
    if (version >= 2) {
      const [call] = yield* store.toolCalls(session.id)
      assert.strictEqual(call?.status, "completed")
      assert.strictEqual(call?.result, "1 line")
      assert.strictEqual(call?.arguments, '{"path":"a.ts"}')
      assert.deepStrictEqual(yield* store.pluginState.get("memory", "notes"), Option.some(["remember"]))
    }
    if (version >= 3) {
      const child = yield* store.session(SessionId.make("ses-child"))
      assert.strictEqual(child.parentId, "ses-1")
      assert.strictEqual(child.status, "running")
    }
    // New rows go on after the old ones.
    const [next] = yield* store.appendMessages(session.id, [question])
    assert.strictEqual(next?.position, 3)
    assert.strictEqual(
      yield* store.appendEvent({
        ...oldEvent,
        type: "run_started",
        data: { provider: "p", model: "m", readOnly: false }
      } as never),
      "2"
    )
  })

describe("Session database migrations", () => {
  it.scoped("ST-1 a v1 database (sessions, messages, events) opens at v6 with every row kept", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      yield* fixture(filename, 1, v1Rows)
      const store = yield* SessionStore.make({ filename })
      assert.deepStrictEqual(yield* query(filename, "PRAGMA user_version"), [{ user_version: SCHEMA_VERSION }])
      yield* assertKept(store, 1)
    })
  )

  it.scoped("ST-1 a v2 database (tool journal, plugin state) opens at v6 with every row kept", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      yield* fixture(filename, 2, v2Rows)
      const store = yield* SessionStore.make({ filename })
      yield* assertKept(store, 2)
      const [call] = yield* store.toolCalls(SessionId.make("ses-1"))
      // v2 did not record the name: it reads as empty rather than failing.
      assert.strictEqual(call?.name, "")
    })
  )

  it.scoped("ST-1 a v3 database (lock, child sessions) opens at v6 with every row kept", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      yield* fixture(filename, 3, v3Rows)
      const store = yield* SessionStore.make({ filename })
      yield* assertKept(store, 3)
      assert.deepStrictEqual(yield* query(filename, "SELECT session_id, pid FROM session_locks"), [
        { session_id: "ses-1", pid: 1 }
      ])
      // A child left running by a v3 process has no owner on record: start-up interrupts it (ST-4).
      assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 1 })
      assert.strictEqual((yield* store.session(SessionId.make("ses-child"))).status, "interrupted")
    })
  )

  it.scoped(
    "ST-1 ST-2 a v4 database (runs, workspaces, blobs) opens at v6 with every row kept; root request ids are claimed",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        yield* fixture(filename, 4, v4Rows)
        const store = yield* SessionStore.make({ filename })
        assert.deepStrictEqual(yield* query(filename, "PRAGMA user_version"), [{ user_version: SCHEMA_VERSION }])
        yield* assertKept(store, 4)
        assert.deepStrictEqual(
          (yield* store.runs!(SessionId.make("ses-2"))).map((run) => [run.id, run.requestId ?? null, run.status]),
          [
            ["run-b", "req-dup", "completed"],
            ["run-d", "req-solo", "completed"],
            ["run-e", null, "completed"]
          ]
        )
        assert.deepStrictEqual(yield* query(filename, "SELECT path, label, pinned, last_opened_at FROM workspaces"), [
          { path: "/work", label: "Work", pinned: 1, last_opened_at: 360 }
        ])
        assert.strictEqual(Option.getOrThrow(yield* store.blobs.get("ab".repeat(32) as never)).size, 3)
        // Of the root runs of a request id, the earliest claims it; a child's request id claims nothing.
        const claimed = (id: string) =>
          Effect.map(
            store.runForRequest!(id),
            Option.map((run) => run.id)
          )
        assert.deepStrictEqual(yield* claimed("req-dup"), Option.some(RunId.make("run-a")))
        assert.deepStrictEqual(yield* claimed("req-solo"), Option.some(RunId.make("run-d")))
        assert.deepStrictEqual(yield* claimed("req-child"), Option.none())
        // Per session, each run is still found by its own request id.
        assert.strictEqual(
          Option.getOrThrow(yield* store.runByRequest!(SessionId.make("ses-2"), "req-dup")).id,
          RunId.make("run-b")
        )
      })
  )

  it.scoped("ST-1 CTX-1 a v5 database opens at v6 with every row kept; its sessions can be compacted and deleted", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      yield* fixture(filename, 5, [
        ...v4Rows,
        ["INSERT INTO run_requests (request_id, run_id, created_at) VALUES (?, ?, ?)", ["req-v5", "run-e", 380]]
      ])
      const store = yield* SessionStore.make({ filename })
      assert.deepStrictEqual(yield* query(filename, "PRAGMA user_version"), [{ user_version: 6 }])
      yield* assertKept(store, 5)
      assert.deepStrictEqual(
        Option.map(yield* store.runForRequest!("req-v5"), (run) => run.id),
        Option.some(RunId.make("run-e"))
      )
      const session = SessionId.make("ses-2")
      assert.isTrue(Option.isNone(yield* store.compactions!.latest(session)))
      const added = yield* store.compactions!.add({
        sessionId: session,
        firstPosition: 1,
        lastPosition: 2,
        summary: "read a.ts",
        tokensBefore: 40,
        tokensAfter: 12,
        messagesCompacted: 2,
        focus: "files"
      })
      assert.deepStrictEqual(Option.getOrThrow(yield* store.compactions!.latest(session)), added)
      assert.deepStrictEqual(
        yield* query(filename, "SELECT session_id, first_position, last_position, summary, focus FROM compactions"),
        [{ session_id: "ses-2", first_position: 1, last_position: 2, summary: "read a.ts", focus: "files" }]
      )
      // A session's compactions go with it.
      yield* store.deleteSessions([session])
      assert.deepStrictEqual(yield* query(filename, "SELECT count(*) AS n FROM compactions"), [{ n: 0 }])
    })
  )

  it.scoped("ST-1 ST-2 v4, v5 and v6 only add tables, indexes and nullable columns, so v3-era queries still work", () =>
    Effect.gen(function* () {
      const v3 = join(yield* tempDir, "v3.db")
      yield* fixture(v3, 3, [])
      const v3Tables = (yield* query(
        v3,
        "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"
      )) as Array<{
        name: string
      }>
      const columns = (filename: string, table: string) => query(filename, `PRAGMA table_info(${table})`)
      const before = new Map<string, ReadonlyArray<unknown>>()
      for (const { name } of v3Tables) before.set(name, yield* columns(v3, name))

      yield* Effect.scoped(SessionStore.make({ filename: v3 }))
      for (const { name } of v3Tables) {
        const after = (yield* columns(v3, name)) as Array<{ name: string; notnull: number; pk: number }>
        const old = before.get(name)!
        assert.deepStrictEqual(after.slice(0, old.length), old, `columns of ${name} kept as they were`)
        for (const added of after.slice(old.length)) {
          assert.strictEqual(added.notnull, 0, `${name}.${added.name} is nullable`)
        }
      }
      // What a v3 binary writes and reads still works on the current file.
      yield* Effect.scoped(
        Effect.gen(function* () {
          const db = yield* Database.open(v3)
          yield* db.transaction(Effect.forEach(v3Rows, ([sql, params]) => db.run(sql, params), { discard: true }))
          const rows = yield* db.use(
            db.run(
              "SELECT s.id, s.status, count(m.position) AS messages FROM sessions s LEFT JOIN messages m ON m.session_id = s.id GROUP BY s.id ORDER BY s.id"
            )
          )
          assert.deepStrictEqual(rows, [
            { id: "ses-1", status: "completed", messages: 2 },
            { id: "ses-child", status: "running", messages: 0 }
          ])
        })
      )
    })
  )

  it.scoped("ST-1 every step is numbered in order and re-opening a v6 database changes nothing", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(
        steps.map((step) => step.version),
        [1, 2, 3, 4, 5, 6]
      )
      assert.strictEqual(SCHEMA_VERSION, 6)
      const filename = join(yield* tempDir, "alisio.db")
      yield* fixture(filename, SCHEMA_VERSION, [])
      const schema = yield* query(filename, "SELECT sql FROM sqlite_schema ORDER BY name")
      const again = yield* Effect.scoped(Effect.flatMap(Database.open(filename), (db) => migrate(db)))
      assert.deepStrictEqual(again, { from: 6, to: 6 })
      yield* Effect.scoped(SessionStore.make({ filename }))
      assert.deepStrictEqual(yield* query(filename, "SELECT sql FROM sqlite_schema ORDER BY name"), schema)
    })
  )

  it.scoped("ST-1 a database from a newer Alisio fails with newer_version and is not migrated", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      yield* fixture(filename, SCHEMA_VERSION, [["PRAGMA user_version = 7", []]])
      const schema = yield* query(filename, "SELECT sql FROM sqlite_schema ORDER BY name")
      const error = yield* Effect.flip(SessionStore.make({ filename }))
      assert.strictEqual(error.reason, "newer_version")
      assert.include(error.message, filename)
      assert.include(error.message, "version 7")
      assert.include(error.message, "Update Alisio")
      assert.deepStrictEqual(yield* query(filename, "PRAGMA user_version"), [{ user_version: 7 }])
      assert.deepStrictEqual(yield* query(filename, "SELECT sql FROM sqlite_schema ORDER BY name"), schema)
    })
  )
})
