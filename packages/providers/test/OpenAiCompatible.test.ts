import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { ProviderError, type ProviderErrorCode } from "@alisio/domain/Errors"
import { ToolCallId } from "@alisio/domain/Ids"
import {
  type FinishReason,
  LanguageModel,
  type LanguageModelService,
  type ModelRequest,
  type ResponsePart
} from "@alisio/domain/LanguageModel"
import type { Usage } from "@alisio/domain/Usage"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { type Assembled, assemble, contractViolations } from "./support/parts.js"
import * as SseServer from "./support/SseServer.js"

const fixtureDir = new URL("./fixtures/sse/", import.meta.url)
const fixture = (file: string): Buffer => readFileSync(new URL(file, fixtureDir))

const user = (text: string) => ({ role: "user" as const, content: [{ _tag: "text" as const, text }] })

const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "gpt-4o",
  messages: [user("hi")],
  tools: [],
  maxOutputTokens: 1024,
  ...over
})

const modelFor = (server: SseServer.SseServer, options: Partial<OpenAiCompatible.Options> = {}) =>
  OpenAiCompatible.make({
    baseURL: server.baseURL,
    apiKey: Redacted.make("sk-test"),
    retry: { baseDelayMs: 1, maxDelayMs: 4 },
    ...options
  })

interface Outcome {
  readonly parts: ReadonlyArray<ResponsePart>
  readonly error: ProviderError | undefined
}

/** Every part the stream emitted, and the error it ended with, if any. */
const run = (model: LanguageModelService, req: ModelRequest = request()): Effect.Effect<Outcome> =>
  model.stream(req).pipe(
    Stream.either,
    Stream.runCollect,
    Effect.map((chunk) => {
      const items = Chunk.toReadonlyArray(chunk)
      const parts = items.flatMap((item) => (Either.isRight(item) ? [item.right] : []))
      const errors = items.flatMap((item) => (Either.isLeft(item) ? [item.left] : []))
      return { parts, error: errors[0] as ProviderError | undefined }
    })
  )

const expectComplete = (outcome: Outcome): Assembled => {
  assert.isUndefined(outcome.error, outcome.error?.message)
  assert.deepStrictEqual(contractViolations(outcome.parts, true), [])
  return assemble(outcome.parts)
}

const expectFailure = (outcome: Outcome, code: ProviderErrorCode): ProviderError => {
  assert.deepStrictEqual(contractViolations(outcome.parts, false), [])
  assert.isFalse(
    outcome.parts.some((part) => part._tag === "Finish"),
    "a failed stream has no Finish"
  )
  assert.instanceOf(outcome.error, ProviderError)
  assert.strictEqual(outcome.error!.code, code, outcome.error!.message)
  return outcome.error!
}

// ---------------------------------------------------------------------------------------------
// Recorded and reconstructed transcripts (test/fixtures/sse, see its README in ../shared)

interface Expectation {
  readonly api?: "responses"
  readonly text?: string
  readonly reasoning?: string
  readonly calls?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>
  readonly finish?: { readonly reason: FinishReason; readonly usage?: Usage }
  readonly error?: { readonly code: ProviderErrorCode; readonly includes: string }
}

