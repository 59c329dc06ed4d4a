// End-to-end: the built `alisio` ends a run on SIGHUP (the terminal closed) as on SIGTERM:
// recorded cancelled, and every process its commands started is stopped (CLI-2, TL-7).

import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { decodeRunEvent, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { type CliSandbox, cliBin, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"

const parseJsonl = (stdout: string): ReadonlyArray<KnownRunEvent> =>
  stdout
    .trim()
    .split("\n")
    .flatMap((line) => {
      const decoded = decodeRunEvent(JSON.parse(line))
      return Either.isRight(decoded) && decoded.right._tag === "Known" ? [decoded.right.event] : []
    })

/** Whether a process runs; a zombie nobody reaps (PID 1 in some containers) counts as gone. */
const running = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

/** Live processes whose command line contains `text`. */
const processesWith = (text: string): ReadonlyArray<number> =>
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        return readFileSync(`/proc/${name}/cmdline`, "utf8").includes(text) && running(Number(name))
          ? [Number(name)]
          : []
      } catch {
        return []
      }
    })

const waitUntil = async (check: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms
  while (!check() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50))
  return check()
}

// bash, a background child in its group, and one detached into a session of its own; each
// writes its pid, then the command waits for ever.
const starting = [
  "echo $$ > bash.pid",
  "sh -c 'echo $$ > child.pid; exec sleep 1000' &",
  "setsid sh -c 'echo $$ > detached.pid; exec sleep 1000' &",
  "until [ -s child.pid ] && [ -s detached.pid ]; do sleep 0.01; done",
  'echo "all-$((1 + 1))-started"'
]
const command = [...starting, "sleep 1000"].join("\n")

