// A tool call whose name or arguments run to a megabyte (a hostile or broken model): its card, the
// status line and the approval draw at once; pi-tui measures such a line in minutes (UI-1).
import { ToolCallId } from "@alisio/domain/Ids"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import { ApprovalDialog, PickerDialog } from "../../src/tui/Dialogs.js"
import { visibleWidth } from "../../src/tui/PiTuiCore.js"
import { RunView } from "../../src/tui/RunView.js"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { settle, VirtualTerminal } from "./VirtualTerminal.js"

const event = <T extends KnownRunEvent["type"]>(type: T, data: Extract<KnownRunEvent, { type: T }>["data"]) =>
  ({ type, data, schemaVersion: 1, runId: "r", seq: 0, sessionId: "s", time: "" }) as unknown as KnownRunEvent

describe("TUI tool calls a megabyte long", () => {
  it("UI-1 a bash call of a 1 MB command and a tool of a 1 MB name show their card, status line and dialogs within a second", async () => {
    const terminal = new VirtualTerminal(100, 20)
    const screen = new Screen(terminal, makeTheme({ color: false }))
    screen.tui.start()
    try {
      const huge = "z".repeat(1_000_000)
      const started = performance.now()
      const view = new RunView(screen, () => 0)
      view.apply(event("run_started", { provider: "openai", model: "gpt-test", readOnly: false }))
      view.apply(
        event("tool_call_started", {
          toolCallId: ToolCallId.make("c1"),
          name: "bash",
          arguments: JSON.stringify({ command: `echo ${huge} | wc -c` }),
          effect: "external"
        })
      )
      view.apply(
        event("tool_call_started", {
          toolCallId: ToolCallId.make("c2"),
          name: `tool${huge}`,
          arguments: "{}",
          effect: "external"
        })
      )
      await settle()
      screen.showDialog(new ApprovalDialog(screen.theme, `Allow ${huge}?`, `echo ${huge}`, undefined, () => {}))
      await settle()
      screen.showDialog(new PickerDialog(screen.theme, "Resume a session", [{ label: `1a2b  ${huge}` }], () => {}))
      await settle()
      assert.isBelow(performance.now() - started, 1_000)
      const rows = await terminal.all()
      assert.isTrue(rows.every((row) => visibleWidth(row) <= 100))
      assert.isTrue(rows.some((row) => row.includes("bash echo zzz")))
    } finally {
      screen.tui.stop()
    }
  }, 120_000)
})
