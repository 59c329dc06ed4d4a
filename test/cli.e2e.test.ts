// End-to-end: the built `alisio` against a real OpenAI-protocol server on 127.0.0.1 (CLI-1, CLI-2,
// CFG-1, EV-1, ST-4, TL-1…TL-4).

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { decodeRunEvent, isTerminalType, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type { Reply } from "./support/openaiServer.js"
import { integrityCheck } from "./support/sqlite.js"
import { useWorld } from "./support/world.js"

const parseJsonl = (stdout: string): ReadonlyArray<KnownRunEvent> =>
  stdout
    .trim()
    .split("\n")
    .map((line, index) => {
      const decoded = decodeRunEvent(JSON.parse(line))
      if (Either.isLeft(decoded) || decoded.right._tag !== "Known")
        throw new Error(`line ${index + 1} is not a KnownRunEvent: ${line}`)
      return decoded.right.event
    })

/** EV-5 on the wire: seq from 1, exactly one terminal event, last. */
const assertStream = (events: ReadonlyArray<KnownRunEvent>) => {
  for (const [index, event] of events.entries()) assert.strictEqual(event.seq, index + 1)
  const terminals = events.filter((event) => isTerminalType(event.type))
  assert.strictEqual(terminals.length, 1)
  assert.strictEqual(events.at(-1), terminals[0])
}

const bashThenAnswer = (command: string, answer = "All done: the files are listed."): ReadonlyArray<Reply> => [
  { kind: "tool", id: "call_1", name: "bash", args: { command } },
  { kind: "text", text: answer, chunks: 4 }
]

/** Processes whose command line contains `marker` and that are not zombies. */
const liveProcessesWith = (marker: string): ReadonlyArray<number> =>
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8")
        const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0]
        return cmdline.includes(marker) && state !== "Z" ? [Number(pid)] : []
      } catch {
        return []
      }
    })

const waitUntil = async (check: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms
  while (!check() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50))
  return check()
}

