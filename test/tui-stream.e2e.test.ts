// End-to-end: a long one-line answer streamed into the interactive UI, in a real terminal under
// tmux, ends up drawn as the whole answer is when the session is resumed (UI-1): the same rows, bold
// and inline code resolved, though it was cut into pieces while it streamed.
import { assert, describe, it } from "@effect/vitest"
import { makeSandbox } from "./support/cli.js"
import { startOpenAiServer } from "./support/openaiServer.js"
import { launch, makeTmux, tmuxPath, waitFor } from "./support/tmux.js"

const answer = `${Array.from(
  { length: 36 },
  (_, i) => `Part ${i} says **something bold ${i}** and \`code ${i}\` then more`
).join(" ")} THE END`

describe.skipIf(tmuxPath === undefined)("the UI while a long answer streams", () => {
  it("UI-1 a one-line answer over 1 KB streamed in many deltas shows, once complete, the rows of the answer drawn whole: no row ends early, no Markdown marker shows", async () => {
    const server = await startOpenAiServer({ replyFor: () => ({ kind: "text", text: answer, chunks: 300 }) })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxPath!, `alisio-e2e-stream-${process.pid}`)
    try {
      launch(tmux, sandbox, "", { LANG: "C.UTF-8" })
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.text("say it")
      tmux.keys("Enter")
      const answerRows = (screen: string) => {
        const rows = screen.split("\n")
        return rows.slice(
          rows.findIndex((row) => row.includes("Part 0 says")),
          rows.findIndex((row) => row.includes("THE END")) + 1
        )
      }
      const streamed = answerRows(await waitFor(tmux.screen, "THE END"))
      assert.isAbove(streamed.length, 10)
      assert.notInclude(streamed.join("\n"), "**")
      assert.notInclude(streamed.join("\n"), "`")
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
      // Resumed, the stored answer is drawn whole, at once: the streamed one shows the same rows.
      launch(tmux, sandbox, "-c", { LANG: "C.UTF-8" })
      const whole = answerRows(await waitFor(tmux.screen, "THE END"))
      assert.deepStrictEqual(streamed, whole)
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  })
})