describe("signals (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let sandbox: CliSandbox | undefined
  afterEach(async () => {
    // A failed test must not leave its sleepers behind.
    for (const file of sandbox === undefined ? [] : readdirSync(sandbox.workspace)) {
      if (!file.endsWith(".pid")) continue
      try {
        process.kill(Number(readFileSync(join(sandbox!.workspace, file), "utf8").trim()), "SIGKILL")
      } catch {
        // Already gone, as it should be.
      }
    }
    await server?.close()
    sandbox?.cleanup()
    server = undefined
    sandbox = undefined
  })

  for (const signal of ["SIGHUP", "SIGTERM"] as const) {
    it(`TL-7 CLI-2 ${signal} while bash runs: the run is stored cancelled and no process of the command survives`, async () => {
      server = await startOpenAiServer({
        replies: [
          { kind: "tool", id: "call_1", name: "bash", args: { command } },
          { kind: "text", text: "never reached" }
        ]
      })
      sandbox = makeSandbox(server.baseURL)
      const cli = sandbox.start(["run", "--json", "--yes", "-m", "openai/test-model", "start the services"])
      await cli.waitFor("all-2-started")
      const pids = ["bash.pid", "child.pid", "detached.pid"].map((file) =>
        Number(readFileSync(join(sandbox!.workspace, file), "utf8").trim())
      )
      for (const pid of pids) assert.isTrue(running(pid), `pid ${pid} runs before the signal`)
      cli.child.kill(signal)
      const result = await cli.done
      assert.strictEqual(result.code, 130, result.stderr)
      const events = parseJsonl(result.stdout)
      assert.strictEqual(events.at(-1)?.type, "run_cancelled")
      for (const pid of pids) {
        assert.isTrue(await waitUntil(() => !running(pid)), `pid ${pid} is gone`)
      }
      const shown = await sandbox.run(["sessions", "show", events[0]!.sessionId, "--json"])
      assert.strictEqual(shown.code, 0, shown.stderr)
      assert.deepStrictEqual(
        (JSON.parse(shown.stdout) as { runs: ReadonlyArray<{ status: string }> }).runs.map((run) => run.status),
        ["cancelled"]
      )
    })
  }

  it("EV-1 CLI-2 SIGTERM while bash runs in a run with --timeout: the terminal event is the last line, after the cancelled call", async () => {
    server = await startOpenAiServer({
      replies: [
        { kind: "tool", id: "call_1", name: "bash", args: { command } },
        { kind: "text", text: "never reached" }
      ]
    })
    sandbox = makeSandbox(server.baseURL)
    const cli = sandbox.start(["run", "--json", "--yes", "--timeout", "1h", "-m", "openai/test-model", "start them"])
    await cli.waitFor("all-2-started")
    cli.child.kill("SIGTERM")
    const result = await cli.done
    assert.strictEqual(result.code, 130, result.stderr)
    const types = parseJsonl(result.stdout).map((event) =>
      event.type === "tool_call_completed" ? `${event.type}:${event.data.status}` : event.type
    )
    assert.deepStrictEqual(
      types.slice(types.indexOf("tool_call_started")).filter((type) => type !== "tool_progress"),
      ["tool_call_started", "tool_call_completed:cancelled", "message", "message", "run_cancelled"]
    )
  })

  it("TL-7 CLI-2 the terminal closing (its pty hung up) cancels the run and stops the command", async () => {
    // The command keeps printing: the CLI writes to the closed terminal after the hang-up (EIO).
    const ticking = [...starting, "while :; do echo tick; sleep 0.05; done"].join("\n")
    server = await startOpenAiServer({
      replies: [
        { kind: "tool", id: "call_1", name: "bash", args: { command: ticking } },
        { kind: "text", text: "never reached" }
      ]
    })
    sandbox = makeSandbox(server.baseURL)
    const prompt = `terminal-${process.pid}-${Date.now()}`
    // `script` gives the CLI a terminal of its own; killing `script` closes it, as closing a window does.
    const terminal = spawn(
      "script",
      ["-qfec", `exec '${process.execPath}' '${cliBin}' run --yes -m openai/test-model ${prompt}`, "/dev/null"],
      { cwd: sandbox.workspace, env: sandbox.env, stdio: ["pipe", "pipe", "pipe"] }
    )
    let seen = ""
    terminal.stdout.on("data", (data: Buffer) => {
      seen += data.toString("utf8")
    })
    assert.isTrue(await waitUntil(() => seen.includes("all-2-started"), 20_000), seen)
    const cliPid = processesWith(prompt).find((pid) => pid !== terminal.pid)
    assert.isDefined(cliPid)
    const pids = ["bash.pid", "child.pid", "detached.pid"].map((file) =>
      Number(readFileSync(join(sandbox!.workspace, file), "utf8").trim())
    )
    terminal.kill("SIGKILL")
    assert.isTrue(await waitUntil(() => !running(cliPid!), 10_000), "the CLI ended")
    for (const pid of pids) assert.isTrue(await waitUntil(() => !running(pid)), `pid ${pid} is gone`)
    const listed = await sandbox.run(["sessions", "list", "--json"])
    const session = JSON.parse(listed.stdout.trim().split("\n")[0]!) as { id: string }
    const shown = await sandbox.run(["sessions", "show", session.id, "--json"])
    assert.deepStrictEqual(
      (JSON.parse(shown.stdout) as { runs: ReadonlyArray<{ status: string }> }).runs.map((run) => run.status),
      ["cancelled"]
    )
  })

  it("ST-4 TL-7 after a kill -9 mid-command, the next start stops every process the command left running", async () => {
    server = await startOpenAiServer({
      replies: [
        { kind: "tool", id: "call_1", name: "bash", args: { command } },
        { kind: "text", text: "never reached" }
      ]
    })
    sandbox = makeSandbox(server.baseURL)
    const cli = sandbox.start(["run", "--json", "--yes", "-m", "openai/test-model", "start the services"])
    await cli.waitFor("all-2-started")
    const pids = ["bash.pid", "child.pid", "detached.pid"].map((file) =>
      Number(readFileSync(join(sandbox!.workspace, file), "utf8").trim())
    )
    cli.child.kill("SIGKILL")
    await cli.done
    // Nothing of Alisio ran to stop them.
    for (const pid of pids) assert.isTrue(running(pid), `pid ${pid} outlived the kill`)
    const listed = await sandbox.run(["sessions", "list", "--json"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    for (const pid of pids) assert.isTrue(await waitUntil(() => !running(pid)), `pid ${pid} is gone`)
    const session = JSON.parse(listed.stdout.trim().split("\n")[0]!) as { id: string }
    const shown = await sandbox.run(["sessions", "show", session.id, "--json"])
    assert.deepStrictEqual(
      (JSON.parse(shown.stdout) as { runs: ReadonlyArray<{ status: string }> }).runs.map((run) => run.status),
      ["interrupted"]
    )
  })
})
