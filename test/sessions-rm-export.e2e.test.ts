// End-to-end: deleting and exporting sessions with the built `alisio` (CLI-1, ST-1): `rm` takes
// the child sessions with it, asks on a terminal, needs --yes elsewhere and refuses a session
// whose run is going; `export` writes every stored event as JSONL, or the conversation as Markdown.

import { spawn } from "node:child_process"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { decodeRunEvent, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { type CliSandbox, cliBin } from "./support/cli.js"
import type { Reply } from "./support/openaiServer.js"
import { adopt, count, listed, ok, runTask } from "./support/sessions.js"
import { useWorld } from "./support/world.js"

const texts = (count: number): ReadonlyArray<Reply> =>
  Array.from({ length: count }, (_, i) => ({ kind: "text", text: `answer ${i + 1}` }) as const)

const decodeLines = (jsonl: string): ReadonlyArray<KnownRunEvent> =>
  jsonl
    .split("\n")
    .filter((line) => line !== "")
    .map((line, index) => {
      const decoded = decodeRunEvent(JSON.parse(line))
      if (Either.isLeft(decoded) || decoded.right._tag !== "Known") throw new Error(`line ${index + 1}: ${line}`)
      return decoded.right.event
    })

/** Every row a session owns, by table. */
const owned = (sandbox: CliSandbox, id: string) => ({
  sessions: count(sandbox, "sessions", "id = ?", id),
  messages: count(sandbox, "messages", "session_id = ?", id),
  events: count(sandbox, "events", "session_id = ?", id),
  runs: count(sandbox, "runs", "session_id = ?", id),
  tool_calls: count(sandbox, "tool_calls", "session_id = ?", id)
})

describe("alisio sessions rm and export (end to end)", () => {
  const world = useWorld()
  const setup = (replies: ReadonlyArray<Reply>) => world({ replies })

  it("CLI-1 sessions rm deletes sessions with their children and all they hold; off a terminal it needs --yes", async () => {
    const { sandbox } = await setup([
      { kind: "tool", id: "call_1", name: "read", args: { path: "a.txt" } },
      ...texts(3)
    ])
    writeFileSync(join(sandbox.workspace, "a.txt"), "a\n")
    const parent = await runTask(sandbox, "Parent")
    const child = await runTask(sandbox, "Child")
    const kept = await runTask(sandbox, "Kept")
    adopt(sandbox, parent.id, child.id)
    const filled = owned(sandbox, parent.id)
    assert.isTrue(
      Object.values(filled).every((n) => n > 0),
      JSON.stringify(filled)
    )

    const refused = await sandbox.run(["sessions", "rm", parent.shortId])
    assert.strictEqual(refused.code, 2)
    assert.strictEqual(
      refused.stderr,
      `alisio: Deleting ${parent.shortId} "Parent" and 1 child session needs confirmation and stdin is not a terminal to ask on; add --yes.\n`
    )
    assert.strictEqual(owned(sandbox, parent.id).sessions, 1, "nothing was deleted")

    const removed = ok(await sandbox.run(["sessions", "rm", "--yes", parent.shortId]))
    assert.strictEqual(removed.stdout, `deleted ${parent.shortId} "Parent"\ndeleted 1 child session with them\n`)
    const none = { sessions: 0, messages: 0, events: 0, runs: 0, tool_calls: 0 }
    assert.deepStrictEqual(owned(sandbox, parent.id), none)
    assert.deepStrictEqual(owned(sandbox, child.id), none)
    assert.strictEqual(owned(sandbox, kept.id).sessions, 1)
    assert.deepStrictEqual(
      (await listed(sandbox)).map((s) => s.id),
      [kept.id]
    )
    const gone = await sandbox.run(["sessions", "show", child.id])
    assert.strictEqual(gone.code, 2)
    assert.include(gone.stderr, `No session ${child.id}`)
  })

  it("CLI-1 sessions rm of several ids deletes all of them or, when one is unknown, none", async () => {
    const { sandbox } = await setup(texts(2))
    const a = await runTask(sandbox, "A")
    const b = await runTask(sandbox, "B")
    const unknown = await sandbox.run(["sessions", "rm", "--yes", a.shortId, "nosuchid"])
    assert.strictEqual(unknown.code, 2)
    assert.lengthOf(await listed(sandbox), 2)
    const both = ok(await sandbox.run(["sessions", "rm", "--yes", a.shortId, b.id]))
    assert.strictEqual(both.stdout, `deleted ${a.shortId} "A"\ndeleted ${b.shortId} "B"\n`)
    assert.lengthOf(await listed(sandbox), 0)
  })

  it("CLI-1 sessions rm asks on a terminal: no keeps the session, yes deletes it", async () => {
    const { sandbox } = await setup(texts(1))
    const session = await runTask(sandbox, "Ask me")
    // `script` gives the command a terminal of its own; what is written to it is typed there.
    const onTerminal = (answer: string) =>
      new Promise<string>((resolve) => {
        const terminal = spawn(
          "script",
          ["-qfec", `'${process.execPath}' '${cliBin}' sessions rm ${session.shortId}`, "/dev/null"],
          {
            cwd: sandbox.workspace,
            env: sandbox.env,
            stdio: ["pipe", "pipe", "pipe"]
          }
        )
        let seen = ""
        let answered = false
        terminal.stdout.on("data", (data: Buffer) => {
          seen += data.toString("utf8")
          if (!answered && seen.includes("[y/N]")) {
            answered = true
            terminal.stdin.write(`${answer}\r`)
          }
        })
        terminal.on("close", () => resolve(seen))
      })
    const declined = await onTerminal("n")
    assert.include(declined, `Delete ${session.shortId} "Ask me"? This cannot be undone. [y/N]`)
    assert.include(declined, "Nothing deleted.")
    assert.lengthOf(await listed(sandbox), 1)
    const accepted = await onTerminal("y")
    assert.include(accepted, `deleted ${session.shortId} "Ask me"`)
    assert.lengthOf(await listed(sandbox), 0)
  })

  it("CLI-2 Ctrl-C at sessions rm's question deletes nothing and exits 130, the question's line ended", async () => {
    const { sandbox } = await setup(texts(1))
    const session = await runTask(sandbox, "Keep me")
    const { seen, code } = await new Promise<{ seen: string; code: number | null }>((resolve) => {
      const terminal = spawn(
        "script",
        ["-qfec", `'${process.execPath}' '${cliBin}' sessions rm ${session.shortId}`, "/dev/null"],
        { cwd: sandbox.workspace, env: sandbox.env, stdio: ["pipe", "pipe", "pipe"] }
      )
      let seen = ""
      let asked = false
      terminal.stdout.on("data", (data: Buffer) => {
        seen += data.toString("utf8")
        if (!asked && seen.includes("[y/N]")) {
          asked = true
          terminal.stdin.write("\u0003")
        }
      })
      terminal.on("close", (code) => resolve({ seen, code }))
    })
    assert.strictEqual(code, 130, JSON.stringify(seen))
    assert.match(seen, /\[y\/N\] [^\n]*\n\s*alisio: Nothing deleted\./, JSON.stringify(seen))
    assert.lengthOf(await listed(sandbox), 1)
  })

  it("CLI-1 sessions rm refuses a session whose run is going, and deletes it once the run ended", async () => {
    const { sandbox } = await setup([{ kind: "stall" }])
    const running = sandbox.start(["run", "--json", "-m", "openai/test-model", "--first-token-timeout", "10m", "wait"])
    await running.waitFor('"type":"run_started"')
    const session = (await listed(sandbox))[0]!
    const refused = await sandbox.run(["sessions", "rm", "--yes", session.shortId])
    assert.strictEqual(refused.code, 2)
    assert.match(
      refused.stderr,
      new RegExp(
        `^alisio: Session ${session.id} has a run in progress \\(pid ${running.child.pid}( on \\S+)?\\): stop that run`
      )
    )
    assert.strictEqual(owned(sandbox, session.id).sessions, 1)
    running.child.kill("SIGINT")
    assert.strictEqual((await running.done).code, 130)
    ok(await sandbox.run(["sessions", "rm", "--yes", session.shortId]))
    assert.strictEqual(owned(sandbox, session.id).sessions, 0)
  })

  it("CLI-1 sessions export: JSONL is every stored event of the session and its children, each one decoding", async () => {
    const { sandbox } = await setup([
      { kind: "tool", id: "call_1", name: "read", args: { path: "a.txt" } },
      { kind: "text", text: "It says a." },
      { kind: "text", text: "child done" }
    ])
    writeFileSync(join(sandbox.workspace, "a.txt"), "a\n")
    const parent = await runTask(sandbox, "Read a.txt")
    const child = await runTask(sandbox, "Child task")
    adopt(sandbox, parent.id, child.id)

    const exported = ok(await sandbox.run(["sessions", "export", parent.shortId])).stdout
    const events = decodeLines(exported)
    const stored = [
      ...decodeLines(ok(await sandbox.run(["sessions", "events", parent.id, "--json"])).stdout),
      ...decodeLines(ok(await sandbox.run(["sessions", "events", child.id, "--json"])).stdout)
    ].sort((a, b) => Number(a.eventId) - Number(b.eventId))
    assert.deepStrictEqual(events, stored, "the stored events of both sessions, in the order they were stored")
    assert.deepStrictEqual([...new Set(events.map((e) => e.sessionId))], [parent.id, child.id])
    assert.deepStrictEqual(
      events.filter((e) => e.type === "run_completed").map((e) => e.sessionId),
      [parent.id, child.id]
    )
    assert.isTrue(events.some((e) => e.type === "tool_call_completed"))

    const file = join(sandbox.workspace, "session.jsonl")
    const written = ok(await sandbox.run(["sessions", "export", parent.shortId, "--output", file]))
    assert.strictEqual(written.stdout, "")
    assert.strictEqual(written.stderr, `alisio: exported ${parent.shortId} to ${file} (jsonl)\n`)
    assert.strictEqual(readFileSync(file, "utf8"), exported)
    assert.strictEqual(statSync(file).mode & 0o777, 0o600, "an export may hold private work")
  })

  it("CLI-1 sessions export --format md: the conversation and the child sessions, to read", async () => {
    const { sandbox } = await setup([
      { kind: "tool", id: "call_1", name: "read", args: { path: "a.txt" } },
      { kind: "text", text: "It says **a**." },
      { kind: "text", text: "child done" }
    ])
    writeFileSync(join(sandbox.workspace, "a.txt"), "a\n")
    const parent = await runTask(sandbox, "Read a.txt")
    const child = await runTask(sandbox, "Child task")
    adopt(sandbox, parent.id, child.id)

    const md = ok(await sandbox.run(["sessions", "export", parent.shortId, "--format", "md"])).stdout
    const spelledOut = ok(await sandbox.run(["sessions", "export", parent.shortId, "--format", "markdown"])).stdout
    assert.strictEqual(spelledOut, md, "--format markdown is md")
    const lines = md.split("\n")
    assert.strictEqual(lines[0], "# Read a.txt")
    assert.include(lines, `- Session: \`${parent.id}\``)
    assert.include(lines, "- Status: completed · 1 run")
    assert.isTrue(
      lines.some((line) => /^## Run 1 · openai\/test-model · completed · .* · \d{4}-\d\d-\d\d \d\d:\d\d$/.test(line))
    )
    assert.strictEqual(lines[lines.indexOf("### You") + 2], "Read a.txt")
    assert.isTrue(
      lines.some((line) => /^- ✓ `read` `a\.txt` → `.*a`$/.test(line)),
      md
    )
    assert.strictEqual(lines[lines.indexOf("### Assistant") + 2], "It says **a**.")
    assert.include(lines, "## Child session: Child task")
    assert.include(lines, `- Session: \`${child.id}\` (child of \`${parent.shortId}\`)`)
    assert.isTrue(lines.some((line) => /^### Run 1 · /.test(line)))
    assert.include(lines, "child done")

    const file = join(sandbox.workspace, "notes.md")
    ok(await sandbox.run(["sessions", "export", parent.shortId, "-o", file]))
    assert.strictEqual(readFileSync(file, "utf8"), md, "a .md file means Markdown")
    const bad = await sandbox.run(["sessions", "export", parent.shortId, "--format", "pdf"])
    assert.strictEqual(bad.code, 2)
    assert.strictEqual(
      bad.stderr,
      'alisio: --format: "pdf" is not one of jsonl, md (see alisio sessions export --help)\n',
      "the message names the flag and the value"
    )

    // A file that could not be written is a usage error found before the export, not after it.
    const folder = await sandbox.run(["sessions", "export", parent.shortId, "-o", sandbox.workspace])
    assert.strictEqual(folder.code, 2)
    assert.strictEqual(
      folder.stderr,
      `alisio: --output: ${sandbox.workspace} is a folder; give the path of a file to write\n`
    )
    const missing = join(sandbox.workspace, "gone", "x.md")
    const nowhere = await sandbox.run(["sessions", "export", parent.shortId, "-o", missing])
    assert.strictEqual(nowhere.code, 2)
    assert.strictEqual(nowhere.stderr, `alisio: --output: the folder of ${missing} does not exist\n`)
  })
})
