// End-to-end: `--request-id` idempotency across sessions, between racing processes and while the
// first run still goes on (ST-3, ST-4), with real CLI processes against the local OpenAI server.

import { mkdirSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { decodeRunEvent, isEphemeralType, isTerminalType, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type { CliResult, CliSandbox } from "./support/cli.js"
import type { OpenAiTestServer, Reply } from "./support/openaiServer.js"
import { withDatabase } from "./support/sessions.js"
import { useWorld } from "./support/world.js"

const parseJsonl = (stdout: string): ReadonlyArray<KnownRunEvent> =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line, index) => {
      const decoded = decodeRunEvent(JSON.parse(line))
      if (Either.isLeft(decoded) || decoded.right._tag !== "Known")
        throw new Error(`line ${index + 1} is not a KnownRunEvent: ${line}`)
      return decoded.right.event
    })

const persisted = (events: ReadonlyArray<KnownRunEvent>) => events.filter((event) => !isEphemeralType(event.type))

/** Exactly one terminal event, last. */
const assertEnds = (events: ReadonlyArray<KnownRunEvent>, type: string) => {
  const terminals = events.filter((event) => isTerminalType(event.type))
  assert.deepStrictEqual(
    terminals.map((event) => event.type),
    [type]
  )
  assert.strictEqual(events.at(-1), terminals[0])
}

interface BareDb {
  prepare(sql: string): { all(): Array<Record<string, unknown>> }
  close(): void
}
const Sqlite = createRequire(import.meta.url)("better-sqlite3") as new (
  filename: string,
  options?: { readonly readonly?: boolean }
) => BareDb

const rows = (sandbox: CliSandbox, sql: string) => {
  const db = new Sqlite(join(sandbox.home, "state", "alisio.db"), { readonly: true })
  try {
    return db.prepare(sql).all()
  } finally {
    db.close()
  }
}

const chatRequests = (server: OpenAiTestServer) =>
  server.requests.filter((request) => request.path.endsWith("/chat/completions")).length

/** A streamed answer that takes about `ms`, so a repeat can arrive while it runs. */
const slowAnswer = (text: string, ms: number): Reply => ({ kind: "text", text, chunks: 10, delayMs: ms / 10 })

