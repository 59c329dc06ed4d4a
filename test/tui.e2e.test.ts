// The interactive UI end to end, in a real terminal: tmux runs the built `alisio` against the
// local OpenAI-compatible server, keys are typed with send-keys and the screen read with
// capture-pane; then the session database is read back with `alisio sessions show --json`.
import { spawnSync } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { cliBin, makeSandbox } from "./support/cli.js"
import { type RecordedRequest, type Reply, startOpenAiServer } from "./support/openaiServer.js"

const tmuxPath = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].find((file) => existsSync(file))

const shellQuote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`

/** One tmux server of the test's own (its socket), so nothing else a person runs is touched. */
const makeTmux = (tmux: string, socket: string) => {
  const run = (...args: ReadonlyArray<string>) => spawnSync(tmux, ["-L", socket, ...args], { encoding: "utf8" })
  return {
    start: (command: string, cwd: string) =>
      run("new-session", "-d", "-s", "ui", "-x", "100", "-y", "40", "-c", cwd, command),
    keys: (...keys: ReadonlyArray<string>) => run("send-keys", "-t", "ui", ...keys),
    text: (text: string) => run("send-keys", "-t", "ui", "-l", text),
    screen: () => run("capture-pane", "-p", "-t", "ui", "-S", "-200").stdout,
    kill: () => run("kill-server")
  }
}

const lastUserText = (request: RecordedRequest): string => {
  const users = (request.body.messages ?? []).filter((message) => message.role === "user")
  const content = users.at(-1)?.content
  return typeof content === "string" ? content : JSON.stringify(content ?? "")
}

const replyFor = (request: RecordedRequest): Reply => {
  const prompt = lastUserText(request)
  const last = request.body.messages?.at(-1)
  const afterTool = last?.role === "tool"
  if (prompt.includes("say hello")) return { kind: "text", text: "Hello from the **model**.", chunks: 5, delayMs: 20 }
  if (prompt.includes("list files"))
    return afterTool
      ? { kind: "text", text: "Listed the files." }
      : { kind: "tool", id: "call_ls", name: "bash", args: { command: "ls" } }
  if (prompt.includes("remove the notes"))
    return afterTool
      ? { kind: "text", text: "The notes were not removed." }
      : { kind: "tool", id: "call_rm", name: "bash", args: { command: "rm -f notes.txt" } }
  if (prompt.includes("pick a colour"))
    return afterTool
      ? {
          kind: "text",
          text: `You picked ${JSON.stringify(last?.content).includes("blue") ? "blue" : "something else"}.`
        }
      : {
          kind: "tool",
          id: "call_ask",
          name: "ask_user_question",
          args: { question: "Which colour?", options: ["red", "blue"] }
        }
  if (prompt.includes("write slowly"))
    return { kind: "text", text: "Slowly, word after word, ".repeat(200), chunks: 400, delayMs: 50 }
  return { kind: "text", text: "I did not understand." }
}

const waitFor = async (screen: () => string, text: string, timeoutMs = 30_000): Promise<string> => {
  const started = Date.now()
  for (;;) {
    const shown = screen()
    if (shown.includes(text)) return shown
    if (Date.now() - started > timeoutMs) throw new Error(`the screen never showed ${JSON.stringify(text)}:\n${shown}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

interface ShownSession {
  readonly id: string
  readonly runs: ReadonlyArray<{ readonly status: string }>
  readonly messages: ReadonlyArray<{
    readonly message: {
      readonly role: string
      readonly content: unknown
      readonly isError?: boolean
    }
  }>
}

describe("interactive UI outside a terminal", () => {
  it("CLI-1 without a terminal `alisio` is a usage error that points to `alisio run`; a misspelt command is refused", async () => {
    const server = await startOpenAiServer({ replies: [] })
    const sandbox = makeSandbox(server.baseURL)
    try {
      const piped = await sandbox.run([])
      assert.strictEqual(piped.code, 2)
      assert.include(piped.stderr, "needs a terminal")
      assert.include(piped.stderr, "alisio run")
      assert.strictEqual(piped.stdout, "")
      const typo = await sandbox.run(["sesions"])
      assert.strictEqual(typo.code, 2)
      assert.include(typo.stderr, "did you mean sessions?")
    } finally {
      await server.close()
      sandbox.cleanup()
    }
  })
})