describe("alisio (end to end)", () => {
  const world = useWorld()
  const setup = (replies: ReadonlyArray<Reply>) => world({ replies })

  it("CLI-1 a two-turn task (bash, then text): the answer on stdout, tool activity on stderr", async () => {
    const { sandbox, server } = await setup(bashThenAnswer("echo from-bash > out.txt && cat out.txt"))
    const result = await sandbox.run(["run", "--yes", "-m", "openai/test-model", "write a file"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(result.stdout, "All done: the files are listed.\n")
    assert.include(result.stderr, "▸ bash")
    assert.include(result.stderr, "from-bash")
    assert.strictEqual(readFileSync(join(sandbox.workspace, "out.txt"), "utf8"), "from-bash\n")
    const second = server.requests.filter((r) => r.path.endsWith("/chat/completions"))[1]!
    const toolMessage = second.body.messages?.find((m) => m.role === "tool")
    assert.include(String(toolMessage?.content), "from-bash")
  })

  it("CLI-1 an answer the content filter stopped, and a run with no final answer, say so on stderr", async () => {
    const { sandbox } = await setup([
      { kind: "text", text: "I can", finish: "content_filter" },
      { kind: "text", text: "" },
      { kind: "text", text: "" }
    ])
    const filtered = await sandbox.run(["run", "-m", "openai/test-model", "tell me"])
    assert.strictEqual(filtered.code, 0, filtered.stderr)
    assert.strictEqual(filtered.stdout, "I can\n")
    assert.strictEqual(filtered.stderr, "(the provider's content filter stopped the answer)\n")
    const silent = await sandbox.run(["run", "-m", "openai/test-model", "say nothing"])
    assert.strictEqual(silent.code, 0, silent.stderr)
    assert.strictEqual(silent.stdout, "")
    assert.strictEqual(silent.stderr, "(the model gave no final answer)\n")
    const quiet = await sandbox.run(["run", "-q", "-m", "openai/test-model", "say nothing"])
    assert.strictEqual(quiet.stderr, "", "--quiet leaves it out")
  })

  it("EV-1 --json writes only RunEvents, one a line: seq from 1, exactly one terminal event", async () => {
    const { sandbox } = await setup(bashThenAnswer("echo hello"))
    const result = await sandbox.run(["run", "--json", "--yes", "-m", "openai/test-model", "say hello"])
    assert.strictEqual(result.code, 0, result.stderr)
    const events = parseJsonl(result.stdout)
    assertStream(events)
    assert.strictEqual(events[0]!.type, "run_started")
    assert.strictEqual(events.at(-1)!.type, "run_completed")
    const completed = events.find((e) => e.type === "tool_call_completed")
    assert.isTrue(completed?.type === "tool_call_completed" && completed.data.result.includes("hello"))
    assert.isTrue(
      events.some((e) => e.type === "tool_progress"),
      "bash streams tool_progress"
    )
    assert.isTrue(events.filter((e) => e.type === "turn_completed").length === 2)
  })

  it("ST-1 --session and --continue resume with the stored history; sessions show and events replay it", async () => {
    const { sandbox, server } = await setup([
      { kind: "text", text: "first answer" },
      { kind: "text", text: "second answer" },
      { kind: "text", text: "third answer" }
    ])
    const first = await sandbox.run(["run", "--json", "-m", "openai/test-model", "one"])
    const sessionId = parseJsonl(first.stdout)[0]!.sessionId
    const second = await sandbox.run(["run", "-s", sessionId, "-m", "openai/test-model", "two"])
    assert.strictEqual(second.stdout, "second answer\n")
    const third = await sandbox.run(["run", "-c", "-m", "openai/test-model", "three"])
    assert.strictEqual(third.code, 0, third.stderr)
    const chats = server.requests.filter((r) => r.path.endsWith("/chat/completions"))
    const roles = (i: number) => chats[i]!.body.messages!.filter((m) => m.role !== "system").map((m) => m.role)
    assert.deepStrictEqual(roles(1), ["user", "assistant", "user"])
    assert.deepStrictEqual(roles(2), ["user", "assistant", "user", "assistant", "user"])

    const shown = await sandbox.run(["sessions", "show", sessionId, "--json"])
    const session = JSON.parse(shown.stdout) as {
      runs: ReadonlyArray<{ status: string }>
      messages: ReadonlyArray<unknown>
    }
    assert.deepStrictEqual(
      session.runs.map((r) => r.status),
      ["completed", "completed", "completed"]
    )
    assert.strictEqual(session.messages.length, 6)
    const replay = await sandbox.run(["sessions", "events", sessionId, "--json"])
    const stored = parseJsonl(replay.stdout)
    assert.strictEqual(stored.filter((e) => e.type === "run_completed").length, 3)
    assert.isTrue(stored.every((e) => e.eventId !== undefined))
    const listed = await sandbox.run(["sessions", "list"])
    assert.match(
      listed.stdout,
      new RegExp(`^${sessionId.slice(0, 8)} .* one$`, "m"),
      "listed with its first prompt as title"
    )
  })

  it("CLI-2 SIGINT during a slow stream: exit 130, last line run_cancelled, the run row cancelled", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "x".repeat(400), chunks: 400, delayMs: 50 }])
    const running = sandbox.start(["run", "--json", "-m", "openai/test-model", "stream slowly"])
    await running.waitFor("text_delta")
    running.child.kill("SIGINT")
    const result = await running.done
    assert.strictEqual(result.code, 130, result.stderr)
    const events = parseJsonl(result.stdout)
    assertStream(events)
    assert.strictEqual(events.at(-1)!.type, "run_cancelled")
    assert.isTrue(await waitUntil(() => server.closedEarly() === 1), "the server saw the connection close")
    const shown = await sandbox.run(["sessions", "show", events[0]!.sessionId, "--json"])
    const session = JSON.parse(shown.stdout) as {
      runs: ReadonlyArray<{ status: string }>
      messages: ReadonlyArray<{ message: { role: string; content: ReadonlyArray<{ _tag: string; text?: string }> } }>
    }
    assert.deepStrictEqual(
      session.runs.map((r) => r.status),
      ["cancelled"]
    )
    // Nothing lost: the part of the answer that had arrived is the session's last message (it may
    // hold a few characters more than stdout: those the signal came between receiving and writing).
    const streamed = events
      .filter((e) => e.type === "text_delta")
      .map((e) => (e.data as { text: string }).text)
      .join("")
    const last = session.messages.at(-1)?.message
    assert.strictEqual(last?.role, "assistant")
    const kept = last?.content.map((part) => `${part._tag}:${part.text}`).join("|") ?? ""
    assert.match(kept, /^text:x+$/)
    assert.isTrue(kept.startsWith(`text:${streamed}`) && streamed.length > 0, `${kept} holds ${streamed}`)
  })

  it("CLI-2 SIGINT while bash runs kills its whole process group", async () => {
    const marker = `${Math.floor(Math.random() * 1e6)}.321`
    const { sandbox } = await setup(bashThenAnswer(`echo "$((6 * 7))-up"; sleep ${marker}`))
    const running = sandbox.start(["run", "--yes", "-m", "openai/test-model", "run something long"])
    await running.waitFor("42-up")
    assert.isAbove(liveProcessesWith(marker).length, 0, "the sleep is running")
    running.child.kill("SIGINT")
    const result = await running.done
    assert.strictEqual(result.code, 130)
    assert.isTrue(await waitUntil(() => liveProcessesWith(marker).length === 0), "no bash process is left")
  })

  it("LIM-4 a first-token stall recovers through request_retry", async () => {
    const { sandbox, server } = await setup([{ kind: "stall" }, { kind: "text", text: "finally" }])
    const result = await sandbox.run([
      "run",
      "--json",
      "--first-token-timeout",
      "400ms",
      "-m",
      "openai/test-model",
      "hello"
    ])
    assert.strictEqual(result.code, 0, result.stderr)
    const events = parseJsonl(result.stdout)
    assertStream(events)
    const retry = events.find((e) => e.type === "request_retry")
    assert.deepStrictEqual(retry?.type === "request_retry" ? retry.data : undefined, {
      attempt: 1,
      of: 1,
      reason: "first_token_timeout",
      afterMs: 400
    })
    assert.strictEqual(events.at(-1)!.type, "run_completed")
    assert.isTrue(await waitUntil(() => server.closedEarly() === 1), "the stalled request's connection was closed")
  })

  it("ST-4 kill -9 mid-run: the run reads interrupted afterwards and the database passes integrity_check", async () => {
    const { sandbox } = await setup([{ kind: "text", text: "partial", stallAfter: true }])
    const running = sandbox.start(["run", "--json", "-m", "openai/test-model", "hang"])
    await running.waitFor("text_delta")
    const sessionId = parseJsonl(
      running
        .stdout()
        .split("\n")
        .filter((l) => l !== "")
        .slice(0, 1)
        .join("\n")
    )[0]!.sessionId
    running.child.kill("SIGKILL")
    await running.done
    const shown = await sandbox.run(["sessions", "show", sessionId, "--json"])
    assert.strictEqual(shown.code, 0, shown.stderr)
    const session = JSON.parse(shown.stdout) as { status: string; runs: ReadonlyArray<{ status: string }> }
    assert.deepStrictEqual(
      session.runs.map((r) => r.status),
      ["interrupted"]
    )
    assert.strictEqual(session.status, "interrupted")
    assert.strictEqual(await integrityCheck(join(sandbox.home, "state", "alisio.db")), "ok")
  })

  it("CFG-1 a bad config file: exit 2 naming the file, the line and the key path", async () => {
    const { sandbox } = await setup([])
    mkdirSync(sandbox.home, { recursive: true })
    writeFileSync(join(sandbox.home, "config.yaml"), "limits:\n  maxTurns: -3\n")
    const result = await sandbox.run(["run", "-m", "openai/test-model", "hi"])
    assert.strictEqual(result.code, 2)
    assert.include(result.stderr, join(sandbox.home, "config.yaml"))
    assert.include(result.stderr, ":2:")
    assert.include(result.stderr, "limits.maxTurns")
    assert.notInclude(result.stderr, "    at ")
  })

  it("CFG-1 an untrusted project config is reported and ignored; --trust-project applies it", async () => {
    const { sandbox, server } = await setup([
      { kind: "text", text: "a" },
      { kind: "text", text: "b" }
    ])
    mkdirSync(join(sandbox.workspace, ".alisio"))
    writeFileSync(join(sandbox.workspace, ".alisio", "config.yaml"), "limits:\n  maxOutputTokens: 321\n")
    const untrusted = await sandbox.run(["run", "-m", "openai/test-model", "hi"])
    assert.strictEqual(untrusted.code, 0)
    assert.include(untrusted.stderr, "--trust-project")
    const trusted = await sandbox.run(["run", "--trust-project", "-m", "openai/test-model", "hi"])
    assert.strictEqual(trusted.code, 0)
    const chats = server.requests.filter((r) => r.path.endsWith("/chat/completions"))
    assert.notStrictEqual(chats[0]!.body.max_completion_tokens, 321)
    assert.strictEqual(chats[1]!.body.max_completion_tokens, 321)
  })

  it("CLI-1 a bad flag and an unknown session: exit 2 with a readable line, no stack trace", async () => {
    const { sandbox } = await setup([])
    const badFlag = await sandbox.run(["run", "--timeout", "soon", "hi"])
    assert.strictEqual(badFlag.code, 2)
    assert.include(badFlag.stdout + badFlag.stderr, "is not a duration")
    const unknown = await sandbox.run(["run", "-s", "no-such-session", "-m", "openai/test-model", "hi"])
    assert.strictEqual(unknown.code, 2)
    assert.match(unknown.stderr, /^alisio: No session no-such-session\./m)
    assert.notInclude(unknown.stderr, "    at ")
    const noModel = await sandbox.run(["run", "hi"], { env: { OPENAI_BASE_URL: "" } })
    assert.strictEqual(noModel.code, 2, "OpenAI's own API needs a model named: nothing is sent")
    assert.include(noModel.stderr, "Choose a model with -m")
    const badModel = await sandbox.run(["run", "-m", "openai/missing", "hi"])
    assert.strictEqual(badModel.code, 2)
    assert.include(badModel.stderr, "Available: openai/test-model")
  })

  it("TL-2 --read-only refuses write: the file is not created and the model is told", async () => {
    const { sandbox } = await setup([
      { kind: "tool", id: "call_w", name: "write", args: { path: "nope.txt", content: "x" } },
      { kind: "text", text: "could not write" }
    ])
    const result = await sandbox.run([
      "run",
      "--json",
      "--read-only",
      "--yes",
      "-m",
      "openai/test-model",
      "write a file"
    ])
    assert.strictEqual(result.code, 0, result.stderr)
    const events = parseJsonl(result.stdout)
    const completed = events.find((e) => e.type === "tool_call_completed")
    assert.strictEqual(completed?.type === "tool_call_completed" ? completed.data.status : undefined, "denied")
    assert.isFalse(existsSync(join(sandbox.workspace, "nope.txt")))
  })

  it("ST-3 --request-id is idempotent: a repeat returns the existing run without asking the model again", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "only once" }])
    const args = ["run", "--json", "--request-id", "req-42", "-m", "openai/test-model", "do it once"]
    const first = await sandbox.run(args)
    const second = await sandbox.run(args)
    assert.strictEqual(first.code, 0, first.stderr)
    assert.strictEqual(second.code, 0, second.stderr)
    const a = parseJsonl(first.stdout)
    const b = parseJsonl(second.stdout)
    assert.strictEqual(b[0]!.runId, a[0]!.runId)
    assert.deepStrictEqual(
      b.map((e) => e.eventId),
      a.filter((e) => e.eventId !== undefined).map((e) => e.eventId)
    )
    assert.strictEqual(server.requests.filter((r) => r.path.endsWith("/chat/completions")).length, 1)
  })
})
