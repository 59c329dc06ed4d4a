// Helpers of the sessions end-to-end tests: running tasks, reading what the CLI lists, and
// editing the database as another tool would (to make a child session, or an id collision).
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { assert } from "@effect/vitest"
import { SessionListItem } from "alisio/SessionRecords"
import * as Schema from "effect/Schema"
import { loadSqliteDriver } from "../../packages/runtime/src/internal/sqliteDriver.js"
import type { CliResult, CliSandbox } from "./cli.js"

interface BareDb {
  prepare(sql: string): {
    all(...params: ReadonlyArray<unknown>): Array<Record<string, unknown>>
    run(...params: ReadonlyArray<unknown>): unknown
  }
  close(): void
}
// The runtime's loader: on Node 22+ it keeps the native objects alive (see sqliteDriver.ts).
const Sqlite = loadSqliteDriver() as new (filename: string, options?: { readonly readonly?: boolean }) => BareDb

/** Runs statements on the sandbox's session database with the bare driver. */
export const withDatabase = <A>(sandbox: CliSandbox, body: (db: BareDb) => A): A => {
  const db = new Sqlite(join(sandbox.home, "state", "alisio.db"))
  try {
    return body(db)
  } finally {
    db.close()
  }
}

export const count = (sandbox: CliSandbox, table: string, where = "1", ...params: ReadonlyArray<unknown>): number =>
  withDatabase(sandbox, (db) =>
    Number(db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).all(...params)[0]!.n)
  )

/** Makes `child` a child session of `parent`, as a delegated task would have. */
export const adopt = (sandbox: CliSandbox, parent: string, child: string) =>
  withDatabase(sandbox, (db) => db.prepare("UPDATE sessions SET parent_id = ? WHERE id = ?").run(parent, child))

export const ok = (result: CliResult, what = "the command"): CliResult => {
  assert.strictEqual(result.code, 0, `${what} failed: ${result.stderr}`)
  return result
}

const decodeListItem = Schema.decodeUnknownSync(SessionListItem)

/** `sessions list --json` (and its flags), decoded. */
export const listed = async (sandbox: CliSandbox, ...flags: ReadonlyArray<string>) => {
  const result = ok(await sandbox.run(["sessions", "list", "--json", ...flags]), "sessions list --json")
  return result.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => decodeListItem(JSON.parse(line)))
}

/** Runs a task in a new session and returns the session as the list shows it. */
export const runTask = async (
  sandbox: CliSandbox,
  prompt: string,
  options: { readonly cwd?: string } = {}
): Promise<typeof SessionListItem.Type> => {
  if (options.cwd !== undefined) mkdirSync(options.cwd, { recursive: true })
  ok(
    await sandbox.run([
      "run",
      "-m",
      "openai/test-model",
      ...(options.cwd === undefined ? [] : ["--cwd", options.cwd]),
      prompt
    ]),
    `run ${prompt}`
  )
  const sessions = await listed(sandbox, "--all")
  const newest = [...sessions].sort((a, b) => b.createdAt - a.createdAt)[0]
  assert.isDefined(newest)
  return newest!
}

/**
 * Appends `turns` turns to a session, as a long run would have stored them: a question, a call to
 * `bash` (every call with the id `call_0`, as some providers give) and its `resultBytes` of output,
 * an answer. Four messages a turn, in one transaction.
 */
export const seedTurns = (
  sandbox: CliSandbox,
  sessionId: string,
  turns: number,
  options: { readonly resultBytes?: number } = {}
) =>
  withDatabase(sandbox, (db) => {
    const first = Number(
      db.prepare("SELECT coalesce(max(position), -1) + 1 AS n FROM messages WHERE session_id = ?").all(sessionId)[0]!.n
    )
    const insert = db.prepare(
      "INSERT INTO messages (session_id, position, run_id, role, message, created_at) VALUES (?, ?, NULL, ?, ?, 0)"
    )
    const output = "x".repeat(options.resultBytes ?? 100)
    db.prepare("BEGIN").run()
    for (let turn = 0; turn < turns; turn++) {
      const at = first + turn * 4
      const call = {
        _tag: "tool_call",
        id: "call_0",
        name: "bash",
        arguments: JSON.stringify({ command: `echo ${turn}` })
      }
      const rows: ReadonlyArray<readonly [string, unknown]> = [
        ["user", { role: "user", content: [{ _tag: "text", text: `question ${turn}` }] }],
        ["assistant", { role: "assistant", content: [call] }],
        [
          "tool",
          {
            role: "tool",
            toolCallId: "call_0",
            toolName: "bash",
            content: [{ _tag: "text", text: `result ${turn}\n${output}` }],
            isError: false
          }
        ],
        ["assistant", { role: "assistant", content: [{ _tag: "text", text: `answer ${turn}` }] }]
      ]
      for (const [index, [role, message]] of rows.entries()) {
        insert.run(sessionId, at + index, role, JSON.stringify(message))
      }
    }
    db.prepare("COMMIT").run()
  })