const expectations: Record<string, Expectation> = {
  "openai-chat-text.sse": {
    text: "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
    finish: { reason: "stop", usage: { inputTokens: 14, outputTokens: 30, reasoningTokens: 0 } }
  },
  "openai-chat-tool-calls-parallel.sse": {
    calls: [
      {
        id: "call_JMW1whyEaYG438VE1OIflxA2",
        name: "GetWeatherArgs",
        arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}'
      },
      {
        id: "call_DNYTawLBoN8fj3KN6qU9N1Ou",
        name: "get_stock_price",
        arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}'
      }
    ],
    finish: { reason: "tool_calls", usage: { inputTokens: 149, outputTokens: 60, reasoningTokens: 0 } }
  },
  "openai-chat-length-cut.sse": {
    text: '{"',
    finish: { reason: "length", usage: { inputTokens: 79, outputTokens: 1, reasoningTokens: 0 } }
  },
  "openai-chat-length-cut-tool-args.sse": {
    calls: [{ id: "call_JMW1whyEaYG438VE1OIflxA2", name: "GetWeatherArgs", arguments: '{"city": "Edinb' }],
    finish: { reason: "length", usage: { inputTokens: 149, outputTokens: 5, reasoningTokens: 0 } }
  },
  "openai-chat-tool-calls-interleaved.sse": {
    calls: [
      { id: "call_SYNTHaaaaaaaaaaaaaaaaaaa", name: "get_weather", arguments: '{"city": "Paris"}' },
      { id: "call_SYNTHbbbbbbbbbbbbbbbbbbb", name: "get_weather", arguments: '{"city": "Berlin"}' }
    ],
    finish: { reason: "tool_calls", usage: { inputTokens: 80, outputTokens: 40 } }
  },
  "openai-responses-function-call.sse": {
    api: "responses",
    calls: [{ id: "call_kL0PCQV7M2WMoVX8V8OtYSAL", name: "get_capital", arguments: '{"country":"France"}' }],
    finish: {
      reason: "tool_calls",
      usage: { inputTokens: 255, outputTokens: 16, reasoningTokens: 0, cachedInputTokens: 0 }
    }
  },
  "openai-responses-reasoning-summary-function-call.sse": {
    api: "responses",
    reasoning:
      "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product.",
    calls: [{ id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", name: "calculator", arguments: '{"a":12,"b":7,"op":"add"}' }],
    finish: {
      reason: "tool_calls",
      usage: { inputTokens: 134, outputTokens: 28, reasoningTokens: 0, cachedInputTokens: 0 }
    }
  },
  "openai-responses-incomplete-max-output.sse": {
    api: "responses",
    text: "Once upon a time, in a quiet village nestled between rolling hills, there lived",
    finish: { reason: "length", usage: { inputTokens: 14, outputTokens: 16, reasoningTokens: 0, cachedInputTokens: 0 } }
  },
  "openai-responses-error-in-stream.sse": {
    api: "responses",
    error: { code: "rate_limited", includes: "You exceeded your current quota" }
  },
  "azure-content-filter-first-chunk.sse": {
    text: "Capital of Denmark.",
    finish: { reason: "stop", usage: { inputTokens: 15, outputTokens: 78, reasoningTokens: 64, cachedInputTokens: 0 } }
  },
  "openrouter-keepalive-reasoning.sse": {
    text: "2 + 2 = 4",
    reasoning: "This is a simple arithmetic question. 2+2 equals 4.",
    finish: { reason: "stop", usage: { inputTokens: 43, outputTokens: 36, reasoningTokens: 13, cachedInputTokens: 0 } }
  },
  "groq-reasoning-tool-call-x_groq.sse": {
    reasoning: 'We need to call the function with correct parameter "name". Provide a name, e.g., "example".',
    calls: [
      { id: "fc_bfb39741-3748-4def-9886-a93fc9c64a90", name: "get_something_by_name", arguments: '{"name":"example"}' }
    ],
    finish: { reason: "tool_calls", usage: { inputTokens: 304, outputTokens: 49, reasoningTokens: 23 } }
  },
  "groq-error-event-tool-use-failed.sse": {
    reasoning: "We need to call the tool with invalid parameters first",
    error: { code: "bad_request", includes: "Tool call validation failed" }
  },
  "deepseek-reasoner-tool-call.sse": {
    reasoning:
      'The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".',
    calls: [{ id: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", name: "weather", arguments: '{"location": "San Francisco"}' }],
    finish: {
      reason: "tool_calls",
      usage: { inputTokens: 339, outputTokens: 83, reasoningTokens: 39, cachedInputTokens: 320 }
    }
  },
  "mistral-tool-call-no-index-single-chunk.sse": {
    calls: [{ id: "gSIMJiOkT", name: "weather", arguments: '{"location": "San Francisco"}' }],
    finish: { reason: "tool_calls", usage: { inputTokens: 124, outputTokens: 22 } }
  },
  "vllm-tool-call-continuous-usage.sse": {
    calls: [
      {
        id: "chatcmpl-tool-b3b307239370432d9910d4b79b4dbbaa",
        name: "searchGoogle",
        arguments: '{"query": "latest news on ai"}'
      }
    ],
    finish: { reason: "tool_calls", usage: { inputTokens: 226, outputTokens: 20 } }
  },
  "vllm-reasoning-content.sse": {
    text: "\n\n9.8 is greater than 9.11.",
    reasoning:
      "Okay, so I need to compare 9.11 and 9.8. Writing 9.8 as 9.80, 80 hundredths is more than 11 hundredths.\n",
    finish: { reason: "stop", usage: { inputTokens: 17, outputTokens: 46 } }
  },
  "llamacpp-tool-call.sse": {
    calls: [{ id: "7GonqJFqm6H7ety2vYBFrdW2yNfQUbK6", name: "run_command", arguments: '{"command":"pwd"}' }],
    finish: { reason: "tool_calls" }
  },
  "llamacpp-legacy-error-field.sse": {
    error: { code: "context_length_exceeded", includes: "the request exceeds the available context size" }
  },
  "ollama-chat-text.sse": {
    text: "My name is Neo Vim.",
    finish: { reason: "stop" }
  },
  "ollama-tool-calls-whole-chunks.sse": {
    calls: [
      { id: "call_809l7n8f", name: "run_command", arguments: '{"command":"ls -la"}' },
      { id: "call_oqp1e2a1", name: "run_command", arguments: '{"command":"ls -la","cwd":"/path/to/directory"}' }
    ],
    finish: { reason: "tool_calls" }
  }
}

const splits = [
  { seed: 1, maxPiece: 7 },
  { seed: 2, maxPiece: 61 },
  { seed: 3, maxPiece: 509 }
]

const checkExpectation = (outcome: Outcome, expected: Expectation, label: string) => {
  if (expected.error !== undefined) {
    const error = expectFailure(outcome, expected.error.code)
    assert.include(error.message, expected.error.includes, label)
    const got = assemble(outcome.parts)
    if (expected.reasoning !== undefined) assert.isTrue(got.reasoning.startsWith(expected.reasoning), label)
    return
  }
  const got = expectComplete(outcome)
  assert.strictEqual(got.text, expected.text ?? "", label)
  assert.strictEqual(got.reasoning, expected.reasoning ?? "", label)
  assert.deepStrictEqual(got.calls, expected.calls ?? [], label)
  assert.deepStrictEqual(got.finish, expected.finish, label)
}

describe("OpenAiCompatible fixtures", () => {
  it("PRV-2 every recorded transcript has an expectation", () => {
    const files = readdirSync(fixtureDir)
      .filter((name) => name.endsWith(".sse"))
      .sort()
    assert.strictEqual(files.length, 21)
    assert.deepStrictEqual(files, Object.keys(expectations).sort())
  })

  for (const [file, expected] of Object.entries(expectations)) {
    it.scopedLive(`PRV-2 assembles ${file} whole and in random-sized pieces`, () =>
      Effect.gen(function* () {
        const body = fixture(file)
        const server = yield* SseServer.sequence({ body }, ...splits.map((pieces) => ({ body, pieces })))
        const model = modelFor(server, expected.api === undefined ? {} : { api: expected.api })
        checkExpectation(yield* run(model), expected, `${file} whole`)
        for (const pieces of splits) {
          checkExpectation(yield* run(model), expected, `${file} split with seed ${pieces.seed}`)
        }
        // Errors inside a 200 stream here are not transient: nothing was sent twice.
        assert.strictEqual(server.requests.length, 1 + splits.length)
      })
    )
  }
})

// ---------------------------------------------------------------------------------------------
// Server styles beyond the recordings

const sse = (...events: ReadonlyArray<unknown>): string =>
  events.map((event) => (typeof event === "string" ? event : `data: ${JSON.stringify(event)}\n\n`)).join("")

const chunk = (
  delta: Record<string, unknown>,
  finishReason: string | null = null,
  extra: Record<string, unknown> = {}
) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finishReason }],
  ...extra
})

