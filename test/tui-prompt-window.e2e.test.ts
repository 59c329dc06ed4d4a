// End-to-end: a message too large for the model's context window, sent in the interactive UI
// (CTX-1, CLI-1, UI-1), in a real terminal under tmux: refused with the reason and the remedy,
// nothing stored or sent, and the text back in the editor.
import { writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { startOpenAiServer } from "./support/openaiServer.js"
import { launch, makeTmux, tmuxPath, waitFor } from "./support/tmux.js"

interface BareDb {
  prepare(sql: string): { get(): Record<string, unknown> }
  close(): void
}
const Sqlite = createRequire(import.meta.url)("better-sqlite3") as new (
  filename: string,
  options?: { readonly readonly?: boolean }
) => BareDb
const count = (sandbox: CliSandbox, table: string): number => {
  const db = new Sqlite(join(sandbox.home, "state", "alisio.db"), { readonly: true })
  try {
    return Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get().n)
  } finally {
    db.close()
  }
}

describe.skipIf(tmuxPath === undefined)("the UI and a message larger than the context window", () => {
  it("CTX-1 CLI-1 a pasted message too large for the window is refused in the UI, nothing is stored or sent, and it stays in the editor", async () => {
    const server = await startOpenAiServer({ replyFor: () => ({ kind: "text", text: "Answered the short one." }) })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxPath!, `alisio-e2e-window-${process.pid}`)
    const pasted = join(sandbox.workspace, "..", "paste.txt")
    writeFileSync(pasted, `${"word ".repeat(40_000)}the end`)
    try {
      launch(tmux, sandbox, "--max-context-tokens 12000", { LANG: "C.UTF-8" })
      await waitFor(tmux.screen, "ctrl-d exit")
      tmux.paste(pasted)
      await waitFor(tmux.screen, "[paste #1 ")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "The prompt is about 50 ")
      const screen = tmux.screen().replace(/\s+/g, " ")
      assert.include(screen, "its context window is 12 000 tokens (limits.maxContextTokens)")
      assert.include(screen, "nothing was stored")
      const chats = server.requests.filter((r) => r.path.endsWith("/chat/completions"))
      assert.strictEqual(chats.length, 0)
      assert.deepStrictEqual([count(sandbox, "sessions"), count(sandbox, "messages")], [0, 0])
      const lines = tmux.screen().split("\n")
      const rules = lines.flatMap((line, index) => (/^─+$/.test(line) ? [index] : []))
      const editor = lines.slice(rules.at(-2)! + 1, rules.at(-1)).join("\n")
      assert.strictEqual(editor.trim(), "[paste #1 200007 chars]", "the message is back in the editor, whole")
      // Sent again as it is, it is the same message: refused again, so nothing of it was lost.
      tmux.keys("Enter")
      await waitFor(tmux.screen, "The prompt is about 50 ", 30_000, 2)
      tmux.keys("C-u")
      tmux.text("a short one")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "Answered the short one.")
      assert.deepStrictEqual([count(sandbox, "sessions"), count(sandbox, "messages")], [1, 2])
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 90_000)
})
