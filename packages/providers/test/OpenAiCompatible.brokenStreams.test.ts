// Streams that break: cut short, malformed, or carrying an error inside a 200

import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  chunk,
  done,
  expectComplete,
  expectFailure,
  jsonReply,
  modelFor,
  run,
  sse
} from "./support/openAiCompatible.js"
import { assemble } from "./support/parts.js"
import * as SseServer from "./support/SseServer.js"

describe("OpenAiCompatible broken streams", () => {
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

  it.scopedLive("PRV-2 a body cut inside its [DONE] after the finish still gives the whole answer", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({
        body: `${sse(chunk({ content: "all of it" }), chunk({}, "stop"))}data: [DON`
      })
      const answer = expectComplete(yield* run(modelFor(server)))
      assert.strictEqual(answer.text, "all of it")
      assert.strictEqual(answer.finish?.reason, "stop")
    })
  )

  it.scopedLive("PRV-2 tool-call arguments nested past the stack fail as invalid_response, streamed or whole", () =>
    Effect.gen(function* () {
      const deep = `${'{"a":'.repeat(200_000)}1${"}".repeat(200_000)}`
      const call = `{"id":"c1","type":"function","function":{"name":"bash","arguments":${deep}}}`
      const server = yield* SseServer.sequence(
        { body: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,${call.slice(1)}]}}]}\n\n${done}` },
        {
          headers: { "content-type": "application/json" },
          body: `{"choices":[{"index":0,"message":{"role":"assistant","tool_calls":[${call}]},"finish_reason":"tool_calls"}]}`
        }
      )
      const model = modelFor(server)
      for (const outcome of [yield* run(model), yield* run(model)]) {
        assert.include(
          expectFailure(outcome, "invalid_response").message,
          "the answer could not be read (Maximum call stack size exceeded)"
        )
        assert.deepStrictEqual(assemble(outcome.parts).calls, [])
      }
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
})
