// A tool's name comes from the model (or an MCP server), a bash command's first word too: what the
// tool card, the status line and the approval dialog draw of them reaches the terminal cleaned (UI-1).
import { ToolCallId } from "@alisio/domain/Ids"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import { ApprovalDialog, PickerDialog } from "../../src/tui/Dialogs.js"
import { RunView } from "../../src/tui/RunView.js"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { settle, VirtualTerminal } from "./VirtualTerminal.js"

const event = <T extends KnownRunEvent["type"]>(type: T, data: Extract<KnownRunEvent, { type: T }>["data"]) =>
  ({ type, data, schemaVersion: 1, runId: "r", seq: 0, sessionId: "s", time: "" }) as unknown as KnownRunEvent

const hostile = "evil\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009b2J\u009d0;c1\u009c\nsecond"

describe("TUI hostile names", () => {
  it("UI-1 a tool name and an approval title with escape sequences, C1 controls and a line break reach the terminal as plain text on one row", async () => {
    const terminal = new VirtualTerminal(120, 20)
    const screen = new Screen(terminal, makeTheme({ color: false }))
    screen.tui.start()
    try {
      const view = new RunView(screen, () => 0)
      view.apply(event("run_started", { provider: "openai", model: "gpt-test", readOnly: false }))
      view.apply(
        event("tool_call_started", {
          toolCallId: ToolCallId.make("c1"),
          name: hostile,
          arguments: '{"command":"ls"}',
          effect: "external"
        })
      )
      await settle()
      screen.showDialog(
        new ApprovalDialog(
          screen.theme,
          `Allow ${hostile} (external)?`,
          "ls",
          { key: "bash:x", label: `\`${hostile}\` commands` },
          () => {}
        )
      )
      await settle()
      const written = terminal.written
      assert.notInclude(written, "\x1b]0;")
      assert.notInclude(written, "\x1b]52")
      assert.notInclude(written, "\x1b[2J")
      assert.notMatch(written, /[\u0080-\u009f]/)
      const rows = (await terminal.all()).join("\n")
      assert.include(rows, "evil second")
      assert.include(rows, "Allow evil second (external)?")
      assert.include(rows, "Yes, and allow `evil second` commands for this session")
    } finally {
      screen.tui.stop()
    }
  })

  it("UI-1 a session picked from /resume whose title or first prompt holds escape sequences is listed as plain text", async () => {
    const terminal = new VirtualTerminal(120, 20)
    const screen = new Screen(terminal, makeTheme({ color: false }))
    screen.tui.start()
    try {
      screen.showDialog(
        new PickerDialog(
          screen.theme,
          "Resume a session",
          [
            { label: `1a2b3c4d  ${hostile}`, detail: `2m ago\x1b]0;pwned\x07` },
            { label: "5e6f7a8b  plain", detail: "1h ago" }
          ],
          () => {}
        )
      )
      await settle()
      assert.notInclude(terminal.written, "\x1b]0;")
      assert.notInclude(terminal.written, "\x1b[2J")
      assert.notMatch(terminal.written, /[\u0080-\u009f]/)
      assert.include((await terminal.all()).join("\n"), "1a2b3c4d  evil second  2m ago")
    } finally {
      screen.tui.stop()
    }
  })
})
