// End-to-end: `sessions show` (and `--json`) and `sessions export --format md` of a session with more tool output
// than the process may hold go out a page at a time, in bounded memory, and stop as soon as their
// reader has what it wanted (`| head -3`), quietly (CLI-1, ST-3).

import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ok, runTask, seedTurns } from "./support/sessions.js"
import { useWorld } from "./support/world.js"

// 2 000 turns of 20 kB of tool output each: 40 MB, which a heap of 32 MB cannot hold at once.
const TURNS = 2000
const heapCap = { nodeArgs: ["--max-old-space-size=32"] }

describe("alisio sessions show and export of a huge session (end to end)", () => {
  const world = useWorld()
  const setup = async () => {
    const { sandbox } = await world({ replies: [{ kind: "text", text: "fine" }] })
    const session = await runTask(sandbox, "a long task")
    seedTurns(sandbox, session.id, TURNS, { resultBytes: 20_000 })
    return { sandbox, session }
  }

  it("CLI-1 sessions show | head -3: head gets its lines and alisio ends at once, quietly, having held a page at a time", async () => {
    const { sandbox, session } = await setup()
    const running = sandbox.start(["sessions", "show", session.id], heapCap)
    let received = ""
    running.child.stdout!.on("data", (data: Buffer) => {
      received += data.toString("utf8")
      // `head -3` closes the pipe once it has its lines.
      if (received.split("\n").length > 3) running.child.stdout!.destroy()
    })
    const result = await running.done
    assert.deepStrictEqual(
      { code: result.code, signal: result.signal, stderr: result.stderr },
      { code: 0, signal: null, stderr: "" }
    )
    const [title, summary, folder] = received.split("\n")
    assert.strictEqual(title, "a long task")
    assert.match(summary!, new RegExp(`^${session.id} · completed · 1 run · updated `))
    assert.strictEqual(folder, "folder ~/workspace")
  }, 60_000)

  it("CLI-1 sessions show and export --format md of 40 MB of tool output go out whole within a 32 MB heap", async () => {
    const { sandbox, session } = await setup()
    const shown = ok(await sandbox.run(["sessions", "show", session.id], heapCap), "sessions show")
    const calls = shown.stdout.split("\n").filter((line) => line.startsWith("  ✓ bash echo "))
    assert.strictEqual(calls.length, TURNS)
    assert.strictEqual(calls.at(-1), `  ✓ bash echo ${TURNS - 1} → result ${TURNS - 1} (+1 line)`)
    assert.isTrue(shown.stdout.endsWith(`assistant: answer ${TURNS - 1}\n`))

    const markdown = ok(await sandbox.run(["sessions", "export", session.id, "--format", "md"], heapCap), "export")
    assert.strictEqual(markdown.stdout.split("\n").filter((line) => line.startsWith("- ✓ `bash`")).length, TURNS)
    // To a file: written whole through a temporary file renamed over it, as before.
    const file = join(sandbox.workspace, "transcript.md")
    const exported = ok(await sandbox.run(["sessions", "export", session.id, "-o", "transcript.md"], heapCap))
    assert.include(exported.stderr, `to ${file}`)
    assert.strictEqual(readFileSync(file, "utf8"), markdown.stdout)
    assert.strictEqual(statSync(file).mode & 0o777, 0o600)
    assert.deepStrictEqual(
      readdirSync(sandbox.workspace).filter((name) => name.endsWith(".tmp")),
      []
    )
  }, 60_000)

  it("CLI-1 ST-3 sessions show --json of 40 MB of tool output goes out whole within a 32 MB heap, one JSON document", async () => {
    const { sandbox, session } = await setup()
    const shown = ok(await sandbox.run(["sessions", "show", session.id, "--json"], heapCap), "sessions show --json")
    assert.isTrue(shown.stdout.endsWith("}\n"))
    assert.strictEqual(shown.stdout.indexOf("\n"), shown.stdout.length - 1, "one line")
    const detail = JSON.parse(shown.stdout) as {
      readonly id: string
      readonly runs: ReadonlyArray<unknown>
      readonly messages: ReadonlyArray<{
        readonly position: number
        readonly message: { readonly role: string; readonly content: ReadonlyArray<{ readonly text?: string }> }
      }>
      readonly children: ReadonlyArray<unknown>
    }
    assert.strictEqual(detail.id, session.id)
    assert.strictEqual(detail.runs.length, 1)
    assert.deepStrictEqual(detail.children, [])
    // The run's prompt and answer, then four messages a seeded turn, in order.
    assert.strictEqual(detail.messages.length, 2 + TURNS * 4)
    assert.deepStrictEqual(
      detail.messages.map((stored) => stored.position),
      detail.messages.map((_, index) => detail.messages[0]!.position + index)
    )
    const results = detail.messages.filter((stored) => stored.message.role === "tool")
    assert.strictEqual(results.length, TURNS)
    assert.strictEqual(results.at(-1)!.message.content[0]!.text, `result ${TURNS - 1}\n${"x".repeat(20_000)}`)
    assert.strictEqual(detail.messages.at(-1)!.message.content[0]!.text, `answer ${TURNS - 1}`)
  }, 60_000)
})