describe("alisio --request-id (end to end)", () => {
  const world = useWorld()
  const setup = (replies: ReadonlyArray<Reply>) => world({ replies })

  const args = (requestId: string, ...more: ReadonlyArray<string>) => [
    "run",
    "--json",
    "--request-id",
    requestId,
    "-m",
    "openai/test-model",
    ...more,
    "do it once"
  ]

  it("ST-3 a repeat without --session, from another folder, finds the run in one query and replays it", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "only once" }])
    const first = await sandbox.run(args("req-elsewhere"))
    assert.strictEqual(first.code, 0, first.stderr)
    const other = join(sandbox.workspace, "..", "other-folder")
    mkdirSync(other)
    const repeat = await sandbox.run(args("req-elsewhere", "--cwd", other))
    assert.strictEqual(repeat.code, 0, repeat.stderr)
    assert.deepStrictEqual(parseJsonl(repeat.stdout), persisted(parseJsonl(first.stdout)))
    assert.strictEqual(chatRequests(server), 1)
    assert.deepStrictEqual(rows(sandbox, "SELECT count(*) AS n FROM sessions"), [{ n: 1 }])
  })

  it("ST-3 a repeat while the first run is still going follows it live to its terminal event", async () => {
    const { sandbox, server } = await setup([slowAnswer("streamed slowly to the first process", 5000)])
    const first = sandbox.start(args("req-live"))
    await first.waitFor('"type":"text_delta"')
    const repeat = sandbox.start(args("req-live"))
    await repeat.waitFor('"type":"run_started"')
    assert.notInclude(first.stdout(), "run_completed", "the first run was still going when the repeat began")
    const [a, b] = await Promise.all([first.done, repeat.done])
    assert.strictEqual(a.code, 0, a.stderr)
    assert.strictEqual(b.code, 0, b.stderr)
    const original = parseJsonl(a.stdout)
    const followed = parseJsonl(b.stdout)
    assertEnds(followed, "run_completed")
    // What the repeat printed is the original run as stored: every persisted event, in order.
    assert.deepStrictEqual(followed, persisted(original))
    assert.strictEqual(chatRequests(server), 1)
  })

  it("ST-3 two processes racing on one request id run it once; the other follows the same run to its end", async () => {
    const { sandbox, server } = await setup([slowAnswer("raced", 1000), { kind: "text", text: "ran twice" }])
    const racers = [sandbox.start(args("req-race")), sandbox.start(args("req-race"))]
    const results: ReadonlyArray<CliResult> = await Promise.all(racers.map((racer) => racer.done))
    for (const result of results) assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(chatRequests(server), 1)
    const [a, b] = results.map((result) => parseJsonl(result.stdout))
    for (const events of [a!, b!]) assertEnds(events, "run_completed")
    assert.strictEqual(a![0]!.runId, b![0]!.runId)
    assert.deepStrictEqual(persisted(a!), persisted(b!))
    // One ran (its deltas streamed), the other followed what was stored.
    assert.strictEqual(
      [a!, b!].filter((events) => events.some((event) => event.type === "text_delta")).length,
      1,
      "exactly one process streamed the answer"
    )
    assert.deepStrictEqual(rows(sandbox, "SELECT count(*) AS n FROM sessions"), [{ n: 1 }])
    assert.deepStrictEqual(rows(sandbox, "SELECT status, request_id FROM runs"), [
      { status: "completed", request_id: "req-race" }
    ])
  })

  it("ST-4 a repeat following a run whose process is killed reports it interrupted and exits 130", async () => {
    const { sandbox } = await setup([{ kind: "text", text: "partial", stallAfter: true }])
    const first = sandbox.start(args("req-killed"))
    await first.waitFor('"type":"text_delta"')
    const repeat = sandbox.start(["run", "--request-id", "req-killed", "-m", "openai/test-model", "do it once"])
    await repeat.waitFor("following it")
    first.child.kill("SIGKILL")
    await first.done
    const result = await repeat.done
    assert.strictEqual(result.code, 130, result.stderr)
    assert.include(result.stderr, "ended before the run finished")
    assert.deepStrictEqual(rows(sandbox, "SELECT status FROM runs"), [{ status: "interrupted" }])
  })

  it("ST-4/EV-3 with --json too, a follower whose run's process is killed says why on stderr; stdout stays JSON and ends with the stored run_failed (interrupted)", async () => {
    const { sandbox } = await setup([{ kind: "text", text: "partial", stallAfter: true }])
    const first = sandbox.start(args("req-killed-json"))
    await first.waitFor('"type":"text_delta"')
    const repeat = sandbox.start(args("req-killed-json"))
    await repeat.waitFor('"type":"message"')
    first.child.kill("SIGKILL")
    await first.done
    const result = await repeat.done
    assert.strictEqual(result.code, 130, result.stderr)
    assert.match(
      result.stderr,
      /^alisio: the process running request req-killed-json \(pid \d+\) ended before the run finished\n$/
    )
    const events = parseJsonl(result.stdout)
    assert.deepStrictEqual(
      events.map((event) => event.type),
      ["run_started", "message", "run_failed"]
    )
    const ending = events.at(-1)
    assert.strictEqual(ending?.type === "run_failed" && ending.data.code, "interrupted")
    assert.strictEqual(ending?.seq, 3)
    // The replay of the session ends the same way.
    const replay = await sandbox.run(["sessions", "events", ending!.sessionId, "--json"])
    assert.deepStrictEqual(parseJsonl(replay.stdout).at(-1), ending)
  })

  it("ST-4 CLI-2 a --final replay of a run whose process was killed says interrupted, as its exit code 130 does", async () => {
    const { sandbox } = await setup([{ kind: "text", text: "partial", stallAfter: true }])
    const first = sandbox.start(args("req-final"))
    await first.waitFor('"type":"text_delta"')
    first.child.kill("SIGKILL")
    await first.done
    const repeat = await sandbox.run(args("req-final", "--final"))
    assert.strictEqual(repeat.code, 130, repeat.stderr)
    const final = JSON.parse(repeat.stdout.trim()) as { status: string; error?: string }
    assert.strictEqual(final.status, "interrupted", repeat.stdout)
  })

  it("EV-1 ST-3 CLI-2 a follower whose run (with --timeout) is stopped by SIGTERM mid-command ends with its run_cancelled, last", async () => {
    const { sandbox } = await setup([
      { kind: "tool", id: "call_1", name: "bash", args: { command: "echo started-it; sleep 30" } },
      { kind: "text", text: "never reached" }
    ])
    const first = sandbox.start(args("req-term", "--yes", "--timeout", "1h"))
    await first.waitFor("started-it")
    const repeat = sandbox.start(args("req-term", "--yes", "--timeout", "1h"))
    await repeat.waitFor('"type":"tool_call_started"')
    first.child.kill("SIGTERM")
    const owner = await first.done
    assert.strictEqual(owner.code, 130, owner.stderr)
    const result = await repeat.done
    const events = parseJsonl(result.stdout)
    assertEnds(events, "run_cancelled")
    assert.strictEqual(result.code, 130, result.stderr)
    assert.deepStrictEqual(persisted(events), persisted(parseJsonl(owner.stdout)))
  })

  it("ST-3 CLI-1 a text-mode repeat of an ended run prints on stdout the answer the first run printed", async () => {
    const { sandbox, server } = await setup([
      { kind: "tool", id: "call_1", name: "ls", args: { path: "." } },
      { kind: "text", text: "the final answer,\nin two lines" }
    ])
    const text = ["run", "--request-id", "req-text", "-m", "openai/test-model", "do it once"]
    const first = await sandbox.run(text)
    assert.strictEqual(first.code, 0, first.stderr)
    assert.strictEqual(first.stdout, "the final answer,\nin two lines\n")
    const repeat = await sandbox.run(text)
    assert.strictEqual(repeat.code, 0, repeat.stderr)
    assert.include(repeat.stderr, "already ran as")
    assert.strictEqual(repeat.stdout, first.stdout)
    assert.strictEqual(chatRequests(server), 2)
  })

  it("ST-1 ST-3 a repeat following a live run leaves out an event row damaged after it began, says so in one line, and prints the answer", async () => {
    let release = () => {}
    const barrier = new Promise<void>((resolve) => {
      release = resolve
    })
    const { sandbox } = await setup([{ kind: "text", text: "answered after the follower came", after: barrier }])
    const first = sandbox.start(args("req-damaged-live"))
    await first.waitFor('"type":"run_started"')
    // The row is damaged as it is written, so only the follower's pages read it.
    withDatabase(sandbox, (db) =>
      db
        .prepare(
          "CREATE TRIGGER damage AFTER INSERT ON events WHEN NEW.type = 'turn_completed' BEGIN UPDATE events SET payload = '{x' WHERE seq = NEW.seq; END"
        )
        .run()
    )
    const repeat = sandbox.start(["run", "--request-id", "req-damaged-live", "-m", "openai/test-model", "do it once"])
    await repeat.waitFor("following it")
    release()
    const [owner, result] = await Promise.all([first.done, repeat.done])
    assert.strictEqual(owner.code, 0, owner.stderr)
    assert.strictEqual(result.code, 0, result.stderr)
    const [damaged] = rows(sandbox, "SELECT seq FROM events WHERE type = 'turn_completed'")
    const told = result.stderr.split("\n").filter((line) => line.includes("could not be read"))
    assert.deepStrictEqual(told.length, 1, result.stderr)
    assert.match(
      told[0]!,
      new RegExp(`^alisio: event ${damaged!.seq} could not be read, so it is left out: its payload is not JSON`)
    )
    assert.strictEqual(result.stdout, "answered after the follower came\n")
  })
})
