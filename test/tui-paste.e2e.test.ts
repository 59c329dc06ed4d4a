// End-to-end: what a person pastes into the interactive UI reaches the model as it was (UI-1), in a
// real terminal under tmux with bracketed paste: the tabs of a Makefile stay tabs.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { makeSandbox } from "./support/cli.js"
import { type RecordedRequest, startOpenAiServer } from "./support/openaiServer.js"
import { launch, makeTmux, tmuxPath, waitFor } from "./support/tmux.js"

const lastText = (request: RecordedRequest | undefined): string => {
  const content = request?.body.messages?.at(-1)?.content
  return typeof content === "string" ? content : JSON.stringify(content ?? "")
}

const makefile = "all: build\n\nbuild:\n\tcc -o app main.c\n\t@echo built\n"
const longMakefile = `${Array.from({ length: 12 }, (_, i) => `step${i}:\n\techo ${i}\tdone`).join("\n")}\n`

describe.skipIf(tmuxPath === undefined)("the UI when a person pastes", () => {
  it("UI-1 a pasted Makefile reaches the model with its tabs, shown four columns wide; a long one too, and one recalled from history", async () => {
    const server = await startOpenAiServer({
      replyFor: (request) => ({ kind: "text", text: `Got ${lastText(request).split("\t").length - 1} tabs.` })
    })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxPath!, `alisio-e2e-tabs-${process.pid}`)
    const small = join(sandbox.workspace, "..", "Makefile.small")
    const large = join(sandbox.workspace, "..", "Makefile.large")
    writeFileSync(small, makefile)
    writeFileSync(large, longMakefile)
    try {
      launch(tmux, sandbox, "", { LANG: "C.UTF-8" })
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.text("fix this Makefile: ")
      tmux.paste(small)
      const shown = await waitFor(tmux.screen, "@echo built")
      const recipe = shown.split("\n").find((line) => line.includes("cc -o app main.c")) ?? ""
      assert.strictEqual(recipe.indexOf("cc -o"), 4, `the tab shows as four columns: ${JSON.stringify(recipe)}`)
      assert.strictEqual(recipe.slice(0, 4).trim(), "")
      assert.notInclude(shown, "\t")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "Got 2 tabs.")
      assert.strictEqual(lastText(server.requests.at(-1)), `fix this Makefile: ${makefile.trim()}`)

      tmux.paste(large)
      await waitFor(tmux.screen, "[paste #1 ")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "Got 24 tabs.")
      assert.strictEqual(lastText(server.requests.at(-1)), longMakefile.trim())

      tmux.keys("Up", "Up")
      await waitFor(tmux.screen, "fix this Makefile:", 10_000, 2)
      tmux.keys("Enter")
      await waitFor(tmux.screen, "Got 2 tabs.", 10_000, 2)
      assert.strictEqual(lastText(server.requests.at(-1)), `fix this Makefile: ${makefile.trim()}`)
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 90_000)
})
