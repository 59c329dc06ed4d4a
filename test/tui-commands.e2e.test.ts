// End-to-end: the interactive UI's own commands /connect and /ask, and words given to commands that take
// none (CLI-1, CMD-2), in a real terminal under tmux.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { cliBin, makeSandbox } from "./support/cli.js"
import { type RecordedRequest, startOpenAiServer } from "./support/openaiServer.js"
import { afterExit, launch, makeTmux, paneEnv, shellQuote, tmuxPath, waitFor } from "./support/tmux.js"

// tui.e2e.test.ts fails when CI lacks tmux; here its absence only skips.
describe.skipIf(tmuxPath === undefined)("the UI's /connect and /ask", () => {
  it("CLI-1 CMD-2 /connect <name> <url> checks the server, writes the provider and makes it usable at once; a key it lacks is named", async () => {
    const server = await startOpenAiServer({
      models: ["coder"],
      replies: [{ kind: "text", text: "Connected and answering." }]
    })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxPath!, `alisio-e2e-connect-${process.pid}`)
    const env = paneEnv(sandbox, { LANG: "C.UTF-8", OPENROUTER_API_KEY: "" })
    try {
      tmux.start(`env -i ${env} ${shellQuote(process.execPath)} ${shellQuote(cliBin)}; ${afterExit}`, sandbox.workspace)
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.text(`/connect mine ${server.baseURL}`)
      tmux.keys("Enter")
      await waitFor(tmux.screen, "`/model mine/coder` chooses one for this session.")
      assert.include(tmux.screen(), `Connected mine (${server.baseURL})`)
      assert.strictEqual(
        readFileSync(join(sandbox.home, "config.yaml"), "utf8"),
        `providers:\n  mine:\n    baseURL: ${server.baseURL}\n`
      )

      tmux.text("/model mine/coder")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "The new session will run with mine/coder.")
      tmux.text("hello")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "Connected and answering.")
      const chat = server.requests.find((request) => request.path.endsWith("/chat/completions"))!
      assert.strictEqual(chat.body.model, "coder")

      tmux.text("/connect openrouter")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "openrouter needs an API key: set OPENROUTER_API_KEY")
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 60_000)

  it("CMD-2 /ask sends the conversation and the question without tools; the answer streams in and is not kept", async () => {
    const textOf = (request: RecordedRequest) =>
      (request.body.messages ?? []).map((message) => JSON.stringify(message.content ?? "")).join("\n")
    let rest = () => {}
    const restAfter = new Promise<void>((resolve) => {
      rest = resolve
    })
    const server = await startOpenAiServer({
      replyFor: (request) =>
        textOf(request).includes("what did I ask for")
          ? { kind: "text", text: "You asked for a haiku about tides.", chunks: 2, restAfter }
          : { kind: "text", text: "Waves come and go." }
    })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxPath!, `alisio-e2e-ask-${process.pid}`)
    try {
      launch(tmux, sandbox, "", { LANG: "C.UTF-8" })
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.text("a haiku about tides")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "Waves come and go.")
      tmux.text("/ask what did I ask for?")
      tmux.keys("Enter")
      // The first half of the answer shows while the rest is still to come.
      await waitFor(tmux.screen, "You asked for a h")
      assert.notInclude(tmux.screen(), "You asked for a haiku")
      assert.notInclude(tmux.screen(), "(a side question: not kept in the conversation)")
      rest()
      await waitFor(tmux.screen, "You asked for a haiku about tides.")
      assert.include(tmux.screen(), "(a side question: not kept in the conversation)")

      const chats = server.requests.filter((request) => request.path.endsWith("/chat/completions"))
      const side = chats.at(-1)!
      assert.isUndefined(side.body.tools, "a side question offers no tools")
      const roles = (side.body.messages ?? []).map((message) => message.role)
      assert.deepStrictEqual(roles, ["system", "user", "assistant", "user"])
      assert.include(textOf(side), "a haiku about tides")
      assert.include(textOf(side), "Waves come and go.")
      assert.include(String(side.body.messages![0]!.content), "side question")

      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
      const listed = await sandbox.run(["sessions", "list", "--json"])
      const id = (JSON.parse(listed.stdout.trim().split("\n")[0]!) as { readonly id: string }).id
      const shown = JSON.parse((await sandbox.run(["sessions", "show", "--json", id])).stdout) as {
        readonly messages: ReadonlyArray<{ readonly message: { readonly content: unknown } }>
      }
      assert.strictEqual(shown.messages.length, 2, "the question and its answer are not stored")
      assert.notInclude(JSON.stringify(shown.messages), "what did I ask for")
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 60_000)

  it("CMD-2 CLI-3 words after /exit, /clear or /resume's id are refused, not dropped: nothing happens that was not asked", async () => {
    const server = await startOpenAiServer({ replies: [{ kind: "text", text: "First answer." }] })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxPath!, `alisio-e2e-arguments-${process.pid}`)
    try {
      launch(tmux, sandbox, "", { LANG: "C.UTF-8" })
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.text("hello")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "First answer.")
      tmux.text("/exit after saving")
      tmux.keys("Enter")
      await waitFor(tmux.screen, '/exit takes no arguments ("after saving" was given); type /exit alone.')
      tmux.text("/clear the logs")
      tmux.keys("Enter")
      await waitFor(tmux.screen, '/clear takes no arguments ("the logs" was given); type /clear alone.')
      assert.notInclude(tmux.screen(), "A new session starts", "the session stays")
      tmux.text("/resume abc def")
      tmux.keys("Enter")
      await waitFor(tmux.screen, '/resume takes one session id, not "abc def": /resume <id>.')
      assert.notInclude(tmux.screen(), "ALISIO EXITED")
      tmux.text("/exit")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 60_000)
})
