// Recorded and reconstructed transcripts (test/fixtures/sse, see its README in ../shared)

import { readdirSync } from "node:fs"
import type { ProviderErrorCode } from "@alisio/domain/Errors"
import type { FinishReason } from "@alisio/domain/LanguageModel"
import type { Usage } from "@alisio/domain/Usage"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  expectComplete,
  expectFailure,
  fixture,
  fixtureDir,
  modelFor,
  type Outcome,
  run,
  splits
} from "./support/openAiCompatible.js"
import { assemble } from "./support/parts.js"
import * as SseServer from "./support/SseServer.js"

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
