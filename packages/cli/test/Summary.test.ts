import { ToolCallId } from "@alisio/domain/Ids"
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { encodeRunResult, makeOutcome, RunResult, summaryLine } from "../src/Summary.js"
import { paint } from "../src/Terminal.js"
import { eventsOfOneRun, runId, sessionId } from "./support/events.js"

const plain = paint({ isTTY: false } as NodeJS.WriteStream)
const usage = { inputTokens: 1_200, outputTokens: 34 }

describe("Summary", () => {
  it("EV-1 a completed run's outcome: the answer, turns, usage, the last finish reason and durations from its events", () => {
    const event = eventsOfOneRun()
    const outcome = makeOutcome()
    for (const e of [
      event("run_started", { provider: "openai", model: "m", readOnly: false }, 0),
      event("turn_completed", { turn: 1, durationMs: 800, usage, finishReason: "tool_calls" }, 800),
      event(
        "tool_call_completed",
        { toolCallId: ToolCallId.make("c1"), name: "bash", status: "completed", result: "", durationMs: 300 },
        1_100
      ),
      event("turn_completed", { turn: 2, durationMs: 400, usage, finishReason: "stop" }, 1_500),
      event("run_completed", { text: "All done.", turns: 2, usage: { inputTokens: 2_400, outputTokens: 68 } }, 1_500)
    ]) {
      outcome.observe(e)
    }
    const result = outcome.result()!
    assert.deepStrictEqual(result, {
      schemaVersion: 1,
      status: "completed",
      sessionId,
      runId,
      text: "All done.",
      turns: 2,
      usage: { inputTokens: 2_400, outputTokens: 68 },
      finishReason: "stop",
      durationMs: 1_500,
      modelMs: 1_200,
      toolMs: 300
    })
    // What --json --final prints is the Schema's encoded form, and decodes back.
    const json = JSON.parse(JSON.stringify(encodeRunResult(result)))
    assert.deepStrictEqual(Schema.decodeUnknownSync(RunResult)(json), result)
    assert.strictEqual(
      summaryLine(result, plain),
      '✓ completed · 2 turns · 2,400 in / 68 out tokens · 1.5s · go on with alisio run -s 1a2b3c4d "…"'
    )
  })

  it("EV-1 a failed run keeps its error, its failure and the last text the model wrote", () => {
    const event = eventsOfOneRun()
    const outcome = makeOutcome()
    outcome.observe(event("run_started", { provider: "openai", model: "m", readOnly: false }))
    outcome.observe(
      event("message", { message: { role: "assistant", content: [{ _tag: "text", text: "Half an answer" }] } })
    )
    outcome.observe(event("turn_completed", { turn: 1, durationMs: 10, usage, finishReason: "tool_calls" }))
    const failed = { code: "provider_error", error: "The server failed (HTTP 500).", providerCode: "server" } as const
    outcome.observe(event("run_failed", failed, 2_000))
    const result = outcome.result()!
    assert.strictEqual(result.status, "failed")
    assert.strictEqual(result.text, "Half an answer")
    assert.strictEqual(result.error, failed.error)
    assert.deepStrictEqual(result.failure, failed)
    assert.deepStrictEqual(result.usage, usage)
    assert.strictEqual(result.turns, 1)
    assert.match(summaryLine(result, plain), /^✗ failed · 1 turn · 1,200 in \/ 34 out tokens · 2s · /)
  })

  it("EV-1 without a terminal event the status comes from the caller; without any event there is no outcome", () => {
    assert.isUndefined(makeOutcome().result("completed"))
    const outcome = makeOutcome()
    outcome.observe(eventsOfOneRun()("run_started", { provider: "openai", model: "m", readOnly: false }))
    assert.strictEqual(outcome.result("interrupted")?.status, "interrupted")
    assert.strictEqual(outcome.result()?.text, "", "no answer: empty text, as --output-last-message writes it")
  })

  it("ST-4 a run its process left behind (run_failed, code interrupted) is interrupted, as its row and exit code say", () => {
    const event = eventsOfOneRun()
    const outcome = makeOutcome()
    outcome.observe(event("run_started", { provider: "openai", model: "m", readOnly: false }))
    const ending = {
      code: "interrupted",
      error: "The process running it (pid 42) ended before the run finished."
    } as const
    outcome.observe(event("run_failed", ending, 1_000))
    const result = outcome.result()!
    assert.strictEqual(result.status, "interrupted")
    assert.strictEqual(result.error, ending.error)
    assert.deepStrictEqual(result.failure, ending)
  })
})
