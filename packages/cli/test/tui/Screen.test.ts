// The screen as a person sees it, on pi-tui's virtual terminal: the editor's keys, the status line
// through a run's events, reasoning, streaming without a full redraw, plugins' panels.
import { ToolCallId } from "@alisio/domain/Ids"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { PluginUi } from "@alisio/runtime/PluginUi"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { PluginSink, pluginUiLayer } from "../../src/tui/Panels.js"
import { RunView } from "../../src/tui/RunView.js"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { settle, VirtualTerminal } from "./VirtualTerminal.js"

const plain = makeTheme({ color: false })

const event = <T extends KnownRunEvent["type"]>(type: T, data: Extract<KnownRunEvent, { type: T }>["data"]) =>
  ({ type, data, schemaVersion: 1, runId: "r", seq: 0, sessionId: "s", time: "" }) as unknown as KnownRunEvent

/** A started screen on a virtual terminal, stopped when `body` ends. */
const onScreen = async (
  size: { readonly columns: number; readonly rows: number },
  body: (screen: Screen, terminal: VirtualTerminal) => Promise<void>,
  theme = plain
) => {
  const terminal = new VirtualTerminal(size.columns, size.rows)
  const screen = new Screen(terminal, theme)
  screen.tui.start()
  try {
    await body(screen, terminal)
  } finally {
    screen.tui.stop()
  }
}

const shown = async (terminal: VirtualTerminal) => {
  await settle()
  return (await terminal.all()).join("\n")
}

