import { ToolCallId } from "@alisio/domain/Ids"
import { assert, describe, it } from "@effect/vitest"
import { makeProgress, makeStatusLine, SHOW_AFTER_MS } from "../src/Progress.js"
import { eventsOfOneRun } from "./support/events.js"

const call = (id: string, name: string) => ({
  toolCallId: ToolCallId.make(id),
  name,
  arguments: "{}",
  effect: "read" as const
})
const done = (id: string, name: string) => ({
  toolCallId: ToolCallId.make(id),
  name,
  status: "completed" as const,
  result: "ok",
  durationMs: 5
})

/** The line without its spinner frame. */
const shown = (line: string | undefined) => line?.slice(2)

describe("Progress", () => {
  it("EV-1 waits for the model with elapsed time, shows running tools, and nothing while the answer streams", () => {
    const event = eventsOfOneRun()
    const progress = makeProgress({ showAnswering: false })
    progress.observe(event("run_started", { provider: "openai", model: "gpt-4o", readOnly: false }), 0)
    assert.isUndefined(progress.line(SHOW_AFTER_MS - 1), "a short wait shows nothing")
    assert.strictEqual(shown(progress.line(500)), "waiting for openai/gpt-4o")
    assert.strictEqual(shown(progress.line(2_300)), "waiting for openai/gpt-4o · 2s")
    assert.strictEqual(shown(progress.line(125_000)), "waiting for openai/gpt-4o · 2m5s")

    progress.observe(event("reasoning_delta", { text: "hm" }), 130_000)
    assert.strictEqual(shown(progress.line(131_500)), "openai/gpt-4o is thinking · 1s")
    progress.observe(event("text_delta", { text: "Let me look." }), 132_000)
    assert.isUndefined(progress.line(140_000), "the answer itself shows that something happens")
    progress.observe(event("turn_completed", { turn: 1, durationMs: 10, finishReason: "tool_calls" }), 140_000)

    progress.observe(event("tool_call_started", call("c1", "bash")), 140_000)
    assert.strictEqual(shown(progress.line(143_000)), "running bash · 3s")
    progress.observe(event("tool_call_started", call("c2", "grep")), 141_000)
    assert.strictEqual(shown(progress.line(143_000)), "running 2 tools (bash, grep) · 3s")
    progress.observe(event("tool_call_completed", done("c1", "bash")), 144_000)
    assert.strictEqual(shown(progress.line(145_000)), "running grep · 5s")
    progress.observe(event("tool_call_completed", done("c2", "grep")), 146_000)
    assert.strictEqual(shown(progress.line(147_000)), "waiting for openai/gpt-4o · 1s", "the results went back")

    progress.observe(
      event("request_retry", { attempt: 1, of: 2, reason: "rate_limited", status: 429, afterMs: 500 }),
      150_000
    )
    assert.strictEqual(shown(progress.line(150_400)), "waiting for openai/gpt-4o", "a retry starts the wait again")
    progress.observe(
      event("run_completed", { text: "", turns: 2, usage: { inputTokens: 1, outputTokens: 1 } }),
      151_000
    )
    assert.isUndefined(progress.line(160_000))
  })

  it("EV-1 says the answer is coming when it streams where the person does not see it", () => {
    const event = eventsOfOneRun()
    const progress = makeProgress({ showAnswering: true })
    progress.observe(event("text_delta", { text: "x" }), 0)
    assert.strictEqual(shown(progress.line(1_200)), "receiving the answer · 1s")
  })

  it("the status line rewrites itself in place, blanks what it leaves, and is cut to the terminal", () => {
    let written = ""
    const stream = {
      isTTY: true,
      columns: 20,
      write: (text: string) => {
        written += text
        return true
      }
    } as unknown as NodeJS.WriteStream
    const status = makeStatusLine(stream)
    status.show("abc def")
    status.show("abc def")
    status.show("abc")
    status.show("x".repeat(40))
    status.clear()
    status.clear()
    assert.deepStrictEqual(written.split("\r"), [
      "",
      "abc def",
      "abc    ",
      "abc",
      `${"x".repeat(18)}…`,
      " ".repeat(19),
      ""
    ])
    assert.notInclude(written, "\x1b", "no escape sequences")
  })
})
