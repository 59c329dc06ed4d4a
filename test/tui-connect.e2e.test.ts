// End-to-end: the interactive UI's /connect (CLI-1, CMD-2), in a real terminal under tmux.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { cliBin, makeSandbox } from "./support/cli.js"
import { startOpenAiServer } from "./support/openaiServer.js"
import { afterExit, makeTmux, paneEnv, shellQuote, tmuxPath, waitFor } from "./support/tmux.js"

// tui.e2e.test.ts fails when CI lacks tmux; here its absence only skips.
describe.skipIf(tmuxPath === undefined)("the UI's /connect", () => {
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
})
