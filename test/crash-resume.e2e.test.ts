// End-to-end: kill -9 of `alisio run` at the moments a crash hurts most — a tool call's arguments
// half-streamed, a bash call running, a subagent running — then resume the session. The database
// passes integrity_check, the run reads interrupted, no lock holds the session, and the resumed
// request is well formed: every tool call it carries has its result, no message twice (ST-4, CH-3).
import { spawnSync } from "node:child_process"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { CliSandbox, RunningCli } from "./support/cli.js"
import type { OpenAiTestServer, RecordedRequest, Reply } from "./support/openaiServer.js"
import { withDatabase } from "./support/sessions.js"
import { integrityCheck } from "./support/sqlite.js"
import { useWorld } from "./support/world.js"

interface Sent {
  readonly role: string
  readonly content?: unknown
  readonly tool_calls?: ReadonlyArray<{ readonly id: string }>
  readonly tool_call_id?: string
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const sent = (request: RecordedRequest) => (request.body.messages ?? []) as ReadonlyArray<Sent>
const chat = (server: OpenAiTestServer) => server.requests.filter((r) => r.path.endsWith("/chat/completions"))
const isResume = (request: RecordedRequest) => JSON.stringify(sent(request).at(-1)?.content).includes("go on")
const isSubagent = (request: RecordedRequest) =>
  String(sent(request).find((m) => m.role === "system")?.content).includes("You are the subagent")

/** Why the request would be refused by a strict server, or a model misled; empty when it is well formed. */
const malformed = (request: RecordedRequest): ReadonlyArray<string> => {
  const messages = sent(request)
  const calls = messages.flatMap((m) => m.tool_calls?.map((call) => call.id) ?? [])
  const results = messages.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : []))
  const users = messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content))
  return [
    ...calls.filter((id) => !results.includes(id)).map((id) => `call ${id} has no result`),
    ...results.filter((id) => id === undefined || !calls.includes(id)).map((id) => `result ${id} has no call`),
    ...(new Set(calls).size === calls.length ? [] : ["a tool call twice"]),
    ...(new Set(users).size === users.length ? [] : ["a user message twice"])
  ]
}

/** The processes whose command line holds `text`. */
const commandsWith = (text: string): ReadonlyArray<string> =>
  readdirSync("/proc").flatMap((pid) => {
    if (!/^\d+$/.test(pid)) return []
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text) ? [pid] : []
    } catch {
      return []
    }
  })

const sessionOf = (running: RunningCli) =>
  (JSON.parse(running.stdout().split("\n")[0]!) as { sessionId: string }).sessionId

/** Kills the run, then checks what a person finds and that the session resumes with a sound request. */
const killAndResume = async (server: OpenAiTestServer, sandbox: CliSandbox, running: RunningCli) => {
  const sessionId = sessionOf(running)
  running.child.kill("SIGKILL")
  await running.done
  assert.strictEqual(await integrityCheck(join(sandbox.home, "state", "alisio.db")), "ok")
  const listed = await sandbox.run(["sessions", "list"])
  assert.strictEqual(listed.code, 0, listed.stderr)
  const shown = await sandbox.run(["sessions", "show", sessionId, "--json"])
  assert.strictEqual(shown.code, 0, shown.stderr)
  const session = JSON.parse(shown.stdout) as { status: string; runs: ReadonlyArray<{ status: string }> }
  assert.deepStrictEqual(
    session.runs.map((r) => r.status),
    ["interrupted"]
  )
  const before = chat(server).length
  const resumed = await sandbox.run(["run", "--yes", "-q", "-m", "openai/test-model", "-s", sessionId, "go on"])
  assert.strictEqual(resumed.code, 0, resumed.stderr)
  assert.include(resumed.stdout, "resumed")
  const requests = chat(server).slice(before)
  assert.isAbove(requests.length, 0)
  for (const request of requests) assert.deepStrictEqual(malformed(request), [], JSON.stringify(sent(request)))
  const calls = withDatabase(sandbox, (db) => db.prepare("SELECT status FROM tool_calls").all())
  assert.isTrue(
    calls.every((c) => c.status !== "running"),
    JSON.stringify(calls)
  )
  return { sessionId, requests }
}

