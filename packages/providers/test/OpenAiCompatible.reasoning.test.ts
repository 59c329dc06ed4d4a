// Reasoning as servers send it: thinking parts, `reasoning`, <think> tags, Responses summaries

import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { chunk, done, expectComplete, modelFor, replayEverywhere, run, sse } from "./support/openAiCompatible.js"
import * as SseServer from "./support/SseServer.js"

describe("OpenAiCompatible reasoning", () => {
  it.scopedLive("PRV-2 reads content arrays with text and thinking parts (Magistral)", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({ role: "assistant", content: [{ type: "thinking", thinking: [{ type: "text", text: "Two and " }] }] }),
          chunk({ content: [{ type: "thinking", thinking: [{ type: "text", text: "two." }] }] }),
          chunk({
            content: [
              { type: "text", text: "It is " },
              { type: "text", text: "4." }
            ]
          }),
          chunk({ content: "" }, "stop"),
          done
        )
      )
      assert.strictEqual(got.reasoning, "Two and two.")
      assert.strictEqual(got.text, "It is 4.")
    })
  )

  it.scopedLive("PRV-2 reads `reasoning` (vLLM ≥0.11, Ollama) like `reasoning_content`", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({ role: "assistant", reasoning: "Think" }),
          chunk({ reasoning: "ing." }),
          chunk({ content: "Done." }),
          chunk({}, "stop"),
          done
        )
      )
      assert.strictEqual(got.reasoning, "Thinking.")
      assert.strictEqual(got.text, "Done.")
    })
  )

  it.scopedLive(
    "PRV-2 TL-6 an answer opening with 150 000 blank deltas is then read as text, with no reasoning",
    () =>
      Effect.gen(function* () {
        const blanks = sse(chunk({ content: " " })).repeat(150_000)
        const server = yield* SseServer.always({
          body: blanks + sse(chunk({ content: "hi" }), chunk({}, "stop"), done)
        })
        // Trimming all that was held on each delta took minutes here (the time limit of the test);
        // reading it once takes about 2 s on a slow machine.
        const got = expectComplete(yield* run(modelFor(server)))
        assert.strictEqual(got.text.trim(), "hi")
        assert.strictEqual(got.reasoning, "")
      }),
    60_000
  )

  it.scopedLive("PRV-2 a <think> block opening the content is reasoning, its tags whole even when split", () =>
    Effect.gen(function* () {
      const contents = (...deltas: ReadonlyArray<string>) => ({
        body: sse(...deltas.map((content) => chunk({ content })), chunk({}, "stop"), done)
      })
      const server = yield* SseServer.sequence(
        contents("\n<thi", "nk>\nLet me", " see.</th", "ink>\n\nThe answer", " is 4."),
        contents("<th", "ese are <b>not</b> tags"),
        contents("Answer: ", "<think>kept</think>"),
        contents("<think>never closed <"),
        {
          body: sse(
            chunk({ content: "<think>plan</think>\n" }),
            chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "ls", arguments: "{}" } }] }),
            chunk({}, "tool_calls"),
            done
          )
        }
      )
      const model = modelFor(server)
      const answer = (got: ReturnType<typeof expectComplete>) => ({ reasoning: got.reasoning, text: got.text })
      assert.deepStrictEqual(answer(expectComplete(yield* run(model))), {
        reasoning: "Let me see.",
        text: "The answer is 4."
      })
      assert.deepStrictEqual(answer(expectComplete(yield* run(model))), {
        reasoning: "",
        text: "<these are <b>not</b> tags"
      })
      assert.deepStrictEqual(answer(expectComplete(yield* run(model))), {
        reasoning: "",
        text: "Answer: <think>kept</think>"
      })
      assert.deepStrictEqual(answer(expectComplete(yield* run(model))), { reasoning: "never closed <", text: "" })
      const called = expectComplete(yield* run(model))
      assert.deepStrictEqual(answer(called), { reasoning: "plan", text: "" })
      assert.deepStrictEqual(called.calls, [{ id: "c1", name: "ls", arguments: "{}" }])
    })
  )

  it.scopedLive("PRV-2 Responses: several summary parts, and a function call announced only when done", () =>
    Effect.gen(function* () {
      const ev = (type: string, data: Record<string, unknown>) =>
        `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
      const got = yield* replayEverywhere(
        ev("response.created", { response: { status: "in_progress" } }) +
          ev("response.reasoning_summary_part.added", { item_id: "rs_1", summary_index: 0 }) +
          ev("response.reasoning_summary_text.delta", { item_id: "rs_1", summary_index: 0, delta: "First." }) +
          ev("response.reasoning_summary_part.added", { item_id: "rs_1", summary_index: 1 }) +
          ev("response.reasoning_summary_text.delta", { item_id: "rs_1", summary_index: 1, delta: "Second." }) +
          ev("response.output_text.delta", { item_id: "msg_1", delta: "Calling." }) +
          ev("response.output_item.done", {
            output_index: 2,
            item: { type: "function_call", id: "fc_1", call_id: "call_9", name: "ls", arguments: '{"dir":"."}' }
          }) +
          ev("response.completed", { response: { status: "completed", usage: { input_tokens: 5, output_tokens: 6 } } }),
        { api: "responses" }
      )
      assert.strictEqual(got.reasoning, "First.\n\nSecond.")
      assert.strictEqual(got.text, "Calling.")
      assert.deepStrictEqual(got.calls, [{ id: "call_9", name: "ls", arguments: '{"dir":"."}' }])
      assert.deepStrictEqual(got.finish, { reason: "tool_calls", usage: { inputTokens: 5, outputTokens: 6 } })
    })
  )
})
