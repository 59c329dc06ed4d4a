// End-to-end: /resume in the interactive UI when the session asked for cannot be read (UI-1,
// ST-1): a damaged stored run is said, with its remedy, and the session in use stays in use. (A
// damaged message no longer stops a session: it stands as a note.)
import { assert, describe, it } from "@effect/vitest"
import { makeSandbox } from "./support/cli.js"
import { startOpenAiServer } from "./support/openaiServer.js"
import { runTask, withDatabase } from "./support/sessions.js"
import { launch, makeTmux, tmuxPath, waitFor } from "./support/tmux.js"

describe.skipIf(tmuxPath === undefined)("the UI's /resume of a damaged session", () => {
  it("UI-1 ST-1 /resume of a session whose runs cannot be read says why and keeps the current session, not a silent half switch", async () => {
    let answers = 0
    const server = await startOpenAiServer({ replyFor: () => ({ kind: "text", text: `Answer ${++answers}.` }) })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxPath!, `alisio-e2e-damaged-${process.pid}`)
    try {
      const damaged = await runTask(sandbox, "an older task")
      withDatabase(sandbox, (db) => {
        db.prepare("UPDATE runs SET owner_pid = 'not a process id' WHERE session_id = ?").run(damaged.id)
      })
      launch(tmux, sandbox, "", { LANG: "C.UTF-8" })
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.text("the current task")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "Answer 2.")
      const current = tmux.screen().match(/session ([0-9a-f]{8})/)![1]!
      tmux.text(`/resume ${damaged.shortId}`)
      tmux.keys("Enter")
      await waitFor(tmux.screen, "The session could not be opened: A run in")
      const screen = tmux.screen()
      assert.include(screen.replace(/\s*\n\s*/g, " "), "Restore the file from a backup", "the remedy is named")
      assert.notInclude(screen, "Resumed session", "no switch is claimed")
      assert.include(screen, "Answer 2.", "the current conversation stays on the screen")
      assert.include(screen, `session ${current}`, "the status line names the session still in use")
      tmux.text("and on")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "Answer 3.")
      const last = server.requests.at(-1)!.body.messages!.map((message) => JSON.stringify(message.content))
      assert.isTrue(
        last.some((content) => content.includes("the current task")),
        "the next message goes on in the current session"
      )
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 60_000)
})
