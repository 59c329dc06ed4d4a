// End-to-end: what a model, a tool or another program stored in a session reaches a terminal
// through `alisio sessions` as text, never as an escape sequence or a bidi control (CLI-1, ST-1).

import { assert, describe, it } from "@effect/vitest"
import type { Reply } from "./support/openaiServer.js"
import { ok, runTask, withDatabase } from "./support/sessions.js"
import { useWorld } from "./support/world.js"

// OSC 52 (sets the clipboard), an 8-bit CSI, and a right-to-left override.
const hostile = "before \u001b]52;c;cGF3bmVk\u0007 \u009b2J \u202eevil\u202c after"

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding what must not reach a terminal
const ACTIVE = /[\u001b\u0007\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/

const assertInert = (text: string, what: string) => {
  const found = ACTIVE.exec(text)
  assert.isNull(
    found,
    `${what} holds U+${found?.[0].charCodeAt(0).toString(16).padStart(4, "0")}: ${JSON.stringify(text)}`
  )
}

const lines = (text: string) => text.split("\n").filter((line) => line !== "")

describe("alisio sessions with hostile content (end to end)", () => {
  const world = useWorld()
  const setup = (replies: ReadonlyArray<Reply>) => world({ replies })

  it("CLI-1 a title another program stored is plain text in rm, in an ambiguous id's candidates and in show", async () => {
    const { sandbox } = await setup([{ kind: "text", text: "fine" }])
    const session = await runTask(sandbox, "a task")
    withDatabase(sandbox, (db) => {
      db.prepare("UPDATE sessions SET title = ? WHERE id = ?").run(hostile, session.id)
      // A second session whose id starts the same: the short id is ambiguous.
      db.prepare(
        "INSERT INTO sessions (id, title, cwd, created_at, updated_at, status) SELECT ?, title, cwd, created_at, updated_at, status FROM sessions WHERE id = ?"
      ).run(`${session.shortId}-twin`, session.id)
    })
    const ambiguous = await sandbox.run(["sessions", "show", session.shortId])
    assert.strictEqual(ambiguous.code, 2, ambiguous.stderr)
    assert.include(ambiguous.stderr, "is the start of several sessions' ids")
    assertInert(ambiguous.stderr, "the ambiguous id's message")
    const shown = ok(await sandbox.run(["sessions", "show", session.id]))
    assertInert(shown.stdout, "sessions show")
    const listedJson = ok(await sandbox.run(["sessions", "list", "--json"]))
    assertInert(listedJson.stdout, "sessions list --json")
    const removed = ok(await sandbox.run(["sessions", "rm", "--yes", session.id]))
    assert.include(removed.stdout, `deleted ${session.shortId} "before`)
    assertInert(removed.stdout + removed.stderr, "sessions rm")
  })

  it("CLI-1 exports and --json forms of a hostile answer: Markdown holds none of it, JSON only as escapes that parse back", async () => {
    const { sandbox } = await setup([{ kind: "text", text: hostile }])
    const session = await runTask(sandbox, "say it")
    const markdown = ok(await sandbox.run(["sessions", "export", session.id, "--format", "md"]))
    assert.include(markdown.stdout, "before ")
    assert.include(markdown.stdout, "evil")
    assertInert(markdown.stdout, "export --format md")

    const jsonl = ok(await sandbox.run(["sessions", "export", session.id]))
    assertInert(jsonl.stdout, "export (JSONL)")
    assert.include(jsonl.stdout, "\\u202e")
    const answers = lines(jsonl.stdout)
      .map((line) => JSON.parse(line) as { type: string; data: { message?: { role: string; content: unknown } } })
      .filter((event) => event.type === "message" && event.data.message?.role === "assistant")
    assert.deepStrictEqual(answers[0]?.data.message?.content, [{ _tag: "text", text: hostile }])

    const detail = ok(await sandbox.run(["sessions", "show", session.id, "--json"]))
    assertInert(detail.stdout, "show --json")
    const messages = (JSON.parse(detail.stdout) as { messages: Array<{ message: { content: unknown } }> }).messages
    assert.deepStrictEqual(messages[1]?.message.content, [{ _tag: "text", text: hostile }])

    const events = ok(await sandbox.run(["sessions", "events", session.id, "--json"]))
    assertInert(events.stdout, "events --json")
    assert.strictEqual(lines(events.stdout).length, lines(jsonl.stdout).length)
  })

  it("CLI-1 EV-2 run --json and --final write a hostile answer's controls only as escapes that parse back", async () => {
    const { sandbox } = await setup([
      { kind: "text", text: hostile },
      { kind: "text", text: hostile }
    ])
    const streamed = ok(await sandbox.run(["run", "--json", "say it"]))
    assertInert(streamed.stdout, "run --json")
    const deltas = lines(streamed.stdout)
      .map((line) => JSON.parse(line) as { type: string; data: { text?: string } })
      .filter((event) => event.type === "text_delta")
      .map((event) => event.data.text ?? "")
    assert.strictEqual(deltas.join(""), hostile)
    const final = ok(await sandbox.run(["run", "--json", "--final", "say it"]))
    assertInert(final.stdout, "run --final")
    assert.include(JSON.stringify(JSON.parse(final.stdout)), "evil")
  })
})
