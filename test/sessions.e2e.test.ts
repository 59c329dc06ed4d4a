// End-to-end: sessions as a person manages them with the built `alisio` — listed with short ids
// and titles, found by a short id anywhere an id goes, shown whole, renamed (CLI-1, ST-1).

import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { SessionDetail } from "alisio/SessionRecords"
import * as Schema from "effect/Schema"
import type { OpenAiTestServer, RecordedRequest, Reply } from "./support/openaiServer.js"
import { adopt, listed, ok, runTask, withDatabase } from "./support/sessions.js"
import { useWorld } from "./support/world.js"

const chats = (server: OpenAiTestServer): ReadonlyArray<RecordedRequest> =>
  server.requests.filter((request) => request.path.endsWith("/chat/completions"))

const texts = (count: number): ReadonlyArray<Reply> =>
  Array.from({ length: count }, (_, i) => ({ kind: "text", text: `answer ${i + 1}` }) as const)

/** A usage mistake: exit 2, one line on stderr, nothing on stdout. */
const usageLine = (result: { code: number | null; stdout: string; stderr: string }) => {
  assert.strictEqual(result.code, 2, result.stderr)
  assert.strictEqual(result.stdout, "")
  assert.strictEqual(result.stderr.split("\n").filter((line) => line !== "").length, 1, result.stderr)
  return result.stderr
}