const done = "data: [DONE]\n\n"

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

// ---------------------------------------------------------------------------------------------
// Failures

describe("OpenAiCompatible failures", () => {
  const jsonReply = (status: number, body: unknown, headers: Record<string, string> = {}): SseServer.Reply => ({
    status,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

  it.scopedLive("PRV-2 a 401 is an auth error with the server's message, not retried", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always(
        jsonReply(401, {
          error: {
            message: "Incorrect API key provided: sk-test",
            type: "invalid_request_error",
            code: "invalid_api_key"
          }
        })
      )
      const error = expectFailure(yield* run(modelFor(server)), "auth")
      assert.include(error.message, "Incorrect API key provided")
      assert.strictEqual(error.status, 401)
      assert.strictEqual(error.provider, "openai")
      assert.strictEqual(server.requests.length, 1)
    })
  )

  it.scopedLive("PRV-2 400, 404 and 422 are bad_request and keep each server's own words", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        // vLLM: top-level message
        jsonReply(400, {
          object: "error",
          message: "temperature must be non-negative, got -1.0.",
          type: "BadRequestError",
          code: 400
        }),
        // FastAPI / llama-cpp-python: detail
        jsonReply(404, { detail: "Model llama9 not found" }),
        // Ollama: error as a string
        jsonReply(422, { error: "invalid tool schema" }),
        // plain text
        { status: 400, headers: { "content-type": "text/plain" }, body: "max_tokens is too large" }
      )
      const model = modelFor(server)
      assert.include(expectFailure(yield* run(model), "bad_request").message, "temperature must be non-negative")
      assert.include(expectFailure(yield* run(model), "bad_request").message, "Model llama9 not found")
      assert.include(expectFailure(yield* run(model), "bad_request").message, "invalid tool schema")
      assert.include(expectFailure(yield* run(model), "bad_request").message, "max_tokens is too large")
      assert.strictEqual(server.requests.length, 4)
    })
  )

  it.scopedLive(
    "CTX-1 context-length refusals of OpenAI, vLLM, llama.cpp and Ollama are context_length_exceeded with the window they name, never retried",
    () =>
      Effect.gen(function* () {
        const server = yield* SseServer.sequence(
          // OpenAI (and Groq, DeepSeek): code and words
          jsonReply(400, {
            error: {
              message:
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens. Please reduce the length of the messages.",
              type: "invalid_request_error",
              param: "messages",
              code: "context_length_exceeded"
            }
          }),
          // vLLM: a top-level message, prompt and completion counted together
          jsonReply(400, {
            object: "error",
            message:
              "This model's maximum context length is 32,768 tokens. However, you requested 40000 tokens (23616 in the messages, 16384 in the completion). Please reduce the length of the messages or completion.",
            type: "BadRequestError",
            param: null,
            code: 400
          }),
          // llama.cpp server: its own type, and n_ctx
          jsonReply(400, {
            error: {
              code: 400,
              message: "the request exceeds the available context size, try increasing it",
              type: "exceed_context_size_error",
              n_prompt_tokens: 5120,
              n_ctx: 4096
            }
          }),
          // Ollama with truncation off: a bare string, and a 500
          jsonReply(500, { error: "the input length exceeds the context length" }),
          // A rate limit naming tokens stays a rate limit
          jsonReply(429, {
            error: {
              message: "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 52000.",
              type: "tokens",
              code: "rate_limit_exceeded"
            }
          })
        )
        const model = modelFor(server)
        const openai = expectFailure(yield* run(model), "context_length_exceeded")
        assert.include(openai.message, "maximum context length is 8192 tokens")
        assert.strictEqual(openai.contextWindow, 8192)
        assert.strictEqual(openai.status, 400)
        assert.strictEqual(expectFailure(yield* run(model), "context_length_exceeded").contextWindow, 32768)
        const llama = expectFailure(yield* run(model), "context_length_exceeded")
        assert.strictEqual(llama.contextWindow, 4096)
        assert.include(llama.message, "exceeds the available context size")
        const ollama = expectFailure(yield* run(model), "context_length_exceeded")
        assert.isUndefined(ollama.contextWindow)
        assert.include(ollama.message, "the input length exceeds the context length")
        expectFailure(yield* run(modelFor(server, { maxRetries: 0 })), "rate_limited")
        // One request each: a refusal for length is not retried as a server error would be.
        assert.strictEqual(server.requests.length, 5)
      })
  )

  it.scoped("PRV-2 a 429 with Retry-After is retried after exactly that delay, then succeeds", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        jsonReply(
          429,
          { error: { message: "Rate limit reached", code: "rate_limit_exceeded" } },
          { "retry-after": "3" }
        ),
        jsonReply(
          429,
          { error: { message: "Rate limit reached", code: "rate_limit_exceeded" } },
          { "retry-after-ms": "1500" }
        ),
        { body: sse(chunk({ content: "ok" }), chunk({}, "stop"), done) }
      )
      const fiber = yield* Effect.fork(run(modelFor(server, { retry: {} })))
      const { exit, slept } = yield* driveClock(fiber)
      assert.isTrue(Exit.isSuccess(exit))
      if (Exit.isSuccess(exit)) {
        assert.strictEqual(expectComplete(exit.value).text, "ok")
        // Each retry is reported before its wait, so the runner can turn it into request_retry.
        assert.deepStrictEqual(
          exit.value.parts.filter((part) => part._tag === "Retrying"),
          [
            { _tag: "Retrying", reason: "rate_limited", status: 429, afterMs: 3000, attempt: 1, of: 2 },
            { _tag: "Retrying", reason: "rate_limited", status: 429, afterMs: 1500, attempt: 2, of: 2 }
          ]
        )
      }
      assert.deepStrictEqual(slept, [3000, 1500])
      assert.strictEqual(server.requests.length, 3)
    })
  )

  it.scoped("PRV-2 500 ×N is retried with capped exponential backoff, then fails as server", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always(jsonReply(500, { error: { message: "upstream overloaded" } }))
      const fiber = yield* Effect.fork(
        run(modelFor(server, { maxRetries: 3, retry: { baseDelayMs: 400, maxDelayMs: 1000 } }))
      )
      const { exit, slept } = yield* driveClock(fiber)
      assert.isTrue(Exit.isSuccess(exit))
      if (Exit.isSuccess(exit)) {
        const error = expectFailure(exit.value, "server")
        assert.include(error.message, "upstream overloaded")
        assert.strictEqual(error.status, 500)
      }
      assert.strictEqual(server.requests.length, 4)
      assert.strictEqual(slept.length, 3)
      if (Exit.isSuccess(exit)) {
        const retries = exit.value.parts.flatMap((part) => (part._tag === "Retrying" ? [part] : []))
        assert.deepStrictEqual(
          retries.map(({ afterMs: _, ...rest }) => rest),
          [1, 2, 3].map((attempt) => ({
            _tag: "Retrying" as const,
            reason: "server_error" as const,
            status: 500,
            attempt,
            of: 3
          }))
        )
        assert.deepStrictEqual(
          retries.map((part) => part.afterMs),
          slept
        )
      }
      // 400, 800, then capped at 1000; each within ±25% jitter.
      ;[400, 800, 1000].forEach((base, i) => {
        assert.isTrue(slept[i]! >= base * 0.75 && slept[i]! <= base * 1.25, `retry ${i + 1} waited ${slept[i]}`)
      })
    })
  )

  it.scoped("PRV-2 a Retry-After beyond the cap is not waited for", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always(
        jsonReply(429, { error: { message: "slow down" } }, { "retry-after": "3600" })
      )
      const fiber = yield* Effect.fork(run(modelFor(server, { retry: {} })))
      const { exit, slept } = yield* driveClock(fiber)
      assert.isTrue(Exit.isSuccess(exit))
      if (Exit.isSuccess(exit)) assert.strictEqual(expectFailure(exit.value, "rate_limited").retryAfterMs, 3_600_000)
      assert.deepStrictEqual(slept, [])
      assert.strictEqual(server.requests.length, 1)
    })
  )

  it.scopedLive("PRV-2 insufficient_quota is rate_limited but not retried", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always(
        jsonReply(429, { error: { message: "You exceeded your current quota", code: "insufficient_quota" } })
      )
      expectFailure(yield* run(modelFor(server)), "rate_limited")
      assert.strictEqual(server.requests.length, 1)
    })
  )

  it.scopedLive("PRV-2 connection refused is a network error after the bounded retries", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(() => freePort())
      const model = OpenAiCompatible.make({
        baseURL: `http://127.0.0.1:${port}/v1`,
        maxRetries: 2,
        retry: { baseDelayMs: 1, maxDelayMs: 2 }
      })
      const error = expectFailure(yield* run(model), "network")
      assert.include(error.message, `127.0.0.1:${port}`)
    })
  )

  it.scopedLive("PRV-2 a connection dropped before any part is retried; after a part it fails as network", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        { body: ": ping\n\n", drop: true },
        { body: sse(chunk({ content: "Hel" })), drop: true }
      )
      const outcome = yield* run(modelFor(server))
      expectFailure(outcome, "network")
      assert.strictEqual(assemble(outcome.parts).text, "Hel")
      assert.strictEqual(server.requests.length, 2, "retried once before output, never after")
      assert.deepStrictEqual(
        outcome.parts.flatMap((part) => (part._tag === "Retrying" ? [part.reason] : [])),
        ["network"]
      )
    })
  )

  it.scopedLive("PRV-2 a stream that ends without finish or [DONE] is invalid_response, not an empty success", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        { body: sse(chunk({ content: "partial" })) },
        { body: "" },
        { body: done }
      )
      const model = modelFor(server)
      const cut = yield* run(model)
      expectFailure(cut, "invalid_response")
      assert.strictEqual(assemble(cut.parts).text, "partial")
      expectFailure(yield* run(model), "invalid_response")
      expectFailure(yield* run(model), "invalid_response")
      assert.strictEqual(server.requests.length, 3)
    })
  )

  it.scopedLive("PRV-2 a malformed JSON line fails as invalid_response", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({
        body: `${sse(chunk({ content: "ok" }))}data: {"id":"x","choices":[{"delta":{"content":"bro\n\n${done}`
      })
      const outcome = yield* run(modelFor(server))
      assert.include(expectFailure(outcome, "invalid_response").message, "malformed JSON")
      assert.strictEqual(assemble(outcome.parts).text, "ok")
    })
  )

  it.scopedLive(
    "PRV-2 errors inside a 200 stream become typed errors (OpenRouter, llama.cpp, LM Studio, JSON body)",
    () =>
      Effect.gen(function* () {
        const server = yield* SseServer.sequence(
          // OpenRouter: a chunk with `error` and finish_reason "error"
          {
            body: sse(chunk({ content: "Hi" }), {
              ...chunk({ content: "" }, "error"),
              error: { code: 502, message: "Provider returned error" }
            })
          },
          // llama.cpp after PR #16109
          { body: sse({ error: { code: 500, message: "failed to decode the batch", type: "server_error" } }) },
          // LM Studio
          {
            body:
              "event: error\n" +
              sse({ error: { message: "context length exceeded" }, message: "context length exceeded" })
          },
          // a proxy answering the stream with a JSON error and status 200
          jsonReply(200, { error: { message: "model is loading", code: "invalid_request" } })
        )
        const model = modelFor(server, { maxRetries: 0 })
        const openRouter = yield* run(model)
        assert.include(expectFailure(openRouter, "server").message, "Provider returned error")
        assert.strictEqual(assemble(openRouter.parts).text, "Hi")
        assert.include(expectFailure(yield* run(model), "server").message, "failed to decode the batch")
        assert.include(expectFailure(yield* run(model), "context_length_exceeded").message, "context length exceeded")
        assert.include(expectFailure(yield* run(model), "bad_request").message, "model is loading")
      })
  )

  it.scopedLive("PRV-2 a completed stream leaves its connection open for the next request", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({
        body: sse(chunk({ content: "ok" }), chunk({}, "stop"), done),
        pieces: { seed: 6, maxPiece: 50 }
      })
      const model = modelFor(server)
      for (let i = 0; i < 6; i++) assert.strictEqual(expectComplete(yield* run(model)).text, "ok")
      // Aborting after [DONE] would cost a connection per request; the fetch pool may open a second.
      assert.isAtMost(server.connections(), 2)
    })
  )

  it.scoped("PRV-2 a server that keeps the connection open after [DONE] does not hold the stream", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({
        body: sse(chunk({ content: "ok" }), chunk({}, "stop"), done),
        hang: true
      })
      const fiber = yield* Effect.fork(run(modelFor(server)))
      const { exit, slept } = yield* driveClock(fiber)
      assert.isTrue(Exit.isSuccess(exit))
      if (Exit.isSuccess(exit)) assert.strictEqual(expectComplete(exit.value).text, "ok")
      assert.deepStrictEqual(slept, [1000], "waits a bounded grace for the end of the body")
      yield* server.clientClosed
    })
  )

  it.live("PRV-2 interrupting the consumer aborts the request: the server sees the connection close", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* SseServer.always({ body: sse(chunk({ content: "first" })), hang: true })
        const first = yield* Deferred.make<void>()
        const fiber = yield* modelFor(server)
          .stream(request())
          .pipe(
            Stream.runForEach(() => Deferred.succeed(first, undefined)),
            Effect.fork
          )
        yield* Deferred.await(first)
        yield* Fiber.interrupt(fiber)
        yield* server.clientClosed
        assert.strictEqual(server.requests.length, 1)
      })
    )
  )

  it.live("PRV-2 interrupting while waiting for the response headers aborts the request too", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const received = yield* Deferred.make<void>()
        const server = yield* SseServer.make(() => {
          Deferred.unsafeDone(received, Effect.void)
          return { stall: true }
        })
        const fiber = yield* Effect.fork(run(modelFor(server)))
        yield* Deferred.await(received)
        const exit = yield* Fiber.interrupt(fiber)
        yield* server.clientClosed
        assert.isTrue(Exit.isInterrupted(exit), "the consumer ended interrupted, not with a response")
        assert.strictEqual(server.requests.length, 1, "the aborted request was not retried")
      })
    )
  )
})

