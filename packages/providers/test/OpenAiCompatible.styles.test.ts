// Server styles beyond the recordings

import type * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import {
  chunk,
  done,
  expectComplete,
  fixture,
  modelFor,
  request,
  run,
  splits,
  sse
} from "./support/openAiCompatible.js"
import { type Assembled, assemble } from "./support/parts.js"
import * as SseServer from "./support/SseServer.js"

/** Serves `body` whole and split three ways; every replay must assemble to the same result. */
const replayEverywhere = (body: string | Uint8Array, options: Partial<OpenAiCompatible.Options> = {}) =>
  Effect.gen(function* () {
    const server = yield* SseServer.sequence({ body }, ...splits.map((pieces) => ({ body, pieces })))
    const model = modelFor(server, options)
    const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8")
    // Ids the adapter invents differ between replays; only their presence matters.
    const stable = (got: Assembled): Assembled => ({
      ...got,
      calls: got.calls.map((call) => (text.includes(`"${call.id}"`) ? call : { ...call, id: "<generated>" }))
    })
    const first = expectComplete(yield* run(model))
    for (const pieces of splits) {
      assert.deepStrictEqual(stable(expectComplete(yield* run(model))), stable(first), `split with seed ${pieces.seed}`)
    }
    return first
  })

describe("OpenAiCompatible server styles", () => {
  it.scopedLive("PRV-2 assembles tool calls without index, keyed by their ids (Gemini style)", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({
            role: "assistant",
            tool_calls: [{ id: "a1", type: "function", function: { name: "read", arguments: '{"path":"x"}' } }]
          }),
          chunk({ tool_calls: [{ id: "b2", type: "function", function: { name: "read", arguments: '{"path":' } }] }),
          chunk({ tool_calls: [{ function: { arguments: '"y"}' } }] }),
          chunk({}, "tool_calls"),
          done
        )
      )
      assert.deepStrictEqual(got.calls, [
        { id: "a1", name: "read", arguments: '{"path":"x"}' },
        { id: "b2", name: "read", arguments: '{"path":"y"}' }
      ])
      assert.strictEqual(got.finish?.reason, "tool_calls")
    })
  )

  it.scopedLive("PRV-2 two calls with one id stay two calls, the second with an id of its own", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({
            tool_calls: [
              { index: 0, id: "call_0", type: "function", function: { name: "ls", arguments: "{}" } },
              { index: 1, id: "call_0", type: "function", function: { name: "read", arguments: '{"path":' } }
            ]
          }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: '"a"}' } }] }),
          chunk({}, "tool_calls"),
          done
        )
      )
      const [first, second] = got.calls
      assert.deepStrictEqual(first, { id: "call_0", name: "ls", arguments: "{}" })
      assert.deepStrictEqual({ ...second!, id: "" }, { id: "", name: "read", arguments: '{"path":"a"}' })
      assert.match(second!.id, /^call_[0-9a-f]{24}$/)
    })
  )

  it.scopedLive("PRV-2 assembles tool calls whose indexes do not start at 0 (Anthropic compatibility)", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({ role: "assistant", content: "Let me check." }),
          chunk({
            tool_calls: [
              { index: 1, id: "toolu_01", type: "function", function: { name: "get_weather", arguments: "" } }
            ]
          }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: '{"city":' } }] }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: ' "Oslo"}' } }] }),
          chunk({
            tool_calls: [
              { index: 2, id: "toolu_02", type: "function", function: { name: "get_time", arguments: "{}" } }
            ]
          }),
          chunk({}, "tool_calls"),
          done
        )
      )
      assert.strictEqual(got.text, "Let me check.")
      assert.deepStrictEqual(got.calls, [
        { id: "toolu_01", name: "get_weather", arguments: '{"city": "Oslo"}' },
        { id: "toolu_02", name: "get_time", arguments: "{}" }
      ])
    })
  )

  it.scopedLive("PRV-2 ignores empty repeated ids and names, and invents an id when the server gives none", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({
            tool_calls: [{ index: 0, id: "call_x", type: "function", function: { name: "bash", arguments: "" } }]
          }),
          chunk({ tool_calls: [{ index: 0, id: "", type: "function", function: { name: "", arguments: '{"cmd":' } }] }),
          chunk({ tool_calls: [{ index: 0, id: "call_x", function: { name: "bash", arguments: '"ls"}' } }] }),
          chunk({ tool_calls: [{ index: 1, id: "", type: "function", function: { name: "pwd", arguments: "{}" } }] }),
          chunk({ tool_calls: [{ index: 1, id: "", function: { arguments: "" } }] }),
          chunk({}, "tool_calls"),
          done
        )
      )
      assert.strictEqual(got.calls.length, 2)
      assert.deepStrictEqual(got.calls[0], { id: "call_x", name: "bash", arguments: '{"cmd":"ls"}' })
      assert.strictEqual(got.calls[1]!.name, "pwd")
      assert.strictEqual(got.calls[1]!.arguments, "{}")
      assert.isTrue(got.calls[1]!.id.length > 0 && got.calls[1]!.id !== "call_x")
    })
  )

  it.scopedLive("PRV-2 starts a new call when a server reuses index 0 with a new id and name", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({
            tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "a", arguments: '{"n":1}' } }]
          }),
          chunk({
            tool_calls: [{ index: 0, id: "c2", type: "function", function: { name: "b", arguments: '{"n":2}' } }]
          }),
          chunk({}, "tool_calls"),
          done
        )
      )
      assert.deepStrictEqual(got.calls, [
        { id: "c1", name: "a", arguments: '{"n":1}' },
        { id: "c2", name: "b", arguments: '{"n":2}' }
      ])
    })
  )

  it.scopedLive("PRV-2 keeps the last usage when every chunk carries one, never their sum", () =>
    Effect.gen(function* () {
      const usage = (completion: number) => ({
        usage: { prompt_tokens: 10, completion_tokens: completion, total_tokens: 10 + completion }
      })
      const got = yield* replayEverywhere(
        sse(
          chunk({ role: "assistant", content: "" }, null, usage(0)),
          chunk({ content: "a" }, null, usage(1)),
          chunk({ content: "b" }, null, usage(2)),
          chunk({}, "stop", usage(3)),
          { id: "chatcmpl-1", object: "chat.completion.chunk", choices: [], usage: usage(3).usage },
          done
        )
      )
      assert.deepStrictEqual(got.finish, { reason: "stop", usage: { inputTokens: 10, outputTokens: 3 } })
    })
  )

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

  it.scopedLive("PRV-2 parses CRLF and bare-CR framing like LF framing", () =>
    Effect.gen(function* () {
      const lf = fixture("openai-chat-tool-calls-parallel.sse").toString("utf8")
      const expected = yield* replayEverywhere(lf)
      assert.deepStrictEqual(yield* replayEverywhere(lf.replaceAll("\n", "\r\n")), expected)
      assert.deepStrictEqual(yield* replayEverywhere(lf.replaceAll("\n", "\r")), expected)
    })
  )

  it.scopedLive("PRV-2 parses `data:` without a space, keep-alive comments and empty lines", () =>
    Effect.gen(function* () {
      const original = fixture("openai-chat-text.sse").toString("utf8")
      const expected = yield* replayEverywhere(original)
      const noSpace = original.replaceAll("data: ", "data:")
      assert.deepStrictEqual(yield* replayEverywhere(noSpace), expected)
      const pinged = `: ping\n\n\n\n${original.replaceAll("\n\n", "\n\n: ping\n\n\n")}`
      assert.deepStrictEqual(yield* replayEverywhere(pinged), expected)
    })
  )

  it.scopedLive("PRV-2 keep-alive comments are not progress: no empty chunk is ever emitted", () =>
    Effect.gen(function* () {
      const body =
        ": OPENROUTER PROCESSING\n\n".repeat(20) + sse(chunk({ content: "hi" }), ": ping\n\n", chunk({}, "stop"), done)
      const server = yield* SseServer.always({ body, pieces: { seed: 9, maxPiece: 5 } })
      const chunks = yield* modelFor(server).stream(request()).pipe(Stream.chunks, Stream.runCollect)
      const sizes = Chunk.toReadonlyArray(chunks).map(Chunk.size)
      assert.isTrue(
        sizes.every((size) => size > 0),
        `chunk sizes ${sizes.join(",")}`
      )
      assert.deepStrictEqual(assemble(Chunk.toReadonlyArray(chunks).flatMap(Chunk.toReadonlyArray)).text, "hi")
    })
  )

  it.scopedLive("PRV-2 reassembles UTF-8 characters split across reads", () =>
    Effect.gen(function* () {
      const words = ["¡Olá, ", "世界", "! 🌍", " — ñandú"]
      const body = Buffer.from(sse(...words.map((text) => chunk({ content: text })), chunk({}, "stop"), done), "utf8")
      const server = yield* SseServer.always({ body, pieces: { seed: 4, maxPiece: 2 } })
      const got = expectComplete(yield* run(modelFor(server)))
      assert.strictEqual(got.text, words.join(""))
    })
  )

  it.scopedLive("PRV-2 accepts the final [DONE] without its blank line, and a finish without [DONE]", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        { body: `${sse(chunk({ content: "a" }), chunk({}, "stop"))}data: [DONE]` },
        { body: sse(chunk({ content: "b" }), chunk({}, "stop")) }
      )
      const model = modelFor(server)
      assert.strictEqual(expectComplete(yield* run(model)).text, "a")
      assert.strictEqual(expectComplete(yield* run(model)).text, "b")
    })
  )

  it.scopedLive("PRV-2 reads an event stream mislabelled as application/json", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({
        headers: { "content-type": "application/json" },
        body: sse(chunk({ content: "labelled wrong" }), chunk({}, "stop"), done)
      })
      assert.strictEqual(expectComplete(yield* run(modelFor(server))).text, "labelled wrong")
    })
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

  it.scopedLive("PRV-2 reads a completion sent whole by a server that ignored stream: true", () =>
    Effect.gen(function* () {
      const whole = (message: Record<string, unknown>, finish: string, usage?: Record<string, number>) => ({
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          id: "chatcmpl-1",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [{ index: 0, message, finish_reason: finish }],
          ...(usage === undefined ? {} : { usage })
        })
      })
      const server = yield* SseServer.sequence(
        whole({ role: "assistant", content: "Sent whole.", reasoning_content: "Thought first." }, "stop", {
          prompt_tokens: 7,
          completion_tokens: 3
        }),
        whole(
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "read", arguments: '{"path":"a"}' } },
              { id: "call_b", type: "function", function: { name: "ls", arguments: "{}" } }
            ]
          },
          "tool_calls"
        )
      )
      const model = modelFor(server)
      const text = expectComplete(yield* run(model))
      assert.strictEqual(text.text, "Sent whole.")
      assert.strictEqual(text.reasoning, "Thought first.")
      assert.strictEqual(text.finish?.reason, "stop")
      assert.deepInclude(text.finish?.usage, { inputTokens: 7, outputTokens: 3 })
      const calls = expectComplete(yield* run(model))
      assert.deepStrictEqual(calls.calls, [
        { id: "call_a", name: "read", arguments: '{"path":"a"}' },
        { id: "call_b", name: "ls", arguments: "{}" }
      ])
      assert.strictEqual(calls.finish?.reason, "tool_calls")
    })
  )

  it.scopedLive("PRV-2 finishes Ollama-style `stop` with tool calls as tool_calls", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({ tool_calls: [{ id: "call_1", function: { name: "ls", arguments: "{}" } }] }),
          chunk({ content: "" }, "stop"),
          done
        )
      )
      assert.strictEqual(got.finish?.reason, "tool_calls")
    })
  )

  it.scopedLive("PRV-2 maps content_filter and unknown finish reasons", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        { body: sse(chunk({ content: "x" }), chunk({}, "content_filter"), done) },
        { body: sse(chunk({ content: "x" }), chunk({}, "recitation"), done) }
      )
      const model = modelFor(server)
      assert.strictEqual(expectComplete(yield* run(model)).finish?.reason, "content_filter")
      assert.strictEqual(expectComplete(yield* run(model)).finish?.reason, "other")
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
