// The history step and the cut (CTX-1), as pure functions: what a request holds once older turns
// are compacted, and where compaction may cut.

import { ToolCallId } from "@alisio/domain/Ids"
import type { Message } from "@alisio/domain/Message"
import { assert, describe, it } from "@effect/vitest"
import { calibrate, estimateTokens } from "../src/internal/compaction/estimate.js"
import { budgetOf, type HistoryEntry, planCut, unitStarts } from "../src/internal/compaction/plan.js"
import { summaryRequest, transcriptChunks } from "../src/internal/compaction/summary.js"
import { summaryText, toRequestMessages } from "../src/internal/history.js"
import { assertCallsWithResults } from "./helpers/compaction.js"
import { said, user } from "./helpers/messages.js"

const calls = (...ids: ReadonlyArray<string>): Message => ({
  role: "assistant",
  content: [
    { _tag: "reasoning", text: "thinking" },
    ...ids.map((id) => ({ _tag: "tool_call" as const, id: ToolCallId.make(id), name: "echo", arguments: "{}" }))
  ]
})
const result = (id: string, text = "ok"): Message => ({
  role: "tool",
  toolCallId: ToolCallId.make(id),
  toolName: "echo",
  content: [{ _tag: "text", text }],
  isError: false
})
const entries = (...messages: ReadonlyArray<Message>): ReadonlyArray<HistoryEntry> =>
  messages.map((message, i) => ({ position: i + 1, message }))

