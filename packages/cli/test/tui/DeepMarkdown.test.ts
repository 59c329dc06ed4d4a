// An answer nested deeper than pi-tui's Markdown can lay out (its recursion overflows the stack)
// shows as text; the interface stays up (UI-1).
import { assert, describe, it } from "@effect/vitest"
import { PlanDialog } from "../../src/tui/Dialogs.js"
import { visibleWidth } from "../../src/tui/PiTuiCore.js"
import { SafeMarkdown } from "../../src/tui/SafeMarkdown.js"
import { Screen } from "../../src/tui/Screen.js"
import { StreamingMarkdown } from "../../src/tui/StreamingMarkdown.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { settle, VirtualTerminal } from "./VirtualTerminal.js"

const plain = makeTheme({ color: false })
const deep = `${">".repeat(3000)} deep quote\n\n${"- ".repeat(3000)}deep item\n\nafter it\n\n${">".repeat(2000)} quoted again`

describe("TUI deeply nested Markdown", () => {
  it("UI-1 an answer of three thousand nested quotes or list items, streamed, stored or in a plan, renders as text within the width", () => {
    const streamed = new StreamingMarkdown(plain.markdown)
    for (let i = 0; i < deep.length; i += 500) {
      streamed.append(deep.slice(i, i + 500))
      streamed.render(80)
    }
    streamed.finish()
    const rows = [
      ...streamed.render(80),
      ...new SafeMarkdown(deep, 0, 0, plain.markdown).render(80),
      ...new PlanDialog(plain, deep, () => {}).render(80)
    ]
    assert.isTrue(rows.every((row) => visibleWidth(row) <= 80))
    const text = rows.join("\n")
    assert.include(text, "deep quote")
    assert.include(text, "after it")
    assert.include(text, "quoted again")
  })
})

describe("TUI leaving after a block failed to draw", () => {
  it("UI-1 a block whose drawing throws does not stop the screen from being left: the cursor is shown and the terminal's modes are undone", async () => {
    const terminal = new VirtualTerminal(60, 12)
    const screen = new Screen(terminal, plain)
    screen.tui.start()
    let broken = false
    screen.add({
      invalidate: () => {},
      render: () => {
        if (broken) throw new RangeError("Maximum call stack size exceeded")
        return ["a block"]
      }
    })
    await settle()
    broken = true
    assert.doesNotThrow(() => screen.leave())
    screen.tui.stop()
    await settle()
    assert.isAbove(terminal.written.lastIndexOf("\x1b[?25h"), terminal.written.lastIndexOf("\x1b[?25l"))
  })
})