if (tmuxPath === undefined) {
  describe("interactive UI in a terminal", () => {
    it.skip("UI-1 skipped: tmux is not installed here (.ci/run installs it with apt-get; install tmux to run this test)", () => {})
  })
} else {
  const tmuxBin = tmuxPath
  describe("interactive UI in a terminal", () => {
    it("UI-1 CLI-1 a person types, approves with y, denies with n, answers, cancels with Esc, resumes with /resume and leaves with Ctrl-D; the database holds what the screen showed", async () => {
      const server = await startOpenAiServer({ replyFor })
      const sandbox = makeSandbox(server.baseURL)
      const tmux = makeTmux(tmuxBin, `alisio-e2e-${process.pid}`)
      writeFileSync(join(sandbox.workspace, "notes.txt"), "keep me\n")
      const env = Object.entries({ ...sandbox.env, TERM: "xterm-256color", LANG: "C.UTF-8" })
        .map(([key, value]) => `${key}=${shellQuote(value ?? "")}`)
        .join(" ")
      const launch = `env -i ${env} ${shellQuote(process.execPath)} ${shellQuote(cliBin)}; echo "ALISIO EXITED $?"; sleep 60`
      try {
        tmux.start(launch, sandbox.workspace)
        await waitFor(tmux.screen, "ctrl-d exit")

        tmux.text("say hello")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "Hello from the model.")

        tmux.text("list files")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "Allow bash")
        tmux.text("y")
        await waitFor(tmux.screen, "Listed the files.")
        assert.include(tmux.screen(), "notes.txt", "the card shows the command's output")

        tmux.text("remove the notes")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "rm -f notes.txt")
        await waitFor(tmux.screen, "Allow bash")
        tmux.text("n")
        await waitFor(tmux.screen, "The notes were not removed.")
        assert.isTrue(existsSync(join(sandbox.workspace, "notes.txt")), "a denied command does not run")

        tmux.text("pick a colour")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "Which colour?")
        tmux.text("2")
        await waitFor(tmux.screen, "You picked blue.")

        tmux.text("write slowly")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "word after word, Slowly")
        tmux.keys("Escape")
        await waitFor(tmux.screen, "Cancelled.")
        await waitFor(tmux.screen, "ctrl-d exit")

        tmux.keys("C-d")
        await waitFor(tmux.screen, "ALISIO EXITED 0")
        tmux.kill()

        // Again, and back to that session with /resume and its picker.
        tmux.start(launch, sandbox.workspace)
        await waitFor(tmux.screen, "ctrl-d exit")
        tmux.text("/resume")
        await waitFor(tmux.screen, "/resume")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "Resume a session")
        assert.include(tmux.screen(), "say hello")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "Resumed session")
        const resumed = await waitFor(tmux.screen, "You picked blue.")
        assert.include(resumed, "Hello from the model.")
        assert.include(resumed, "Listed the files.")
        tmux.keys("C-d")
        await waitFor(tmux.screen, "ALISIO EXITED 0")

        const listed = await sandbox.run(["sessions", "list", "--json"])
        const sessions = listed.stdout
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as { readonly id: string })
        assert.strictEqual(sessions.length, 1, "one session: the resumed one went on, none was added")
        const shown = await sandbox.run(["sessions", "show", "--json", sessions[0]!.id])
        const session = JSON.parse(shown.stdout) as ShownSession
        assert.deepStrictEqual(
          session.runs.map((run) => run.status),
          ["completed", "completed", "completed", "completed", "cancelled"]
        )
        const texts = session.messages.map(({ message }) => {
          const content = message.content as ReadonlyArray<{ _tag: string; text?: string; name?: string }>
          const parts = content.map((part) => (part._tag === "tool_call" ? `call ${part.name}` : (part.text ?? "")))
          return `${message.role}: ${parts.join(" ")}`
        })
        assert.deepStrictEqual(
          texts.filter((line) => !line.startsWith("tool:")),
          [
            "user: say hello",
            "assistant: Hello from the **model**.",
            "user: list files",
            "assistant: call bash",
            "assistant: Listed the files.",
            "user: remove the notes",
            "assistant: call bash",
            "assistant: The notes were not removed.",
            "user: pick a colour",
            "assistant: call ask_user_question",
            "assistant: You picked blue.",
            "user: write slowly"
          ]
        )
        const tools = texts.filter((line) => line.startsWith("tool:"))
        assert.include(tools[0], "notes.txt")
        assert.include(tools[1], "denied by the user")
        assert.strictEqual(tools[2], "tool: blue")
      } finally {
        tmux.kill()
        await server.close()
        sandbox.cleanup()
      }
    }, 180_000)

    it("UI-1 CLI-2 closing the terminal while a run streams (SIGHUP) records the run cancelled and ends the process", async () => {
      const server = await startOpenAiServer({ replyFor })
      const sandbox = makeSandbox(server.baseURL)
      const tmux = makeTmux(tmuxBin, `alisio-e2e-hup-${process.pid}`)
      const env = Object.entries({ ...sandbox.env, TERM: "xterm-256color" })
        .map(([key, value]) => `${key}=${shellQuote(value ?? "")}`)
        .join(" ")
      try {
        tmux.start(
          `env -i ${env} ${shellQuote(process.execPath)} ${shellQuote(cliBin)} "write slowly"`,
          sandbox.workspace
        )
        await waitFor(tmux.screen, "word after word, Slowly")
        tmux.kill()
        let statuses: ReadonlyArray<string> = []
        for (let i = 0; i < 100; i++) {
          const listed = await sandbox.run(["sessions", "list", "--json"])
          const id = (JSON.parse(listed.stdout.trim().split("\n")[0] ?? "{}") as { readonly id?: string }).id
          if (id !== undefined) {
            const shown = JSON.parse((await sandbox.run(["sessions", "show", "--json", id])).stdout) as ShownSession
            statuses = shown.runs.map((run) => run.status)
            if (statuses[0] !== "running") break
          }
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        assert.deepStrictEqual(statuses, ["cancelled"])
      } finally {
        tmux.kill()
        await server.close()
        sandbox.cleanup()
      }
    }, 60_000)
  })
}