describe("CTX-1 the history step", () => {
  const history = entries(
    user("first task"),
    calls("c1", "c2"),
    result("c1"),
    result("c2"),
    said("first done"),
    user("second task"),
    calls("c3"),
    result("c3"),
    said("second done")
  )

  it("CTX-1 without a compaction every stored message is sent, reasoning left out", () => {
    const sent = toRequestMessages(history)
    assert.strictEqual(sent.length, history.length)
    assert.isFalse(sent.some((m) => m.role === "assistant" && m.content.some((part) => part._tag === "reasoning")))
    // A message without reasoning is sent as the same object (its size is measured once).
    assert.strictEqual(sent[4], history[4]!.message)
  })

  it("CTX-1 the summary opens the first kept user message when the cut falls before a prompt", () => {
    const sent = toRequestMessages(history, {
      summary: "they did the first task",
      firstPosition: 1,
      lastPosition: 5,
      messagesCompacted: 5
    })
    assert.deepStrictEqual(
      sent.map((m) => m.role),
      ["user", "assistant", "tool", "assistant"]
    )
    const head = sent[0] as Extract<Message, { role: "user" }>
    assert.include((head.content[0] as { text: string }).text, "they did the first task")
    assert.include((head.content[0] as { text: string }).text, "The 5 earlier messages")
    // The prompt's own parts follow whole.
    assert.deepStrictEqual(head.content.at(-1), { _tag: "text", text: "second task" })
    assertCallsWithResults(sent)
  })

  it("CTX-1 the current run's prompt is sent whole after the summary when the summary covers it", () => {
    const long = entries(
      user("old"),
      said("old answer"),
      user("the current task, with an image"),
      calls("c1"),
      result("c1"),
      calls("c2"),
      result("c2")
    )
    const withImage = long.map((entry, i) =>
      i === 2
        ? {
            ...entry,
            message: {
              role: "user" as const,
              content: [
                { _tag: "text" as const, text: "the current task, with an image" },
                { _tag: "image" as const, mediaType: "image/png", data: "aGk=" }
              ]
            }
          }
        : entry
    )
    const sent = toRequestMessages(withImage, {
      summary: "S",
      firstPosition: 1,
      lastPosition: 5,
      messagesCompacted: 5
    })
    assert.deepStrictEqual(
      sent.map((m) => m.role),
      ["user", "assistant", "tool"]
    )
    const head = sent[0] as Extract<Message, { role: "user" }>
    assert.strictEqual(head.content[0]?._tag, "text")
    assert.include(
      (head.content[0] as { text: string }).text,
      summaryText({
        summary: "S",
        firstPosition: 1,
        lastPosition: 5,
        messagesCompacted: 5
      })
    )
    assert.deepStrictEqual(head.content.slice(-2), withImage[2]!.message.content)
    assertCallsWithResults(sent)
  })

  it("CTX-1 units start at prompts and at assistant messages, never at a tool result", () => {
    assert.deepStrictEqual(unitStarts(history, 0), [0, 1, 4, 5, 6, 8])
    // Each candidate cut is a unit start: what is kept never begins with a result.
    for (let keep = 0; keep < 40; keep++) {
      const cut = planCut(history, 0, keep, () => 1)
      if (cut === undefined) continue
      assert.notStrictEqual(history[cut]?.message.role, "tool")
      assertCallsWithResults(history.slice(cut).map((e) => e.message))
    }
  })

  it("CTX-1 the cut keeps the most recent units within the keep budget, and at least summarises one unit", () => {
    // One token a message: keeping 3 keeps the last three units (c3's call and result, then the answer).
    assert.strictEqual(
      planCut(history, 0, 3, () => 1),
      6
    )
    // Everything fits: all but the last unit are summarised.
    assert.strictEqual(
      planCut(history, 0, 1_000, () => 1),
      8
    )
    // Nothing left after the last summary, or a single unit: nothing to compact.
    assert.isUndefined(planCut(history, 9, 10, () => 1))
    assert.isUndefined(planCut(history, 8, 10, () => 1))
    // A last unit larger than the budget is summarised too.
    assert.strictEqual(
      planCut(history, 0, 0, () => 1),
      9
    )
  })

  it("CTX-1 the budget reserves the output budget, at most half the window, and sets the threshold and the kept share", () => {
    const big = budgetOf({ tokens: 128_000, source: "default" }, 16_384)
    assert.deepStrictEqual(
      { room: big.room, threshold: big.threshold, keep: big.keep, summary: big.summaryTokens },
      { room: 111_616, threshold: 89_292, keep: 44_646, summary: 8_192 }
    )
    const small = budgetOf({ tokens: 4_000, source: "user" }, 16_384)
    assert.deepStrictEqual([small.room, small.summaryTokens], [2_000, 400])
    assert.strictEqual(budgetOf({ tokens: 4_000, source: "user" }, 16_384, 900).room, 900)
  })

  it("CTX-1 the summary request is a transcript: calls and results as text, long parts shortened, chunks that fit", () => {
    const big = entries(user("task"), calls("c1"), result("c1", "x".repeat(50_000)), said("done"))
    const chunks = transcriptChunks(big, 40_000, 2_000)
    assert.strictEqual(chunks.length, 1)
    assert.include(chunks[0]!, "[calls echo {}]")
    assert.include(chunks[0]!, "characters left out")
    assert.isBelow(chunks[0]!.length, 40_000)
    const many = entries(...Array.from({ length: 40 }, (_, i) => said(`${i} ${"y".repeat(1_000)}`)))
    const split = transcriptChunks(many, 8_000, 1_000)
    assert.isAbove(split.length, 1)
    for (const chunk of split) assert.isAtMost(chunk.length, 8_000)
    const request = summaryRequest({
      model: "m",
      previous: "before",
      transcript: chunks[0]!,
      instructions: { focus: "the parser", fromPlugins: ["Keep the ticket numbers."] },
      maxOutputTokens: 500
    })
    assert.deepStrictEqual(request.tools, [])
    assert.strictEqual(request.maxOutputTokens, 500)
    const text = (request.messages[0]!.content as ReadonlyArray<{ text: string }>)[0]!.text
    assert.include(text, "before")
    assert.include(text, "focus on: the parser")
    assert.include(text, "Keep the ticket numbers.")
  })

  it("CTX-1 the estimate is characters / 4 until a provider reports prompt tokens; an implausible report is ignored", () => {
    const calibration = { ratio: undefined as number | undefined }
    assert.strictEqual(estimateTokens(4_000, calibration), 1_000)
    calibrate(calibration, 4_000, 1_300)
    assert.strictEqual(estimateTokens(4_000, calibration), 1_300)
    assert.strictEqual(estimateTokens(8_000, calibration), 2_600)
    // A server that always reports 12 prompt tokens, or far too many, teaches nothing.
    calibrate(calibration, 40_000, 12)
    calibrate(calibration, 400, 5_000)
    assert.strictEqual(estimateTokens(4_000, calibration), 1_300)
  })
})