// ---------------------------------------------------------------------------------------------
// Requests, discovery, configuration

describe("OpenAiCompatible requests and discovery", () => {
  const okBody = sse(chunk({ content: "ok" }), chunk({}, "stop"), done)
  const callId = ToolCallId.make("call_1")
  const conversation: ModelRequest = {
    model: "gpt-5",
    system: "Be brief.",
    effort: "high",
    maxOutputTokens: 2048,
    tools: [
      {
        name: "read",
        description: "Reads a file",
        parameters: { type: "object", properties: { path: { type: "string" } } }
      }
    ],
    messages: [
      {
        role: "user",
        content: [
          { _tag: "text", text: "What is in this picture?" },
          { _tag: "image", mediaType: "image/png", data: "iVBORw0KGgo=" }
        ]
      },
      {
        role: "assistant",
        content: [
          { _tag: "reasoning", text: "secret thoughts" },
          { _tag: "text", text: "Let me read it." },
          { _tag: "tool_call", id: callId, name: "read", arguments: '{"path":"a.txt"}' }
        ]
      },
      {
        role: "tool",
        toolCallId: callId,
        toolName: "read",
        content: [{ _tag: "text", text: "hello" }],
        isError: false
      },
      { role: "system", content: "Continue." }
    ]
  }

  it.scopedLive("PRV-2 sends Chat Completions with messages, tools, usage, budget and effort", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({ body: okBody })
      expectComplete(yield* run(modelFor(server, { headers: { "x-team": "alisio" } }), conversation))
      const sent = server.requests[0]!
      assert.strictEqual(sent.url, "/v1/chat/completions")
      assert.strictEqual(sent.headers.authorization, "Bearer sk-test")
      assert.strictEqual(sent.headers["x-team"], "alisio")
      assert.deepStrictEqual(sent.body, {
        model: "gpt-5",
        messages: [
          { role: "system", content: "Be brief." },
          {
            role: "user",
            content: [
              { type: "text", text: "What is in this picture?" },
              { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }
            ]
          },
          {
            role: "assistant",
            content: "Let me read it.",
            tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } }]
          },
          { role: "tool", tool_call_id: "call_1", content: "hello" },
          { role: "system", content: "Continue." }
        ],
        stream: true,
        stream_options: { include_usage: true },
        max_completion_tokens: 2048,
        tools: [
          {
            type: "function",
            function: {
              name: "read",
              description: "Reads a file",
              parameters: { type: "object", properties: { path: { type: "string" } } }
            }
          }
        ],
        reasoning_effort: "high"
      })
    })
  )

  it.scopedLive(
    "PRV-2 sends max_tokens when configured, no effort to a model without it, no key when none is set",
    () =>
      Effect.gen(function* () {
        const server = yield* SseServer.always({ body: okBody })
        const model = OpenAiCompatible.make({ baseURL: server.baseURL, outputTokensParam: "max_tokens" })
        expectComplete(yield* run(model, request({ model: "gpt-4o", effort: "high", maxOutputTokens: 77 })))
        const sent = server.requests[0]!
        const body = sent.body as Record<string, unknown>
        assert.strictEqual(body.max_tokens, 77)
        assert.isFalse("max_completion_tokens" in body)
        assert.isFalse("reasoning_effort" in body)
        assert.isUndefined(sent.headers.authorization)
      })
  )

  it.scopedLive("PRV-2 sends Responses requests with instructions, input items and reasoning", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({ body: fixture("openai-responses-function-call.sse") })
      expectComplete(yield* run(modelFor(server, { api: "responses" }), conversation))
      const sent = server.requests[0]!
      assert.strictEqual(sent.url, "/v1/responses")
      assert.deepStrictEqual(sent.body, {
        model: "gpt-5",
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "What is in this picture?" },
              { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" }
            ]
          },
          { role: "assistant", content: "Let me read it." },
          { type: "function_call", call_id: "call_1", name: "read", arguments: '{"path":"a.txt"}' },
          { type: "function_call_output", call_id: "call_1", output: "hello" },
          { role: "system", content: "Continue." }
        ],
        stream: true,
        max_output_tokens: 2048,
        instructions: "Be brief.",
        tools: [
          {
            type: "function",
            name: "read",
            description: "Reads a file",
            parameters: { type: "object", properties: { path: { type: "string" } } },
            strict: false
          }
        ],
        reasoning: { effort: "high", summary: "auto" }
      })
    })
  )

  it.scopedLive("PRV-2 discovers /models and merges them with the catalog", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          object: "list",
          data: [
            { id: "gpt-4o-2024-08-06", object: "model", created: 1, owned_by: "openai" },
            { id: "o3-mini", object: "model", created: 1, owned_by: "openai" },
            { id: "llama3.1:8b", object: "model", created: 1, owned_by: "library" }
          ]
        })
      })
      const models = yield* modelFor(server, {
        providerId: "local",
        catalog: { "llama3.1:8b": { contextWindow: 131_072 }, "my-finetune": { maxOutputTokens: 4096 } }
      }).models
      assert.strictEqual(server.requests[0]!.url, "/v1/models")
      assert.deepStrictEqual(models, [
        { id: "gpt-4o-2024-08-06", provider: "local", contextWindow: 128_000, maxOutputTokens: 16_384 },
        {
          id: "o3-mini",
          provider: "local",
          contextWindow: 200_000,
          maxOutputTokens: 100_000,
          reasoningEfforts: ["low", "medium", "high"]
        },
        { id: "llama3.1:8b", provider: "local", contextWindow: 131_072 },
        { id: "my-finetune", provider: "local", maxOutputTokens: 4096 }
      ])
    })
  )

  it.scopedLive("PRV-2 a server without /models lists its configured models; a 401 on /models is auth", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        { status: 404, headers: { "content-type": "application/json" }, body: '{"detail":"Not Found"}' },
        { status: 401, headers: { "content-type": "application/json" }, body: '{"error":{"message":"bad key"}}' }
      )
      const model = modelFor(server, { catalog: { "qwen3-coder": { maxOutputTokens: 8192 } } })
      assert.deepStrictEqual(yield* model.models, [{ id: "qwen3-coder", provider: "openai", maxOutputTokens: 8192 }])
      const error = yield* Effect.flip(model.models)
      assert.strictEqual(error.code, "auth")
    })
  )

  it.scoped("PRV-2 a server that accepts /models and never answers fails discovery after 10 minutes as network", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({ stall: true })
      const listing = yield* Effect.fork(modelFor(server, { maxRetries: 0 }).models)
      yield* TestClock.adjust("10 minutes")
      const error = yield* Effect.flip(Fiber.join(listing))
      assert.strictEqual(error.code, "network")
      assert.include(error.message, `no answer from ${server.baseURL} in time`)
    })
  )

  it.scopedLive("PRV-2 layerConfig reads OPENAI_BASE_URL and OPENAI_API_KEY", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({ body: okBody })
      const config = Layer.setConfigProvider(
        ConfigProvider.fromMap(
          new Map([
            ["OPENAI_BASE_URL", server.baseURL],
            ["OPENAI_API_KEY", "sk-from-env"]
          ])
        )
      )
      const outcome = yield* Effect.flatMap(LanguageModel, (model) => run(model)).pipe(
        Effect.provide(OpenAiCompatible.layerConfig({ providerId: "env" }).pipe(Layer.provide(config)))
      )
      assert.strictEqual(expectComplete(outcome).text, "ok")
      assert.strictEqual(server.requests[0]!.headers.authorization, "Bearer sk-from-env")
    })
  )
})

// ---------------------------------------------------------------------------------------------

/** Runs the fiber to its end, moving the TestClock to each sleep it waits on; returns those sleeps. */
const driveClock = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
  Effect.gen(function* () {
    const slept: Array<number> = []
    while (true) {
      const exit = yield* Fiber.poll(fiber)
      if (Option.isSome(exit)) return { exit: exit.value, slept }
      const sleeps = yield* TestClock.sleeps()
      if (Chunk.isNonEmpty(sleeps)) {
        const now = yield* Clock.currentTimeMillis
        const wake = Chunk.headNonEmpty(sleeps)
        slept.push(wake - now)
        yield* TestClock.setTime(wake)
      } else {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
      }
    }
  })

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      server.close(() => resolve(port))
    })
  })
