// pi-tui's editor turns tabs into four spaces; a pasted Makefile must still reach the model with
// its tabs (UI-1).
import { assert, describe, it } from "@effect/vitest"
import { restoreTabs } from "../../src/tui/PasteTabs.js"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { VirtualTerminal } from "./VirtualTerminal.js"

const submitted = (screen: Screen) =>
  new Promise<string>((resolve) => {
    screen.editor.onSubmit = (text) => resolve(restoreTabs(text))
    screen.editor.handleInput("\r")
  })

describe("TUI pasted tabs", () => {
  it("UI-1 the tabs of a bracketed paste are submitted as tabs and drawn four columns wide; a typed Tab is not a tab", async () => {
    const screen = new Screen(new VirtualTerminal(60, 12), makeTheme({ color: false }))
    screen.editor.handleInput("\x1b[200~build:\n\tcc -o app")
    screen.editor.handleInput(" main.c\x1b[105;5u# done\x1b[201~")
    const rows = screen.editor.render(60).join("\n")
    assert.notInclude(rows, "\t")
    assert.match(rows, /^\s{4}cc -o app main\.c\s{4}# done/m)
    assert.strictEqual(await submitted(screen), "build:\n\tcc -o app main.c\t# done")
    screen.editor.handleInput("\t")
    screen.editor.setText("back\tin the draft")
    assert.strictEqual(await submitted(screen), "back\tin the draft")
  })
})