describe("TUI screen", () => {
  it("UI-1 the editor: a large paste is a marker and goes out whole; \\ or Shift+Enter makes a new line; ↑ brings back history", async () => {
    await onScreen({ columns: 60, rows: 20 }, async (screen, terminal) => {
      const sent: Array<string> = []
      screen.editor.onSubmit = (text) => sent.push(text)
      const pasted = Array.from({ length: 40 }, (_, i) => `log line ${i + 1}`).join("\n")
      terminal.send("look at ")
      terminal.send(`\x1b[200~${pasted}\x1b[201~`)
      const collapsed = await shown(terminal)
      assert.include(collapsed, "look at [paste #1 +40 lines]")
      assert.notInclude(collapsed, "log line 2", "the pasted lines stay out of the editor")
      terminal.send("\r")
      assert.deepStrictEqual(sent, [`look at ${pasted}`])

      for (const key of "first\\") terminal.send(key)
      terminal.send("\r")
      terminal.send("second")
      terminal.send("\x1b[13;2~") // Shift+Enter, as terminals without the kitty protocol send it
      terminal.send("third")
      assert.strictEqual(screen.editor.getText(), "first\nsecond\nthird")
      terminal.send("\r")
      assert.strictEqual(sent[1], "first\nsecond\nthird")

      screen.editor.addToHistory("an earlier message")
      terminal.send("\x1b[A")
      assert.strictEqual(screen.editor.getText(), "an earlier message")
    })
  })

  it("UI-1 LIM-1 the status line: model, session, a spinner with the seconds to the first token, turns, tokens, context left, active time, a paused clock, a retry", async () => {
    await onScreen({ columns: 140, rows: 20 }, async (screen, terminal) => {
      let now = 10_000
      const view = new RunView(screen, () => now)
      screen.status.update((s) => {
        s.model = "openai/gpt-test"
        s.session = "1a2b3c4d"
        s.contextWindow = 10_000
      })
      view.apply(event("run_started", { provider: "openai", model: "gpt-test", readOnly: false }))
      now = 13_500
      screen.status.tick(now)
      const waiting = await shown(terminal)
      assert.match(waiting, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] waiting for the first token 3s/)
      assert.include(waiting, "openai/gpt-test")
      assert.include(waiting, "session 1a2b3c4d")

      view.apply(event("request_retry", { attempt: 1, of: 3, reason: "rate_limited", status: 429, afterMs: 2000 }))
      const retried = await shown(terminal)
      assert.include(retried, "↻ rate limited (HTTP 429); retrying in 2s (1/3)", "a notice in the conversation")
      assert.isAtLeast(retried.split("rate limited (HTTP 429)").length - 1, 2, "and on the status line")

      view.apply(event("text_delta", { text: "Hello" }))
      view.apply(
        event("turn_completed", {
          turn: 1,
          durationMs: 900,
          usage: { inputTokens: 7_500, outputTokens: 300 },
          finishReason: "stop"
        })
      )
      screen.status.update((s) => {
        s.activeMs = 4_000
      })
      const counted = await shown(terminal)
      assert.include(counted, "1 turn")
      assert.include(counted, "7.5k↑ 300↓")
      assert.include(counted, "22% context left")
      assert.include(counted, "4s active")
      assert.notInclude(
        screen.status.render(140)[0] ?? "",
        "retrying",
        "the retry notice leaves the status line once tokens flow"
      )

      screen.status.update((s) => {
        s.waits = 1
      })
      assert.include(await shown(terminal), "waiting for you · clock paused")

      screen.status.update((s) => {
        s.waits = 0
      })
      view.apply(event("run_completed", { text: "Hello", turns: 1, usage: { inputTokens: 7_500, outputTokens: 300 } }))
      const idle = await shown(terminal)
      assert.notInclude(idle, "waiting for the first token")
      assert.include(idle, "ctrl-d exit")
    })
  })

  it("UI-1 LIM-1 a tool's seconds on the status line count its running time, not the wait for the person's approval", async () => {
    await onScreen({ columns: 120, rows: 20 }, async (screen, terminal) => {
      let now = 10_000
      const view = new RunView(screen, () => now)
      const tick = (to: number) => {
        for (; now < to; ) {
          now += 100
          screen.status.tick(now)
        }
      }
      screen.status.tick(now)
      view.apply(event("run_started", { provider: "openai", model: "gpt-test", readOnly: false }))
      const toolCallId = ToolCallId.make("c1")
      view.apply(
        event("tool_call_started", { toolCallId, name: "bash", arguments: '{"command":"make"}', effect: "external" })
      )
      view.apply(
        event("approval_requested", { approvalId: "a1", kind: "tool", toolCallId, tool: "bash", summary: "make" })
      )
      screen.status.update((s) => {
        s.waits = 1
      })
      tick(19_000)
      assert.include(await shown(terminal), "waiting for you · clock paused")
      view.apply(event("approval_resolved", { approvalId: "a1", approved: true, by: "person" }))
      screen.status.update((s) => {
        s.waits = 0
      })
      tick(21_000)
      const running = screen.status.render(120)[0] ?? ""
      assert.match(running, / bash 2s/, "9 s waiting for approval, then 2 s running")
      assert.notInclude(running, "bash 11s")
    })
  })

  it("UI-1 CTX-1 a compaction shows on the status line while it runs, then as a notice; the context left follows it", async () => {
    await onScreen({ columns: 120, rows: 20 }, async (screen, terminal) => {
      const view = new RunView(screen, () => 5_000)
      view.apply(event("run_started", { provider: "p", model: "m", readOnly: false }))
      view.apply(
        event("compaction_started", {
          reason: "threshold",
          tokens: 90_000,
          contextWindow: 100_000,
          source: "model",
          threshold: 80_000
        })
      )
      assert.include(await shown(terminal), "compacting the history 0s")
      view.apply(
        event("compaction_completed", {
          tokensBefore: 90_000,
          tokensAfter: 12_000,
          messagesCompacted: 40,
          newlyCompacted: 40,
          durationMs: 800
        })
      )
      const after = await shown(terminal)
      assert.include(after, "compacted the history: 40 older messages summarised, about 90k → 12k tokens")
      assert.include(after, "88% context left")
      assert.notInclude(after, "compacting the history 0s")
      view.apply(event("compaction_failed", { error: "the summary request failed", continued: true }))
      assert.include(
        await shown(terminal),
        "Could not compact the history (the summary request failed); going on with it as it is."
      )
    })
  })

  it("UI-1 an answer the content filter stopped, and a run with no final answer, are said in the conversation", async () => {
    await onScreen({ columns: 100, rows: 20 }, async (screen, terminal) => {
      const view = new RunView(screen, () => 0)
      const usage = { inputTokens: 1, outputTokens: 1 }
      view.apply(event("run_started", { provider: "p", model: "m", readOnly: false }))
      view.apply(event("text_delta", { text: "I can" }))
      view.apply(event("turn_completed", { turn: 1, durationMs: 5, finishReason: "content_filter" }))
      view.apply(event("run_completed", { text: "I can", turns: 1, usage }))
      const filtered = await shown(terminal)
      assert.include(filtered, "The provider's content filter stopped the answer.")
      assert.notInclude(filtered, "no final answer")

      view.apply(event("run_started", { provider: "p", model: "m", readOnly: false }))
      view.apply(event("turn_completed", { turn: 1, durationMs: 5, finishReason: "stop" }))
      view.apply(event("run_completed", { text: " ", turns: 1, usage }))
      assert.include(await shown(terminal), "The model gave no final answer.")
    })
  })

  it("UI-1 CLI-2 a session shown again ends each run that did not complete with the line it ended with", async () => {
    await onScreen({ columns: 100, rows: 30 }, async (screen, terminal) => {
      const view = new RunView(screen, () => 0)
      const user = (text: string, runId: string) => ({
        runId,
        message: { role: "user" as const, content: [{ _tag: "text" as const, text }] }
      })
      const answer = (text: string, runId: string) => ({
        runId,
        message: { role: "assistant" as const, content: [{ _tag: "text" as const, text }] }
      })
      view.replay(
        [
          user("first", "r1"),
          answer("Half of the first", "r1"),
          user("second", "r2"),
          answer("All of the second", "r2"),
          user("third", "r3"),
          user("fourth", "r4"),
          user("fifth", "r5")
        ],
        [
          { id: "r1", status: "cancelled" },
          { id: "r2", status: "completed" },
          { id: "r3", status: "failed", error: "The model m sent nothing within 2m." },
          { id: "r4", status: "interrupted", error: "The process running it (pid 7) ended before the run finished." },
          { id: "r5", status: "turns_exceeded", error: "The run reached its limit of 3 turns." }
        ]
      )
      const screenText = await shown(terminal)
      const order = [
        "Half of the first",
        "Cancelled.",
        "second",
        "All of the second",
        "third",
        "The run failed: The model m sent nothing within 2m.",
        "fourth",
        "Interrupted: The process running it (pid 7) ended before the run finished.",
        "fifth",
        "The run reached its limit of 3 turns."
      ].map((text) => screenText.indexOf(text))
      assert.notInclude(order, -1, screenText)
      assert.deepStrictEqual(
        order,
        [...order].sort((a, b) => a - b),
        screenText
      )
      const lines = screenText.split("\n")
      assert.strictEqual(lines.filter((line) => line.includes("Cancelled.")).length, 1, "a completed run adds no line")
    })
  })

  it("UI-1 reasoning is dimmed, shows its last lines while it streams, then folds to one line; Ctrl-O opens it", async () => {
    const coloured = makeTheme({ color: true })
    await onScreen(
      { columns: 60, rows: 30 },
      async (screen, terminal) => {
        const view = new RunView(screen, () => 0)
        view.apply(event("run_started", { provider: "p", model: "m", readOnly: false }))
        for (const line of ["step one", "step two", "step three", "step four"])
          view.apply(event("reasoning_delta", { text: `${line}\n` }))
        await shown(terminal)
        const thinking = (await terminal.screen()).join("\n")
        assert.include(thinking, "Thinking…")
        assert.include(thinking, "step four")
        assert.notInclude(thinking, "step one", "only the last lines while it streams")
        assert.include(terminal.written, "\x1b[2mstep four\x1b[22m", "reasoning is dim")
        view.apply(event("text_delta", { text: "The answer." }))
        await settle()
        const folded = (await terminal.screen()).join("\n")
        assert.include(folded, "▸ Thought (4 lines; Ctrl-O shows it)")
        assert.notInclude(folded, "step four")
        view.toggleExpanded()
        await settle()
        const open = (await terminal.screen()).join("\n")
        assert.include(open, "▾ Thought (4 lines)")
        for (const line of ["step one", "step two", "step three", "step four"]) assert.include(open, line)
      },
      coloured
    )
  })

  it("UI-1 no flicker: a streamed answer is drawn by differential frames inside synchronized output, never a full redraw", async () => {
    await onScreen({ columns: 80, rows: 24 }, async (screen, terminal) => {
      const view = new RunView(screen, () => 0)
      screen.notice("an earlier block")
      await settle()
      const redraws = screen.tui.fullRedraws
      const before = terminal.written.length
      view.apply(event("run_started", { provider: "p", model: "m", readOnly: false }))
      const text =
        "A paragraph of the answer, then a list:\n\n- one\n- two\n\n```ts\nconst x = 1\n```\n\nDone. ".repeat(20)
      for (let i = 0; i < text.length; i += 7) {
        view.apply(event("text_delta", { text: text.slice(i, i + 7) }))
        if (i % 140 === 0) screen.tui.renderNow()
      }
      await settle()
      assert.strictEqual(screen.tui.fullRedraws, redraws, "no full redraw while the answer streams")
      const streamed = terminal.written.slice(before)
      assert.notInclude(streamed, "\x1b[2J", "the screen is never cleared")
      assert.notInclude(streamed, "\x1b[3J", "the scrollback is never cleared")
      const frames = streamed.split("\x1b[?2026h").slice(1)
      assert.isAbove(frames.length, 10)
      for (const frame of frames) assert.include(frame, "\x1b[?2026l", "each frame ends its synchronized update")
    })
  })

  it("UI-1 CH-4 plugins' panels are drawn under the conversation, side by side when wide, one under the other at 40 columns", async () => {
    for (const columns of [120, 40]) {
      // Published before the screen is up: the sink keeps them until it is.
      const sink = new PluginSink()
      const publish = Effect.gen(function* () {
        const ui = yield* PluginUi
        yield* ui.panel({ pluginId: "agents", id: "tree", lines: ["root", "├ child a", "└ child b"] })
        yield* ui.panel({ pluginId: "todo", id: "list", lines: ["[x] read", "[ ] fix"] })
        yield* ui.notify({ pluginId: "todo", level: "info", message: "2 items" })
      }).pipe(Effect.provide(pluginUiLayer(sink)))
      await Effect.runPromise(publish)
      await onScreen({ columns, rows: 20 }, async (screen, terminal) => {
        sink.attach({
          notice: (text, level) => screen.notice(text, level),
          panel: (panel) => screen.panels.set(panel)
        })
        const lines = (await shown(terminal)).split("\n")
        const tree = lines.findIndex((line) => line.includes("tree (agents)"))
        const list = lines.findIndex((line) => line.includes("list (todo)"))
        assert.isAtLeast(tree, 0)
        assert.isAtLeast(list, 0)
        if (columns === 120) assert.strictEqual(tree, list, "side by side")
        else assert.isAbove(list, tree + 3, "one under the other")
        assert.isTrue(lines.some((line) => line.includes("└ child b")))
        assert.isTrue(lines.some((line) => line.includes("[todo] 2 items")))
        for (const line of lines) assert.isAtMost(line.length, columns)
      })
    }
  })
})
