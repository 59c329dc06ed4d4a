// End-to-end: slash commands in the interactive UI as a session goes on, in a real terminal under
// tmux: a command typed in capitals (CMD-1), templates added during the session (CMD-2), and a
// message refused before anything was stored, which is not shown as sent (UI-1).
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"
import { launch, makeTmux, tmuxPath, waitFor } from "./support/tmux.js"

const userPrompts = (server: OpenAiTestServer) =>
  server.requests
    .filter((request) => request.path.endsWith("/chat/completions"))
    .map((request) => String((request.body.messages ?? []).filter((m) => m.role === "user").at(-1)?.content ?? ""))

/** The screen split at the editor's rules: the transcript above it, and what the editor holds. */
const parts = (screen: string) => {
  const lines = screen.split("\n")
  const rules = lines.flatMap((line, index) => (/^─+$/.test(line) ? [index] : []))
  return {
    transcript: lines.slice(0, rules.at(-2)).join("\n"),
    editor: lines
      .slice(rules.at(-2)! + 1, rules.at(-1))
      .join("\n")
      .trim()
  }
}

/** Types key by key, as a person does. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const typeKeys = async (tmux: ReturnType<typeof makeTmux>, text: string) => {
  for (const key of text) {
    tmux.text(key)
    await pause(50)
  }
}

/** Closes the list and empties the editor. */
const clear = async (tmux: ReturnType<typeof makeTmux>) => {
  tmux.keys("Escape")
  await pause(200)
  tmux.keys("C-u")
  await pause(200)
}

const session = async (
  name: string,
  body: (tmux: ReturnType<typeof makeTmux>, sandbox: CliSandbox, server: OpenAiTestServer) => Promise<void>
) => {
  const server = await startOpenAiServer({
    replyFor: (_request, index) => ({ kind: "text", text: `Answer number ${index + 1}.` })
  })
  const sandbox = makeSandbox(server.baseURL)
  mkdirSync(join(sandbox.home, "prompts"), { recursive: true })
  const tmux = makeTmux(tmuxPath!, `alisio-e2e-${name}-${process.pid}`)
  try {
    await body(tmux, sandbox, server)
  } finally {
    tmux.kill()
    await server.close()
    sandbox.cleanup()
  }
}

describe.skipIf(tmuxPath === undefined)("the UI's commands as the session goes on", () => {
  it(
    "CMD-1 `/Upper x` typed in the UI runs /upper; `/Usr is…` in capitals that names no command is sent as typed",
    () =>
      session("upper", async (tmux, sandbox, server) => {
        writeFileSync(join(sandbox.home, "prompts", "Upper.md"), "Shout $ARGUMENTS in capitals.\n")
        launch(tmux, sandbox, "", { LANG: "C.UTF-8" })
        await waitFor(tmux.screen, "ctrl-d exit")
        tmux.text("/Upper hello")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "Answer number 1.")
        tmux.text("/Usr is a folder?")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "Answer number 2.")
        assert.deepStrictEqual(userPrompts(server), ["Shout hello in capitals.", "/Usr is a folder?"])
        assert.notInclude(tmux.screen(), "No command is named")
        tmux.keys("C-d")
        await waitFor(tmux.screen, "ALISIO EXITED 0")
      }),
    60_000
  )

  it(
    "CMD-2 a template added during the session is listed after `/` and runs when typed, without a restart",
    () =>
      session("added", async (tmux, sandbox, server) => {
        writeFileSync(join(sandbox.home, "prompts", "first.md"), "The first template.\n")
        launch(tmux, sandbox, "", { LANG: "C.UTF-8" })
        // Once the model is chosen the commands are known: a `/` typed earlier finds an empty list.
        await waitFor(tmux.screen, "using openai/test-model")
        await typeKeys(tmux, "/fir")
        await waitFor(tmux.screen, "The first template.")
        await clear(tmux)

        writeFileSync(
          join(sandbox.home, "prompts", "listed.md"),
          "---\ndescription: Added while the session ran\n---\nListed $ARGUMENTS.\n"
        )
        await typeKeys(tmux, "/lis")
        await waitFor(tmux.screen, "Added while the session ran")
        await clear(tmux)

        // Typed at once, never listed: the unknown name makes the catalog look again.
        mkdirSync(join(sandbox.home, "prompts", "team"))
        writeFileSync(join(sandbox.home, "prompts", "team", "typed.md"), "Typed $ARGUMENTS.\n")
        tmux.text("/team:typed right away")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "Answer number 1.")
        tmux.text("/listed too")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "Answer number 2.")
        assert.deepStrictEqual(userPrompts(server), ["Typed right away.", "Listed too."])
        assert.notInclude(tmux.screen(), "No command is named")
        tmux.keys("C-d")
        await waitFor(tmux.screen, "ALISIO EXITED 0")
      }),
    60_000
  )

  it(
    "UI-1 a message refused before anything is stored is not shown as sent: only the reason shows, and the text is back in the editor",
    () =>
      session("refused", async (tmux, sandbox, server) => {
        const pasted = join(sandbox.workspace, "..", "paste.txt")
        writeFileSync(pasted, `please read ${"word ".repeat(40_000)}the end`)
        launch(tmux, sandbox, "--max-context-tokens 12000", { LANG: "C.UTF-8" })
        await waitFor(tmux.screen, "new session")
        tmux.paste(pasted)
        await waitFor(tmux.screen, "[paste #1 ")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "nothing was stored")
        const { transcript, editor } = parts(tmux.screen())
        assert.notInclude(transcript, "please read", "the refused message is not in the transcript")
        assert.notInclude(transcript, "word word")
        assert.include(editor, "[paste #1 ")
        assert.deepStrictEqual(userPrompts(server), [])

        tmux.keys("C-u")
        tmux.text("a short one")
        tmux.keys("Enter")
        await waitFor(tmux.screen, "Answer number 1.")
        assert.include(parts(tmux.screen()).transcript, "a short one")
        tmux.keys("C-d")
        await waitFor(tmux.screen, "ALISIO EXITED 0")
      }),
    60_000
  )
})
