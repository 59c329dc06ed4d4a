// pi-tui's editor turns tabs into four spaces; a pasted Makefile must still reach the model with
// its tabs (UI-1).
import { assert, describe, it } from "@effect/vitest"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { VirtualTerminal } from "./VirtualTerminal.js"

const submitted = (screen: Screen) =>
  new Promise<string>((resolve) => {
    screen.editor.onSubmit = (text) => resolve(screen.editor.restoreTabs(text))
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

  it("UI-1 a figure space or a private-use character typed or pasted stays itself; the pasted tabs around it are still tabs", async () => {
    const screen = new Screen(new VirtualTerminal(60, 12), makeTheme({ color: false }))
    screen.editor.handleInput("\x1b[200~a\tb\x1b[201~")
    screen.editor.handleInput("\u2007x\ue000y")
    screen.editor.handleInput("\x1b[200~\tc\u2007d\ue000\ue001e\x1b[201~")
    screen.editor.handleInput("\ue002")
    const rows = screen.editor.render(60).join("\n")
    assert.match(rows, /a {4}b\u2007x\ue000y {4}c\u2007d\ue000\ue001e\ue002/)
    assert.strictEqual(await submitted(screen), "a\tb\u2007x\ue000y\tc\u2007d\ue000\ue001e\ue002")
    screen.editor.setText("one\ttwo \u2007 three")
    screen.editor.addToHistory("four\tfive")
    screen.editor.handleInput("\ue003")
    assert.strictEqual(await submitted(screen), "one\ttwo \u2007 three\ue003")
    screen.editor.handleInput("\x1b[A")
    assert.strictEqual(await submitted(screen), "four\tfive")
  })
})
