// End-to-end: what a headless run shows besides its answer (EV-1, CLI-1): a spinner and a last
// line on a terminal's stderr only, a 429 as `request_retry` and as one line, `--quiet`,
// `--output-last-message` and `--json --final` for scripts. The built CLI against a real
// OpenAI-protocol server on 127.0.0.1; `script` gives it a terminal where one is needed.

import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { decodeRunEvent, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { RunResult } from "alisio/Summary"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type CliResult, type CliSandbox, cliBin, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, type Reply, startOpenAiServer } from "./support/openaiServer.js"

const parseJsonl = (stdout: string): ReadonlyArray<KnownRunEvent> =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const decoded = decodeRunEvent(JSON.parse(line))
      if (Either.isLeft(decoded) || decoded.right._tag !== "Known") throw new Error(`not a KnownRunEvent: ${line}`)
      return decoded.right.event
    })

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`

/**
 * Runs the CLI with stderr (and stdin) on a terminal of its own and stdout in a file, as
 * `alisio run "…" > answer.txt` in a terminal: returns what the terminal showed and the file.
 */
const onTerminal = (sandbox: CliSandbox, args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number | null; readonly terminal: string; readonly stdout: string }>((resolve) => {
    const out = join(sandbox.workspace, "..", "stdout.txt")
    const command = `exec ${[process.execPath, cliBin, ...args].map(quote).join(" ")} > ${quote(out)}`
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      cwd: sandbox.workspace,
      env: sandbox.env,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let terminal = ""
    child.stdout.on("data", (data: Buffer) => {
      terminal += data.toString("utf8")
    })
    child.on("close", (code) => resolve({ code, terminal, stdout: readFileSync(out, "utf8") }))
  })

/** The frames of the spinner: a line of progress drawn over itself. */
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /

const rateLimited: Reply = {
  kind: "error",
  status: 429,
  message: "Rate limit reached for test-model",
  headers: { "retry-after": "1" }
}

describe("alisio run's progress and results (end to end)", () => {
  const servers: Array<OpenAiTestServer> = []
  const sandboxes: Array<CliSandbox> = []
  /** A server answering `replies`, and a sandbox whose configuration names its model. */
  const setup = async (replies: ReadonlyArray<Reply>) => {
    const server = await startOpenAiServer({ replies })
    const sandbox = makeSandbox(server.baseURL)
    servers.push(server)
    sandboxes.push(sandbox)
    // The model comes from the configuration: no announcement of a remembered choice on stderr.
    mkdirSync(sandbox.home, { recursive: true })
    writeFileSync(join(sandbox.home, "config.yaml"), "defaultModel: openai/test-model\n")
    return { server, sandbox }
  }
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close()
    for (const sandbox of sandboxes.splice(0)) sandbox.cleanup()
  })

  const slowBashThenAnswer: ReadonlyArray<Reply> = [
    { kind: "tool", id: "call_1", name: "bash", args: { command: "sleep 1; echo from-bash" } },
    { kind: "text", text: "All done: it works.", chunks: 3, firstDelayMs: 1_200 }
  ]

  it("EV-1 on a terminal: a spinner with elapsed time while waiting and while a tool runs, then one summary line", async () => {
    const { sandbox } = await setup(slowBashThenAnswer)
    const result = await onTerminal(sandbox, ["run", "--yes", "do the task"])
    assert.strictEqual(result.code, 0, result.terminal)
    assert.strictEqual(result.stdout, "All done: it works.\n", "stdout holds the answer only")
    const terminal = result.terminal
    assert.match(terminal, new RegExp(`${SPINNER.source}waiting for openai/test-model · 1s`))
    assert.match(terminal, new RegExp(`${SPINNER.source}running bash`))
    assert.include(terminal, "▸ bash")
    const listed = await sandbox.run(["sessions", "list", "--json"])
    const sessionId = (JSON.parse(listed.stdout.split("\n")[0]!) as { id: string }).id
    const lines = terminal.split(/\r?\n/).map((line) => line.slice(line.lastIndexOf("\r") + 1))
    const summary = lines.filter((line) => line.includes("go on with"))
    assert.deepStrictEqual(summary.length, 1, terminal)
    assert.match(
      summary[0]!,
      new RegExp(
        `^✓ completed · 2 turns · 24 in / 14 out tokens · \\d+(\\.\\d)?s · go on with alisio run -s ${sessionId.slice(0, 8)} "…"$`
      )
    )
    assert.strictEqual(lines.at(-1), "", "the spinner's line is blank at the end")
  })

  it("EV-1 with stderr not a terminal: no spinner, no carriage returns, no summary", async () => {
    const { sandbox } = await setup(slowBashThenAnswer)
    const result = await sandbox.run(["run", "--yes", "do the task"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(result.stdout, "All done: it works.\n")
    assert.include(result.stderr, "▸ bash")
    assert.notMatch(result.stderr, SPINNER)
    assert.notInclude(result.stderr, "\r")
    assert.notInclude(result.stderr, "waiting for")
    assert.notInclude(result.stderr, "go on with")
  })

  it("EV-1 --quiet on a terminal: the answer and nothing else", async () => {
    const { sandbox } = await setup(slowBashThenAnswer)
    const result = await onTerminal(sandbox, ["run", "--yes", "-q", "do the task"])
    assert.strictEqual(result.code, 0, result.terminal)
    assert.strictEqual(result.stdout, "All done: it works.\n")
    assert.strictEqual(result.terminal, "", "no tool lines, progress or summary")
    const piped = await setup([{ kind: "text", text: "quiet answer" }]).then(({ sandbox }) => {
      return sandbox.run(["run", "--quiet", "say it"])
    })
    assert.strictEqual(piped.stdout, "quiet answer\n")
    assert.strictEqual(piped.stderr, "")
  })

  it("EV-1 --quiet still reports errors on stderr", async () => {
    const { sandbox } = await setup([{ kind: "error", status: 400, message: "max_tokens is too large" }])
    const result = await sandbox.run(["run", "-q", "say it"])
    assert.strictEqual(result.code, 1)
    assert.strictEqual(result.stdout, "")
    assert.match(result.stderr, /^alisio: .*max_tokens is too large.*\n$/)
  })

  it("EV-1 PRV-2 a 429 the provider retries is a request_retry event with its status and wait, and one line in text mode", async () => {
    const { sandbox, server } = await setup([rateLimited, { kind: "text", text: "ok after the wait" }])
    const json = await sandbox.run(["run", "--json", "say it"])
    assert.strictEqual(json.code, 0, json.stderr)
    const events = parseJsonl(json.stdout)
    const retries = events.flatMap((event) => (event.type === "request_retry" ? [event.data] : []))
    assert.deepStrictEqual(retries, [{ attempt: 1, of: 2, reason: "rate_limited", status: 429, afterMs: 1_000 }])
    assert.strictEqual(events.at(-1)?.type, "run_completed")
    assert.strictEqual(json.stderr, "")

    const again = await setup([rateLimited, { kind: "text", text: "ok after the wait" }])
    const text = await again.sandbox.run(["run", "say it"])
    assert.strictEqual(text.code, 0, text.stderr)
    assert.strictEqual(text.stdout, "ok after the wait\n")
    assert.strictEqual(text.stderr, "↻ rate limited (HTTP 429); retrying in 1s (1/2)\n")
    for (const used of [server, again.server]) {
      assert.strictEqual(used.requests.filter((request) => request.path.endsWith("/chat/completions")).length, 2)
    }
  })

  it("LIM-4 a first-token resend is one line in text mode, its wait as people read it", async () => {
    const { sandbox } = await setup([{ kind: "stall" }, { kind: "text", text: "late but here" }])
    const result = await sandbox.run(["run", "--first-token-timeout", "700ms", "say it"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(result.stdout, "late but here\n")
    assert.strictEqual(result.stderr, "↻ no response within 700ms; sending the request again (1/1)\n")
  })

  it("EV-1 --output-last-message writes the answer to a file, an empty one when there is no answer", async () => {
    const { sandbox, server } = await setup([
      { kind: "text", text: "The answer.", chunks: 2 },
      { kind: "error", status: 400, message: "context too long" }
    ])
    const file = join(sandbox.workspace, "answer.txt")
    const answered = await sandbox.run(["run", "--json", "--output-last-message", file, "say it"])
    assert.strictEqual(answered.code, 0, answered.stderr)
    assert.strictEqual(readFileSync(file, "utf8"), "The answer.")
    const failed = await sandbox.run(["run", "--output-last-message", "answer.txt", "say it"])
    assert.strictEqual(failed.code, 1)
    assert.strictEqual(readFileSync(file, "utf8"), "", "written, and empty, when the run ends without an answer")

    const nowhere = await sandbox.run(["run", "--output-last-message", "missing/answer.txt", "say it"])
    assert.strictEqual(nowhere.code, 2)
    assert.strictEqual(
      nowhere.stderr,
      "alisio: --output-last-message: the folder of missing/answer.txt does not exist\n"
    )
    assert.isFalse(existsSync(join(sandbox.workspace, "missing")))

    // A folder is refused before the run, not after it has spent its tokens.
    const requests = server.requests.length
    const folder = await sandbox.run(["run", "--output-last-message", ".", "say it"])
    assert.deepStrictEqual(
      [folder.code, folder.stderr],
      [2, "alisio: --output-last-message: . is a folder; give the path of a file to write\n"]
    )
    assert.strictEqual(server.requests.length, requests)
  })

  it("EV-1 --json --final prints one JSON object with the outcome, Schema-encoded", async () => {
    const { sandbox } = await setup([
      { kind: "tool", id: "call_1", name: "read", args: { path: "notes.txt" } },
      { kind: "text", text: "The notes say hi.", chunks: 3 }
    ])
    writeFileSync(join(sandbox.workspace, "notes.txt"), "hi\n")
    const result: CliResult = await sandbox.run(["run", "--json", "--final", "read the notes"])
    assert.strictEqual(result.code, 0, result.stderr)
    const lines = result.stdout.trim().split("\n")
    assert.strictEqual(lines.length, 1, result.stdout)
    const outcome = Schema.decodeUnknownSync(RunResult)(JSON.parse(lines[0]!))
    assert.strictEqual(outcome.status, "completed")
    assert.strictEqual(outcome.text, "The notes say hi.")
    assert.strictEqual(outcome.turns, 2)
    assert.strictEqual(outcome.finishReason, "stop")
    assert.deepStrictEqual(outcome.usage, { inputTokens: 24, outputTokens: 14 })
    assert.isUndefined(outcome.error)
    assert.isAtLeast(outcome.durationMs, outcome.modelMs)
    const listed = await sandbox.run(["sessions", "list", "--json"])
    assert.strictEqual((JSON.parse(listed.stdout.split("\n")[0]!) as { id: string }).id, outcome.sessionId)

    const failing = await setup([{ kind: "error", status: 401, message: "Incorrect API key provided" }])
    const failed = await failing.sandbox.run(["run", "--json", "--final", "say it"])
    assert.strictEqual(failed.code, 1)
    const failure = Schema.decodeUnknownSync(RunResult)(JSON.parse(failed.stdout))
    assert.strictEqual(failure.status, "failed")
    assert.strictEqual(failure.failure?.code, "provider_error")
    assert.strictEqual(failure.failure?.providerCode, "auth")
    assert.include(failure.error ?? "", "Incorrect API key provided")

    const alone = await sandbox.run(["run", "--final", "say it"])
    assert.strictEqual(alone.code, 2)
    assert.match(alone.stderr, /^alisio: --final goes with --json/)
  })
})