describe("alisio sessions (end to end)", () => {
  const setup = useWorld()

  it("CLI-1 sessions list: a header, short ids, relative times, titles from the first prompt, run counts, --limit", async () => {
    const { sandbox } = await setup({ replies: texts(4) })
    const long = `Refactor ${"the session store and ".repeat(6)}its tests`
    const first = await runTask(sandbox, "\n  Fix the   login test\nIt fails since Monday.")
    const second = await runTask(sandbox, long)
    ok(await sandbox.run(["run", "-m", "openai/test-model", "-s", first.shortId, "and the logout one"]))
    const third = await runTask(sandbox, "Third")

    const table = ok(await sandbox.run(["sessions", "list"])).stdout.split("\n")
    assert.match(table[0]!, /^ID {8}UPDATED +STATUS +RUNS +TITLE$/)
    assert.lengthOf(first.shortId, 8)
    assert.strictEqual(first.shortId, first.id.slice(0, 8))
    const row = (shortId: string) => table.find((line) => line.startsWith(`${shortId}  `))
    assert.match(row(first.shortId)!, /^\S{8} {2}just now +completed +2 {2}Fix the login test$/)
    assert.match(row(third.shortId)!, /^\S{8} {2}just now +completed +1 {2}Third$/)
    assert.strictEqual(second.title, "Refactor the session store and the session store and the…")
    assert.isAtMost(second.title!.length, 60)
    assert.deepStrictEqual(
      table.slice(1, 4).map((line) => line.slice(0, 8)),
      [third.shortId, first.shortId, second.shortId],
      "newest first: resuming a session makes it recent"
    )

    const json = await listed(sandbox)
    assert.deepStrictEqual(
      json.map((session) => [session.title, session.runs, session.status]),
      [
        ["Third", 1, "completed"],
        ["Fix the login test", 2, "completed"],
        [second.title, 1, "completed"]
      ]
    )
    const limited = await sandbox.run(["sessions", "list", "--limit", "2"])
    assert.lengthOf(limited.stdout.trim().split("\n"), 3, "the header and two sessions")
    assert.include(limited.stderr, "--limit")
    assert.lengthOf(await listed(sandbox, "--limit", "1"), 1)
  })

  it("CLI-1 sessions list --all lists every folder, this one's first; --cwd lists another folder's", async () => {
    const { sandbox } = await setup({ replies: texts(3) })
    const other = join(sandbox.workspace, "..", "elsewhere")
    const here = await runTask(sandbox, "Here")
    const there = await runTask(sandbox, "There", { cwd: other })
    const later = await runTask(sandbox, "There again", { cwd: other })

    assert.deepStrictEqual(
      (await listed(sandbox)).map((s) => s.id),
      [here.id]
    )
    assert.deepStrictEqual(
      (await listed(sandbox, "--all")).map((s) => s.id),
      [here.id, later.id, there.id],
      "this folder's sessions first, then the others, each newest first"
    )
    assert.deepStrictEqual(
      (await listed(sandbox, "--cwd", other)).map((s) => s.id),
      [later.id, there.id]
    )
    const table = ok(await sandbox.run(["sessions", "list", "--all"])).stdout
    assert.match(table.split("\n")[0]!, /TITLE +FOLDER$/)
    assert.match(table, new RegExp(`^${there.shortId} .*There {2,}~/elsewhere$`, "m"))
    const empty = ok(await sandbox.run(["sessions", "list", "--cwd", join(other, "nothing")]))
    assert.strictEqual(empty.stdout, "")
    assert.include(empty.stderr, "--all")
  })

  it("CLI-1 sessions list never passes a stored title's escape sequences to the terminal", async () => {
    const { sandbox } = await setup({ replies: [] })
    ok(await sandbox.run(["sessions", "list"]), "the database is made")
    // A title written by an older Alisio or another program, holding a clipboard write and a clear.
    withDatabase(sandbox, (db) => {
      db.prepare(
        "INSERT INTO sessions (id, title, cwd, status, created_at, updated_at) VALUES (?, ?, ?, 'completed', 1, 1)"
      ).run(
        "0badc0de-0000-4000-8000-000000000000",
        "Fix \u001b]52;c;aGk=\u0007the\u001b[2J login\u009b31m test",
        sandbox.workspace
      )
    })
    for (const flags of [[], ["--all"]]) {
      const table = ok(await sandbox.run(["sessions", "list", ...flags])).stdout
      assert.match(table, /^0badc0de .*Fix the login test/m)
      for (const control of ["\u001b", "\u0007", "\u009b"])
        assert.notInclude(table, control, "no ESC, bell or 8-bit CSI")
    }
  })

  it("CLI-1 a short id works wherever an id does; an ambiguous one is a usage error listing the candidates", async () => {
    const { sandbox, server } = await setup({ replies: texts(3) })
    const session = await runTask(sandbox, "Remember the number 42")
    const short = session.shortId

    ok(await sandbox.run(["run", "-m", "openai/test-model", "-s", short, "Which number?"]))
    const resumed = chats(server)
      .at(-1)!
      .body.messages!.filter((m) => m.role !== "system")
    assert.deepStrictEqual(
      resumed.map((m) => m.role),
      ["user", "assistant", "user"],
      "run -s <short id> resumed the session"
    )
    for (const command of [
      ["sessions", "show", short],
      ["sessions", "show", short, "--json"],
      ["sessions", "events", short, "--json"],
      ["sessions", "export", short],
      ["sessions", "rename", short, "Numbers"]
    ]) {
      ok(await sandbox.run(command), command.join(" "))
    }
    assert.strictEqual((await listed(sandbox))[0]!.title, "Numbers")

    // Another session whose id starts with the same eight characters (as unlikely as it is).
    // It differs from the session's id right after those eight, so ten characters tell them apart.
    const twin = `${short}-${session.id[9] === "f" ? "e" : "f"}000-4000-8000-000000000000`
    withDatabase(sandbox, (db) =>
      db
        .prepare(
          "INSERT INTO sessions (id, title, cwd, status, created_at, updated_at) VALUES (?, 'Twin', ?, 'completed', 1, 1)"
        )
        .run(twin, sandbox.workspace)
    )
    const requestsBefore = chats(server).length
    for (const command of [
      ["sessions", "show", short],
      ["run", "-m", "openai/test-model", "-s", short, "hello"],
      ["sessions", "rm", "--yes", short]
    ]) {
      const line = usageLine(await sandbox.run(command))
      assert.include(line, `alisio: ${short} is the start of several sessions' ids (`)
      assert.include(line, session.id)
      assert.include(line, `${twin} "Twin"`)
      assert.include(line, "give more of the id")
    }
    assert.strictEqual(chats(server).length, requestsBefore, "nothing was sent for an ambiguous id")
    ok(await sandbox.run(["sessions", "show", session.id]), "the whole id")
    ok(await sandbox.run(["sessions", "show", session.id.slice(0, 10)]), "a longer prefix")
    assert.strictEqual(
      usageLine(await sandbox.run(["sessions", "show", "zzzzzzzz"])),
      "alisio: No session zzzzzzzz. `alisio sessions list --all` shows every session.\n"
    )
    // A pasted page or a stray escape sequence comes back cut and quoted, never whole or raw.
    assert.strictEqual(
      usageLine(await sandbox.run(["sessions", "show", "a".repeat(3000)])),
      `alisio: No session ${"a".repeat(36)}…. \`alisio sessions list --all\` shows every session.\n`
    )
    assert.strictEqual(
      usageLine(await sandbox.run(["sessions", "show", "\u001b[31mX"])),
      'alisio: No session "\\u001b[31mX". `alisio sessions list --all` shows every session.\n'
    )
  })

  it("CLI-1 a session resumed from another folder: refused with both ways on, unless --cwd names the folder; --cwd elsewhere moves it with its children", async () => {
    const { sandbox, server } = await setup({ replies: texts(6) })
    const other = join(sandbox.workspace, "..", "other project")
    const there = await runTask(sandbox, "Work over there", { cwd: other })
    const child = await runTask(sandbox, "A delegated task", { cwd: other })
    adopt(sandbox, there.id, child.id)
    const requestsBefore = chats(server).length

    const refused = usageLine(await sandbox.run(["run", "-m", "openai/test-model", "-s", there.shortId, "go on"]))
    assert.strictEqual(
      refused,
      `alisio: Session ${there.shortId} works in ${other}, not in this folder (${sandbox.workspace}). ` +
        `Go on there with \`alisio run --cwd '${other}' -s ${there.shortId}\`, ` +
        `or move it to this folder with \`alisio run --cwd . -s ${there.shortId}\`.\n`
    )
    assert.strictEqual(chats(server).length, requestsBefore, "nothing was sent")
    assert.strictEqual((await listed(sandbox, "--cwd", other))[0]!.runs, 1, "no run was recorded")

    // Named by --cwd, its own folder: it goes on there and stays there.
    const inPlace = ok(
      await sandbox.run(["run", "-m", "openai/test-model", "--cwd", other, "-s", there.shortId, "go on"])
    )
    assert.notInclude(inPlace.stderr, "moved")
    assert.deepStrictEqual(
      (await listed(sandbox, "--cwd", other)).map((s) => s.id),
      [there.id]
    )

    // Not while another process runs in its tree: the lock is checked before anything moves.
    const holdChild = (held: boolean) =>
      withDatabase(sandbox, (db) =>
        held
          ? db
              .prepare(
                "INSERT INTO session_locks (session_id, pid, token, host, acquired_at) VALUES (?, ?, ?, NULL, 0)"
              )
              .run(child.id, process.pid, "test")
          : db.prepare("DELETE FROM session_locks WHERE session_id = ?").run(child.id)
      )
    holdChild(true)
    const busy = usageLine(
      await sandbox.run(["run", "-m", "openai/test-model", "--cwd", ".", "-s", there.shortId, "here now"])
    )
    assert.include(busy, `has a run in progress (pid ${process.pid}): stop that run`)
    assert.include(busy, "then move the session.")
    assert.deepStrictEqual(await listed(sandbox), [], "nothing moved")
    holdChild(false)

    // --cwd . from here: it moves to this folder, its child with it, and keeps its conversation.
    const moved = ok(
      await sandbox.run(["run", "-m", "openai/test-model", "--cwd", ".", "-s", there.shortId, "here now"])
    )
    assert.include(moved.stderr, `alisio: session ${there.shortId} moved from ${other} to ${sandbox.workspace}\n`)
    assert.deepStrictEqual(
      chats(server)
        .at(-1)!
        .body.messages!.filter((m) => m.role === "user")
        .map((m) => m.content),
      ["Work over there", "go on", "here now"]
    )
    assert.deepStrictEqual(
      (await listed(sandbox)).map((s) => s.id),
      [there.id]
    )
    assert.deepStrictEqual(await listed(sandbox, "--cwd", other), [])
    assert.deepStrictEqual(
      withDatabase(sandbox, (db) => db.prepare("SELECT cwd FROM sessions WHERE id = ?").all(child.id)),
      [{ cwd: sandbox.workspace }]
    )
    ok(await sandbox.run(["run", "-m", "openai/test-model", "-s", there.shortId, "and again"]), "here it needs no flag")

    // A folder that is gone: the only way on is to move it.
    const gone = join(sandbox.workspace, "..", "removed")
    const orphan = await runTask(sandbox, "In a folder removed since", { cwd: gone })
    rmSync(gone, { recursive: true })
    assert.strictEqual(
      usageLine(await sandbox.run(["run", "-m", "openai/test-model", "-s", orphan.shortId, "hello"])),
      `alisio: Session ${orphan.shortId} worked in ${gone}, which is no longer there. ` +
        `Move it with \`--cwd <folder>\`: \`alisio run --cwd . -s ${orphan.shortId}\` for this folder.\n`
    )

    // /resume names the same rule in a conversation.
    const resumed = await sandbox.run(["run", `/resume ${orphan.shortId}`])
    assert.strictEqual(resumed.code, 2, resumed.stderr)
    assert.include(resumed.stderr, `Session ${orphan.shortId} worked in ${gone}, which is no longer there.`)
  })

  it("CLI-1 sessions show: the conversation readable, tool calls summarised, child sessions as a tree; --json the messages", async () => {
    const { sandbox } = await setup({
      replies: [
        { kind: "tool", id: "call_1", name: "read", args: { path: "notes.txt" } },
        { kind: "text", text: "The notes say hello.\nThat is all." },
        { kind: "text", text: "child answer" },
        { kind: "text", text: "grandchild answer" }
      ]
    })
    writeFileSync(join(sandbox.workspace, "notes.txt"), "hello\nfrom the notes\n")
    const parent = await runTask(sandbox, "What do the notes say?")
    const child = await runTask(sandbox, "Look deeper")
    const grandchild = await runTask(sandbox, "Deeper still")
    adopt(sandbox, parent.id, child.id)
    adopt(sandbox, child.id, grandchild.id)

    const text = ok(await sandbox.run(["sessions", "show", parent.shortId])).stdout
    const lines = text.split("\n")
    assert.strictEqual(lines[0], "What do the notes say?")
    assert.match(lines[1]!, new RegExp(`^${parent.id} · completed · 1 run · updated just now$`))
    assert.include(lines, "folder ~/workspace")
    assert.include(lines, "you: What do the notes say?")
    assert.isTrue(
      lines.some((line) => /^ {2}✓ read notes\.txt → .*hello \(\+1 line\)$/.test(line)),
      "the tool call on one line with its result"
    )
    assert.include(lines, "assistant: The notes say hello.")
    assert.include(lines, "           That is all.")
    assert.isTrue(
      lines.some((line) => /^── run 1 · openai\/test-model · completed · \d+ in, \d+ out · just now$/.test(line))
    )
    const tree = lines.slice(lines.indexOf("child sessions") + 1)
    assert.deepStrictEqual(tree.slice(0, 2), [
      `└─ ${child.shortId}  completed  Look deeper`,
      `   └─ ${grandchild.shortId}  completed  Deeper still`
    ])

    const json = Schema.decodeUnknownSync(SessionDetail)(
      JSON.parse(ok(await sandbox.run(["sessions", "show", parent.shortId, "--json"])).stdout)
    )
    assert.strictEqual(json.id, parent.id)
    assert.deepStrictEqual(
      json.messages.map((m) => m.message.role),
      ["user", "assistant", "tool", "assistant"]
    )
    assert.deepStrictEqual(json.messages[0]!.message, {
      role: "user",
      content: [{ _tag: "text", text: "What do the notes say?" }]
    })
    const call = json.messages[1]!.message
    assert.isTrue(call.role === "assistant" && call.content.some((part) => part._tag === "tool_call"))
    assert.deepStrictEqual(
      json.runs.map((run) => run.status),
      ["completed"]
    )
    assert.strictEqual(json.children[0]!.id, child.id)
    assert.strictEqual(json.children[0]!.children[0]!.id, grandchild.id)
    const childView = ok(await sandbox.run(["sessions", "show", child.shortId])).stdout
    assert.include(childView, `parent ${parent.shortId}`)
  })

  it("CLI-1 sessions rename gives a session the title lists show; an empty title is a usage error", async () => {
    const { sandbox } = await setup({ replies: texts(1) })
    const session = await runTask(sandbox, "Some task")
    const renamed = ok(await sandbox.run(["sessions", "rename", session.shortId, "Release", "checklist"]))
    assert.strictEqual(renamed.stdout, `${session.shortId}  Release checklist\n`)
    assert.strictEqual((await listed(sandbox))[0]!.title, "Release checklist")
    // Stored as plain text: `--json` readers and the UI get no escape sequence either.
    ok(await sandbox.run(["sessions", "rename", session.shortId, "\u001b]0;pwned\u0007Release \u001b[31mnotes"]))
    assert.strictEqual((await listed(sandbox))[0]!.title, "Release notes")
    assert.include(usageLine(await sandbox.run(["sessions", "rename", session.shortId, "  "])), "title is empty")
    assert.include(
      usageLine(await sandbox.run(["sessions", "rename", session.shortId])),
      "(see alisio sessions rename --help)"
    )
  })

  it("CLI-1 with titles.summarize the model's one-line title follows the prompt's; a local server is not asked by default", async () => {
    const titleRequest = (request: RecordedRequest) =>
      String(request.body.messages?.[0]?.content ?? "").startsWith("You name conversations")
    const { sandbox, server } = await setup({
      replyFor: (request) =>
        titleRequest(request) ? { kind: "text", text: '"Login Test Fix."' } : { kind: "text", text: "done" }
    })
    const plain = await runTask(sandbox, "fix the login test please")
    assert.strictEqual(plain.title, "fix the login test please")
    assert.strictEqual(chats(server).filter(titleRequest).length, 0, "a server on 127.0.0.1 is not asked by default")

    writeFileSync(join(sandbox.home, "config.yaml"), "titles:\n  summarize: true\n")
    const summarized = await runTask(sandbox, "fix the login test please")
    assert.strictEqual(chats(server).filter(titleRequest).length, 1)
    assert.strictEqual(summarized.title, "Login Test Fix")
    const sent = chats(server).find(titleRequest)!
    assert.deepStrictEqual(sent.body.tools ?? [], [], "the title request offers no tools")

    ok(await sandbox.run(["run", "-m", "openai/test-model", "-s", summarized.shortId, "and again"]))
    assert.strictEqual(chats(server).filter(titleRequest).length, 1, "a resumed session keeps its title")
  })

  it("CLI-1 a title request that never answers neither fails nor holds back the run", async () => {
    const titleRequest = (request: RecordedRequest) =>
      String(request.body.messages?.[0]?.content ?? "").startsWith("You name conversations")
    const { sandbox, server } = await setup({
      replyFor: (request) => (titleRequest(request) ? { kind: "stall" } : { kind: "text", text: "done" })
    })
    mkdirSync(sandbox.home, { recursive: true })
    writeFileSync(join(sandbox.home, "config.yaml"), "titles: { summarize: true }\n")
    const result = ok(await sandbox.run(["run", "-m", "openai/test-model", "Tidy the README"]))
    assert.strictEqual(result.stdout, "done\n")
    assert.strictEqual(result.stderr, "")
    assert.strictEqual(chats(server).filter(titleRequest).length, 1)
    assert.strictEqual((await listed(sandbox))[0]!.title, "Tidy the README")
  })
})
