// A terminal one or two columns wide: what the person types is still laid out, wide characters too
// (UI-1).
import { assert, describe, it } from "@effect/vitest"
import { UserEntry } from "../../src/tui/Entries.js"
import { visibleWidth } from "../../src/tui/PiTuiCore.js"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { settle, VirtualTerminal } from "./VirtualTerminal.js"

describe("TUI in a very narrow terminal", () => {
  it("UI-1 typing CJK and emoji into an editor one or two columns wide draws rows no wider than the terminal; the arrows still move and the text is submitted whole", async () => {
    const screen = new Screen(new VirtualTerminal(2, 10), makeTheme({ color: false }))
    const typed = "say 中文 👩🏽‍💻 ok"
    screen.editor.handleInput(typed)
    for (const width of [1, 2, 3]) {
      const rows = screen.editor.render(width)
      assert.isAbove(rows.length, 0)
      for (const row of rows) assert.isAtMost(visibleWidth(row), width, `${JSON.stringify(row)} at ${width}`)
      screen.editor.handleInput("\x1b[A")
      screen.editor.handleInput("\x1b[B")
    }
    const submitted = await new Promise<string>((resolve) => {
      screen.editor.onSubmit = resolve
      screen.editor.handleInput("\r")
    })
    assert.strictEqual(submitted, typed)
  })
})

describe("TUI conversation in a very narrow terminal", () => {
  it("UI-1 a message sent, a queued one and a long paste shown in a terminal one column wide keep the interface up; widened again, it shows them", async () => {
    const terminal = new VirtualTerminal(40, 12)
    const screen = new Screen(terminal, makeTheme({ color: false }))
    screen.tui.start()
    try {
      screen.add(new UserEntry("say hi 中文", screen.theme))
      screen.queue("queued 👩🏽‍💻")
      screen.add(new UserEntry(Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n"), screen.theme))
      await settle()
      for (const width of [1, 2, 1]) {
        terminal.resize(width, 12)
        await settle()
        screen.editor.handleInput("x")
        screen.tui.requestRender()
        await settle()
      }
      terminal.resize(40, 12)
      await settle()
      screen.notice("still here")
      await settle()
      assert.include((await terminal.screen()).join("\n"), "still here")
    } finally {
      screen.tui.stop()
    }
  })
})
