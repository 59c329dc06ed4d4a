// End-to-end: what a person gets wrong or pushes too far in the interactive UI (UI-1, CMD-2), in a
// real terminal under tmux: a model name that cannot be used, a paste of one enormous line, typing
// on as an approval opens.
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { makeSandbox } from "./support/cli.js"
import { type RecordedRequest, startOpenAiServer } from "./support/openaiServer.js"
import { launch, makeTmux, readDialog, tmuxPath, waitFor } from "./support/tmux.js"

const lastText = (request: RecordedRequest): string => {
  const content = request.body.messages?.at(-1)?.content
  return typeof content === "string" ? content : JSON.stringify(content ?? "")
}

const echo = () =>
  startOpenAiServer({
    models: ["test-model", "other"],
    replyFor: (request) => ({
      kind: "text",
      text: `Echo from ${request.body.model}: ${lastText(request).length} characters, ending ${JSON.stringify(lastText(request).slice(-12))}.`
    })
  })

describe.skipIf(tmuxPath === undefined)("the UI when a person errs", () => {
  it("CMD-2 UI-1 a /model name that cannot be used is refused and changes nothing; /help <command> shows that one; a message that cannot go stays in the editor", async () => {
    const server = await echo()
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxPath!, `alisio-e2e-mistakes-${process.pid}`)
    const start = (args: string) => launch(tmux, sandbox, args, { LANG: "C.UTF-8" })
    try {
      start("")
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.text("/model nope")
      tmux.keys("Enter")
      await waitFor(tmux.screen, 'Unknown model "nope"')
      tmux.text("/model")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "No session yet; the new session will run with openai/test-model")
      tmux.text("/help /model")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "/model [provider/model]")
      tmux.text("/help modle")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "No command is named /modle. /help lists the commands.")
      assert.notInclude(tmux.screen(), "/compact", "/help <command> shows that command alone")
      tmux.text("hello after a typo")
      tmux.keys("Enter")
      await waitFor(tmux.screen, 'Echo from test-model: 18 characters, ending "after a typo".')
      assert.strictEqual(tmux.screen().split('Unknown model "nope"').length - 1, 1, "said once, for the command")
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
      tmux.kill()

      start("-m nope")
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.text("keep this draft")
      tmux.keys("Enter")
      await waitFor(tmux.screen, 'Unknown model "nope"', 30_000, 2)
      await waitFor(tmux.screen, "keep this draft", 10_000)
      const lines = tmux.screen().split("\n")
      const rules = lines.flatMap((line, index) => (/^─+$/.test(line) ? [index] : []))
      const editor = lines.slice(rules.at(-2)! + 1, rules.at(-1)).join("\n")
      assert.include(editor, "keep this draft", "the message is back in the editor")
      assert.notInclude(lines.slice(0, rules.at(-2)).join("\n"), "keep this draft", "and not shown as sent (UI-1)")
      tmux.keys("C-u")
      tmux.text("/model openai/other")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "The new session will run with openai/other.")
      tmux.text("hello")
      tmux.keys("Enter")
      await waitFor(tmux.screen, 'Echo from other: 5 characters, ending "hello".')
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
      const left = tmux.screen().split("\n")
      const exited = left.findIndex((line) => line.includes("ALISIO EXITED 0"))
      assert.strictEqual(
        left
          .slice(0, exited)
          .filter((line) => line !== "")
          .at(-1),
        'Echo from other: 5 characters, ending "hello".',
        "the conversation's last line stays whole"
      )
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 90_000)

  it("UI-1 a pasted line of 100 KB with a wide character in it shows at once, goes out whole and unfolds with Ctrl-O", async () => {
    const server = await echo()
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxPath!, `alisio-e2e-paste-${process.pid}`)
    const pasted = join(sandbox.workspace, "..", "paste.txt")
    writeFileSync(pasted, `${"A".repeat(50_000)}中文🎉${"B".repeat(49_990)}the end`)
    try {
      launch(tmux, sandbox, "", { LANG: "C.UTF-8" })
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.paste(pasted)
      await waitFor(tmux.screen, "[paste #1 ")
      tmux.keys("Enter")
      await waitFor(tmux.screen, 'Echo from test-model: 100001 characters, ending "BBBBBthe end".')
      assert.include(tmux.screen(), "more lines (Ctrl-O shows them)")
      tmux.keys("C-o")
      await waitFor(tmux.screen, "中文🎉")
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 90_000)

  it("UI-1 a `y` typed as an approval opens approves nothing: the keys go on into the draft, the dialog waits for an answer", async () => {
    const server = await startOpenAiServer({
      replyFor: (request) =>
        request.body.messages?.at(-1)?.role === "tool"
          ? { kind: "text", text: "Left it alone." }
          : { kind: "tool", id: "call_1", name: "bash", args: { command: "echo ran > ran.txt" } }
    })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxPath!, `alisio-e2e-typeahead-${process.pid}`)
    try {
      launch(tmux, sandbox, "", { LANG: "C.UTF-8" })
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.text("tidy up")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "Allow bash")
      tmux.text("yes and then the docs")
      await readDialog()
      assert.include(tmux.screen(), "Allow bash", "the dialog still waits")
      assert.isFalse(existsSync(join(sandbox.workspace, "ran.txt")), "nothing ran")
      tmux.text("n")
      await waitFor(tmux.screen, "Left it alone.")
      await waitFor(tmux.screen, "yes and then the docs", 10_000, 1)
      assert.isFalse(existsSync(join(sandbox.workspace, "ran.txt")))
      assert.include(tmux.screen(), "denied")
      tmux.keys("C-u")
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 60_000)
})