describe("kill -9 at the worst moments, then resume (end to end)", () => {
  const world = useWorld()
  const start = (sandbox: CliSandbox) => sandbox.start(["run", "--yes", "--json", "-m", "openai/test-model", "do it"])
  const resumedOr = (reply: Reply) => (request: RecordedRequest) =>
    isResume(request) || sent(request).at(-1)?.role === "tool" ? ({ kind: "text", text: "resumed" } as const) : reply

  it("ST-4 killed while a tool call's arguments stream: the cut call is not in the resumed request", async () => {
    const { server, sandbox } = await world({
      replyFor: resumedOr({ kind: "tool", id: "call_cut", name: "bash", args: { command: "echo hi" }, delayMs: 5_000 })
    })
    const running = start(sandbox)
    await running.waitFor("run_started")
    while (chat(server).length === 0) await sleep(20)
    await sleep(300)
    const { requests } = await killAndResume(server, sandbox, running)
    assert.notInclude(JSON.stringify(requests), "call_cut")
  })

  it("ST-4 TL-1 killed while a bash call runs: its command is stopped, the call reads cancelled, the session resumes", async () => {
    const mark = `late-${process.pid}-${Date.now()}`
    const { server, sandbox } = await world({
      replyFor: resumedOr({ kind: "tool", id: "call_bash", name: "bash", args: { command: `sleep 30; echo ${mark}` } })
    })
    const running = start(sandbox)
    await running.waitFor("tool_call_started")
    await sleep(300)
    running.child.kill("SIGKILL")
    await running.done
    assert.isNotEmpty(commandsWith(mark), "a kill -9 leaves the command running until the next start")
    await killAndResume(server, sandbox, running)
    assert.deepStrictEqual(
      withDatabase(sandbox, (db) => db.prepare("SELECT id, status FROM tool_calls").all()),
      [{ id: "call_bash", status: "cancelled" }]
    )
    assert.deepStrictEqual(commandsWith(mark), [], "the killed run's command kept running")
  })

  it("ST-4 CH-3 the parent killed while its subagent runs: both read interrupted, the parent resumes", async () => {
    const { server, sandbox } = await world({
      replyFor: (request) =>
        isSubagent(request)
          ? { kind: "text", text: "child ".repeat(100), chunks: 50, delayMs: 100 }
          : resumedOr({
              kind: "tool",
              id: "call_task",
              name: "task",
              args: { description: "look", prompt: "Look around.", subagent_type: "explore" }
            })(request)
    })
    const running = start(sandbox)
    await running.waitFor("child_session_started")
    await sleep(300)
    await killAndResume(server, sandbox, running)
    const children = withDatabase(sandbox, (db) =>
      db.prepare("SELECT status FROM sessions WHERE parent_id IS NOT NULL").all()
    )
    assert.deepStrictEqual(children, [{ status: "interrupted" }])
  })
  it("ST-4 TL-1 the temp file a write killed mid-way left beside a file is removed by the next write of it; a live writer's stays", async () => {
    const { sandbox } = await world({
      replyFor: resumedOr({
        kind: "tool",
        id: "call_write",
        name: "write",
        args: { path: "notes.txt", content: "whole" }
      })
    })
    // What `kill -9` during the write tool leaves: `.<name>.<pid>.<uuid>.tmp`, half written.
    const dead = spawnSync("true").pid
    const left = `.notes.txt.${dead}.0b8e4c1e-5f0a-4c3e-9d43-2f4f7e1c9a10.tmp`
    const live = `.notes.txt.${process.pid}.7d1e2c3b-4a5f-4e6d-8c9b-0a1b2c3d4e5f.tmp`
    writeFileSync(join(sandbox.workspace, left), "half")
    writeFileSync(join(sandbox.workspace, live), "being written")
    const result = await sandbox.run(["run", "--yes", "-q", "-m", "openai/test-model", "write the notes"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(readFileSync(join(sandbox.workspace, "notes.txt"), "utf8"), "whole")
    assert.deepStrictEqual(readdirSync(sandbox.workspace).sort(), [live, "notes.txt"])
  })
})
