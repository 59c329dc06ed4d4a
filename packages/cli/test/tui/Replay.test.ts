// A session shown again pairs each tool call with its own result, even when the provider gave the
// calls of different turns the same id (UI-1, TL-4).
import type { Message } from "@alisio/domain/Message"
import { assert, describe, it } from "@effect/vitest"
import { conversation } from "../../src/Conversation.js"
import { toolResults } from "../../src/ToolResults.js"
import { RunView } from "../../src/tui/RunView.js"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { settle, VirtualTerminal } from "./VirtualTerminal.js"

const call = (command: string): Message =>
  ({
    role: "assistant",
    content: [{ _tag: "tool_call", id: "call_0", name: "bash", arguments: JSON.stringify({ command }) }]
  }) as unknown as Message

const result = (text: string): Message =>
  ({
    role: "tool",
    toolCallId: "call_0",
    toolName: "bash",
    content: [{ _tag: "text", text }],
    isError: false
  }) as unknown as Message

const user = (text: string): Message => ({ role: "user", content: [{ _tag: "text", text }] }) as Message

const messages: ReadonlyArray<Message> = [
  user("one"),
  call("echo first"),
  result("first output"),
  user("two"),
  call("echo second"),
  result("second output"),
  user("three"),
  call("echo third")
]

describe("TUI replay", () => {
  it("UI-1 TL-4 calls of different turns with the same id each show their own result; one without a result shows none", async () => {
    const resultOf = toolResults(messages)
    assert.deepStrictEqual(
      [1, 4, 7].map((at) => JSON.stringify(resultOf(at, "call_0")?.content)),
      [
        JSON.stringify([{ _tag: "text", text: "first output" }]),
        JSON.stringify([{ _tag: "text", text: "second output" }]),
        undefined
      ]
    )

    const terminal = new VirtualTerminal(80, 40)
    const screen = new Screen(terminal, makeTheme({ color: false }))
    screen.tui.start()
    try {
      new RunView(screen, () => 0).replay(messages.map((message) => ({ message, runId: undefined })))
      await settle()
      const lines = (await terminal.all()).map((line) => line.trimEnd())
      const at = (text: string) => lines.findIndex((line) => line.includes(text))
      assert.strictEqual(at("first output"), at("bash echo first") + 1, lines.join("\n"))
      assert.strictEqual(at("second output"), at("bash echo second") + 1, lines.join("\n"))
      assert.match(lines[at("bash echo third")]!, /cancelled$/)
    } finally {
      screen.tui.stop()
    }

    const shown = conversation(
      messages.map((message, position) => ({ message, position, runId: undefined }) as never),
      []
    ).flatMap((section) => section.entries)
    assert.deepStrictEqual(
      shown.flatMap((entry) => (entry.kind === "tool" ? [[entry.args, entry.result]] : [])),
      [
        ["echo first", "first output"],
        ["echo second", "second output"],
        ["echo third", "(no result stored)"]
      ]
    )
  })
})
