// End-to-end: `sessions events` and `sessions export` (JSONL) of a session whose event rows another
// program damaged, or that holds more event payload than the process may hold (CLI-1, ST-3).

import { assert, describe, it } from "@effect/vitest"
import { ok, runTask, withDatabase } from "./support/sessions.js"
import { useWorld } from "./support/world.js"

const ESC = "\u001b"
const lines = (text: string) => text.split("\n").filter((line) => line !== "")

describe("alisio sessions events of damaged and huge sessions (end to end)", () => {
  const world = useWorld()
  const setup = async () => {
    const { sandbox } = await world({ replies: [{ kind: "text", text: "fine" }] })
    const session = await runTask(sandbox, "a task")
    const seqs = withDatabase(sandbox, (db) =>
      db
        .prepare("SELECT seq FROM events WHERE session_id = ? ORDER BY seq")
        .all(session.id)
        .map((row) => Number(row.seq))
    )
    return { sandbox, session, seqs }
  }

  it("CLI-1 ST-1 a damaged event row is one stderr line and left out; the others still list and export, the human form holds no escape", async () => {
    const { sandbox, session, seqs } = await setup()
    const [first, second, third, fourth] = seqs
    withDatabase(sandbox, (db) => {
      db.prepare("UPDATE events SET payload = '{not json' WHERE seq = ?").run(second)
      db.prepare("UPDATE events SET payload = json_set(payload, '$.schemaVersion', 2) WHERE seq = ?").run(third)
      db.prepare("UPDATE events SET payload = json_set(payload, '$.time', ?) WHERE seq = ?").run(
        `${ESC}]0;pwned\u0007${ESC}[31mred`,
        fourth
      )
    })
    const expectedErrors = [
      `alisio: event ${second} could not be read, so it is left out: its payload is not JSON`,
      `alisio: event ${third} could not be read, so it is left out: it has schemaVersion 2; this Alisio reads 1`
    ]
    const startsOf = (stderr: string) =>
      lines(stderr).map((line) => (line.includes("not JSON") ? line.replace(/ \(.*$/, "") : line))

    const human = ok(await sandbox.run(["sessions", "events", session.id]), "sessions events")
    assert.deepStrictEqual(startsOf(human.stderr), expectedErrors)
    assert.notInclude(human.stdout, ESC)
    assert.notInclude(human.stdout, "\u0007")
    assert.deepStrictEqual(
      lines(human.stdout).map((line) => Number(line.trim().split(" ")[0])),
      seqs.filter((seq) => seq !== second && seq !== third)
    )
    assert.include(human.stdout, `${fourth} red `)
    assert.match(lines(human.stdout)[0]!, new RegExp(`^ +${first} `))

    const json = ok(await sandbox.run(["sessions", "events", session.id, "--json"]), "sessions events --json")
    assert.deepStrictEqual(startsOf(json.stderr), expectedErrors)
    const events = lines(json.stdout).map((line) => JSON.parse(line) as { eventId: string; time: string })
    assert.deepStrictEqual(
      events.map((event) => Number(event.eventId)),
      seqs.filter((seq) => seq !== second && seq !== third)
    )
    assert.strictEqual(events[1]!.time, `${ESC}]0;pwned\u0007${ESC}[31mred`, "JSON keeps every byte, escaped")

    const exported = ok(await sandbox.run(["sessions", "export", session.id]), "sessions export")
    assert.deepStrictEqual(startsOf(exported.stderr), expectedErrors)
    assert.strictEqual(exported.stdout, json.stdout)
  })

  it("CLI-1 ST-3 sessions events --json and export of 100 MB of event payload go out whole within a 32 MB heap", async () => {
    const { sandbox, session, seqs } = await setup()
    // 100 copies of the prompt's message event, each carrying 1 MB of text.
    withDatabase(sandbox, (db) =>
      db
        .prepare(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
           INSERT INTO events (session_id, run_id, type, payload)
           SELECT session_id, run_id, type, json_set(payload, '$.data.message.content[0].text', printf('%.*c', 1000000, 'x'))
           FROM events, n WHERE seq = ?`
        )
        .run(seqs[1])
    )
    const heapCap = { nodeArgs: ["--max-old-space-size=32"] }
    for (const args of [
      ["sessions", "events", session.id, "--json"],
      ["sessions", "export", session.id]
    ]) {
      const result = await sandbox.run(args, heapCap)
      assert.deepStrictEqual({ code: result.code, stderr: result.stderr }, { code: 0, stderr: "" }, args.join(" "))
      const events = lines(result.stdout)
      assert.strictEqual(events.length, seqs.length + 100)
      assert.isAbove(result.stdout.length, 100_000_000)
    }
  }, 90_000)

  it("CLI-1 ST-3 sessions show and export --format md of 60 messages of 1 MB each go out whole within a 32 MB heap", async () => {
    const { sandbox, session } = await setup()
    withDatabase(sandbox, (db) =>
      db
        .prepare(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
           INSERT INTO messages (session_id, position, run_id, role, message, created_at)
           SELECT session_id, (SELECT max(position) FROM messages WHERE session_id = ?) + i, run_id, role,
             json_set(message, '$.content[0].text', printf('%d %.*c', i, 1000000, 'y')), created_at
           FROM messages, n WHERE session_id = ? AND role = 'user'`
        )
        .run(session.id, session.id)
    )
    const heapCap = { nodeArgs: ["--max-old-space-size=32"] }
    for (const args of [
      ["sessions", "show", session.id],
      ["sessions", "export", session.id, "--format", "md"]
    ]) {
      const result = await sandbox.run(args, heapCap)
      assert.deepStrictEqual({ code: result.code, stderr: result.stderr }, { code: 0, stderr: "" }, args.join(" "))
      assert.isAbove(result.stdout.length, 60_000_000, args.join(" "))
      assert.include(result.stdout, `60 ${"y".repeat(100)}`, args.join(" "))
    }
  }, 60_000)

  it("ST-1 /stats and the replay of an ended --request-id run leave out a damaged event row with one line instead of failing", async () => {
    const { sandbox } = await world({ replies: [{ kind: "text", text: "fine" }] })
    const request = ["run", "--json", "--request-id", "req-damaged", "-m", "openai/test-model", "a task"]
    const first = ok(await sandbox.run(request), "the first run")
    const [session] = withDatabase(sandbox, (db) => db.prepare("SELECT id FROM sessions").all()) as Array<{
      id: string
    }>
    const seqs = withDatabase(sandbox, (db) =>
      db
        .prepare("SELECT seq, type FROM events WHERE session_id = ? ORDER BY seq")
        .all(session!.id)
        .map((row) => ({ seq: Number(row.seq), type: String(row.type) }))
    )
    const damaged = seqs.find((row) => row.type === "turn_completed")!.seq
    withDatabase(sandbox, (db) => db.prepare("UPDATE events SET payload = '{x' WHERE seq = ?").run(damaged))

    const stats = ok(await sandbox.run(["run", "-s", session!.id, "/stats"]), "/stats")
    assert.match(stats.stdout, /^ {2}runs: +1 \(1 completed\)$/m)
    assert.include(stats.stdout, `(event ${damaged} could not be read, so left out of the count)`)

    const replay = ok(await sandbox.run(request), "the replay")
    const told = lines(replay.stderr).filter((line) => line.includes("could not be read"))
    assert.lengthOf(told, 1, replay.stderr)
    assert.match(
      told[0]!,
      new RegExp(`^alisio: event ${damaged} could not be read, so it is left out: its payload is not JSON`)
    )
    const types = (stdout: string) => lines(stdout).map((line) => (JSON.parse(line) as { type: string }).type)
    assert.deepStrictEqual(
      types(replay.stdout),
      types(first.stdout).filter((type) => type !== "turn_completed" && type !== "text_delta")
    )
  })
})
