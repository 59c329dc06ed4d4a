// What schema v4 adds (ST-2): the runs, workspaces and blobs tables, the nullable columns, and the
// run rows and session times the runner keeps in them.

import { ProviderError } from "@alisio/domain/Errors"
import { RunStatus } from "@alisio/domain/RunEvent"
import * as Fake from "@alisio/providers/FakeProvider"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as Database from "../src/internal/sessionDatabase.js"
import { migrate } from "../src/internal/sessionMigrations.js"
import { currentOwner } from "../src/ProcessOwner.js"
import { Runner } from "../src/Runner.js"
import * as SessionStore from "../src/SessionStore.js"
import { baseOptions, runnerLayer } from "./helpers/harness.js"

interface Column {
  readonly name: string
  readonly notnull: number
  readonly pk: number
}

/** An in-memory database migrated to `version`, with its tables and their columns. */
const schemaAt = (version: number) =>
  Effect.gen(function* () {
    const db = yield* Database.open(Database.MEMORY)
    yield* migrate(db, version)
    const query = (sql: string, params?: ReadonlyArray<unknown>) => db.use(db.run(sql, params))
    const tables = (yield* query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")) as Array<{
      name: string
    }>
    const columns = new Map<string, ReadonlyArray<Column>>()
    for (const { name } of tables) columns.set(name, (yield* query(`PRAGMA table_info(${name})`)) as Array<Column>)
    return { query, columns }
  })

const names = (columns: ReadonlyArray<Column> | undefined) => (columns ?? []).map((column) => column.name)

describe("SessionStore schema v4", () => {
  it.scoped(
    "ST-2 v4 adds the runs, workspaces and blobs tables and nullable session, event and tool-call columns",
    () =>
      Effect.gen(function* () {
        const v3 = yield* schemaAt(3)
        const v4 = yield* schemaAt(4)
        assert.deepStrictEqual([...v4.columns.keys()].filter((table) => !v3.columns.has(table)).sort(), [
          "blobs",
          "runs",
          "workspaces"
        ])
        const runs = v4.columns.get("runs")!
        for (const column of [
          "id",
          "session_id",
          "request_id",
          "status",
          "provider",
          "model",
          "usage",
          "error",
          "owner_pid",
          "owner_token",
          "owner_host",
          "created_at",
          "started_at",
          "ended_at"
        ]) {
          assert.include(names(runs), column, `runs.${column}`)
        }
        assert.deepStrictEqual(
          runs.filter((column) => column.pk > 0).map((column) => column.name),
          ["id"]
        )
        for (const optional of ["request_id", "usage", "error", "started_at", "ended_at"]) {
          assert.strictEqual(
            runs.find((column) => column.name === optional)?.notnull,
            0,
            `runs.${optional} is nullable`
          )
        }
        for (const column of ["path", "label", "pinned", "last_opened_at"]) {
          assert.include(names(v4.columns.get("workspaces")), column, `workspaces.${column}`)
        }
        for (const column of ["hash", "size", "media_type", "created_at"]) {
          assert.include(names(v4.columns.get("blobs")), column, `blobs.${column}`)
        }

        const added = (table: string) => {
          const before = new Set(names(v3.columns.get(table)))
          return (v4.columns.get(table) ?? []).filter((column) => !before.has(column.name))
        }
        const expected: Record<string, ReadonlyArray<string>> = {
          sessions: ["pinned", "archived"],
          events: ["created_at", "correlation_id"],
          tool_calls: ["run_id", "name", "effect", "started_at", "ended_at"]
        }
        for (const [table, columns] of Object.entries(expected)) {
          const got = added(table)
          for (const column of columns) assert.include(names(got), column, `${table}.${column} added in v4`)
          for (const column of got) assert.strictEqual(column.notnull, 0, `${table}.${column.name} is nullable`)
        }
      })
  )

  it.scoped("ST-2 a run's request_id is unique per session; other sessions and runs without one are free", () =>
    Effect.gen(function* () {
      const { query } = yield* schemaAt(4)
      for (const id of ["ses-1", "ses-2"]) {
        yield* query("INSERT INTO sessions (id, cwd, created_at, updated_at) VALUES (?, '/w', 1, 1)", [id])
      }
      const insertRun = (id: string, session: string, requestId: string | null) =>
        query(
          `INSERT INTO runs (id, session_id, request_id, status, provider, model, owner_pid, owner_token, created_at)
            VALUES (?, ?, ?, 'queued', 'p', 'm', 1, 't', 1)`,
          [id, session, requestId]
        )
      yield* insertRun("run-1", "ses-1", "req")
      const repeated = yield* Effect.flip(insertRun("run-2", "ses-1", "req"))
      assert.include(repeated.message, "UNIQUE")
      yield* insertRun("run-3", "ses-2", "req")
      yield* insertRun("run-4", "ses-1", null)
      yield* insertRun("run-5", "ses-1", null)
      assert.deepStrictEqual(yield* query("SELECT id FROM runs ORDER BY id"), [
        { id: "run-1" },
        { id: "run-3" },
        { id: "run-4" },
        { id: "run-5" }
      ])
    })
  )

  it.effect(
    "ST-2 the runner keeps one runs row per run (id = runId) with status, model, usage, times, error and owner; the root session its times",
    () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(RunStatus.literals, [
          "queued",
          "running",
          "completed",
          "turns_exceeded",
          "failed",
          "cancelled",
          "interrupted"
        ])
        const runner = yield* Runner
        const store = yield* SessionStore.SessionStore
        yield* TestClock.adjust(1_000)
        const answering = yield* Effect.fork(runner.run(baseOptions))
        yield* TestClock.adjust(500)
        const first = yield* Fiber.join(answering)
        yield* TestClock.adjust(1_000)
        const second = yield* runner.run({ ...baseOptions, sessionId: first.sessionId })
        assert.deepStrictEqual([first.status, second.status], ["completed", "failed"])

        const rows = yield* store.runs!(first.sessionId)
        assert.deepStrictEqual(
          rows.map((run) => [run.id, run.sessionId, run.status, run.provider, run.model]),
          [
            [first.runId, first.sessionId, "completed", "fake", "fake-model"],
            [second.runId, first.sessionId, "failed", "fake", "fake-model"]
          ]
        )
        const [done, failed] = rows
        assert.deepStrictEqual(done!.usage, first.usage)
        assert.deepStrictEqual([done!.createdAt, done!.startedAt, done!.endedAt], [1_000, 1_000, 1_500])
        assert.isUndefined(done!.error)
        assert.deepStrictEqual([failed!.createdAt, failed!.startedAt, failed!.endedAt], [2_500, 2_500, 2_500])
        assert.include(failed!.error, "bad key")
        for (const run of rows) assert.deepStrictEqual(run.owner, currentOwner)

        const session = yield* store.session(first.sessionId)
        assert.isUndefined(session.parentId)
        assert.deepStrictEqual([session.createdAt, session.updatedAt, session.status], [1_000, 2_500, "failed"])
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: [
              [Fake.delay(500), ...Fake.answer("ok")],
              [Fake.fail(new ProviderError({ code: "auth", message: "bad key" }))]
            ]
          })
        )
      )
  )
})
