// How an answer finishes: its usage and its finish reason

import { Usage } from "@alisio/domain/Usage"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { chunk, done, expectComplete, modelFor, replayEverywhere, run, sse } from "./support/openAiCompatible.js"
import * as SseServer from "./support/SseServer.js"

describe("OpenAiCompatible finish and usage", () => {
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

  it.scopedLive(
    "PRV-2 EV-4 usage counts that are no token count (huge, negative, fractional) are dropped, the rest kept",
    () =>
      Effect.gen(function* () {
        const got = yield* replayEverywhere(
          sse(
            chunk({ content: "a" }),
            chunk({}, "stop", {
              usage: {
                prompt_tokens: 1e300,
                completion_tokens: 7,
                total_tokens: -1,
                completion_tokens_details: { reasoning_tokens: 2 ** 64 },
                prompt_tokens_details: { cached_tokens: 1.5 }
              }
            }),
            done
          )
        )
        const usage = got.finish?.usage
        assert.isTrue(Schema.is(Usage)(usage), JSON.stringify(usage))
        assert.deepStrictEqual(usage, { inputTokens: 0, outputTokens: 7 })
      })
  )
})
