// Answers that are not an event stream, or are one under another label: a whole completion, a web
// page where the API was expected, an event stream labelled JSON

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
import * as SseServer from "./support/SseServer.js"

describe("OpenAiCompatible plain bodies", () => {
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

  it.scopedLive("PRV-2 reads an event stream mislabelled as application/json", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({
        headers: { "content-type": "application/json" },
        body: sse(chunk({ content: "labelled wrong" }), chunk({}, "stop"), done)
      })
      assert.strictEqual(expectComplete(yield* run(modelFor(server))).text, "labelled wrong")
    })
  )

  it.scopedLive(
    "PRV-2 a web page or a 404 where the API was expected names the baseURL to check, and is not retried",
    () =>
      Effect.gen(function* () {
        const page = (title: string): SseServer.Reply => ({
          headers: { "content-type": "text/html; charset=utf-8" },
          body: `<!doctype html><html><head><title>${title}</title></head><body>${"x".repeat(5000)}</body></html>`
        })
        const server = yield* SseServer.sequence(
          // A proxy's sign-in page, with escape sequences in its title.
          page("Sign in \u001b[2J\u001b]52;c;eA==\u0007to Corp Proxy"),
          // A web app where the API was expected (the address lacks /v1): its page, then its 404s.
          page("Open WebUI"),
          { status: 404, headers: { "content-type": "text/html" }, body: "<html><body>Cannot POST</body></html>" },
          jsonReply(404, { detail: "Not Found" })
        )
        const signIn = expectFailure(yield* run(modelFor(server)), "invalid_response").message
        assert.strictEqual(
          signIn,
          `The server sent an invalid response: expected an event stream, got a web page ("Sign in to Corp Proxy"): ` +
            `a sign-in page of a proxy, or no API at that address; check the provider's baseURL, ${server.baseURL}.`
        )
        const root = server.baseURL.replace(/\/v1$/, "")
        const webApp = modelFor(server, { baseURL: root })
        assert.include(
          expectFailure(yield* run(webApp), "invalid_response").message,
          `got a web page ("Open WebUI"): a sign-in page of a proxy, or no API at that address; ` +
            `check the provider's baseURL, ${root} (an OpenAI-compatible API's address usually ends in /v1).`
        )
        assert.strictEqual(
          expectFailure(yield* run(webApp), "bad_request").message,
          `The server rejected the request (HTTP 404): not found (${root}/chat/completions); check the provider's baseURL, ${root} (an OpenAI-compatible API's address usually ends in /v1)`
        )
        assert.include(
          expectFailure(yield* run(modelFor(server, { api: "responses" })), "bad_request").message,
          `(HTTP 404): Not Found (${server.baseURL}/responses); check the provider's baseURL, ${server.baseURL}, or set \`api: chat\` if the server has no Responses API`
        )
        assert.strictEqual(server.requests.length, 4, "none of them is retried")

        // The list of models, asked of the same web app.
        const app = yield* SseServer.always(page("Open WebUI"))
        const listed = yield* Effect.flip(modelFor(app, { baseURL: app.baseURL.replace(/\/v1$/, "") }).models)
        assert.strictEqual(listed.code, "invalid_response")
        assert.include(listed.message, `expected the list of models, got a web page ("Open WebUI"): a sign-in page`)
        const text = yield* SseServer.always({ headers: { "content-type": "text/plain" }, body: "ok" })
        assert.include(
          (yield* Effect.flip(modelFor(text).models)).message,
          "expected the list of models as JSON, got ok"
        )
      })
  )

  it.scopedLive("PRV-2 a 200 body with no event in it is named for what it is, with the baseURL to check", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        { headers: { "content-type": "text/plain" }, body: "OK\n" },
        { headers: { "content-type": "text/event-stream" }, body: ": keep-alive\n\n" }
      )
      const model = modelFor(server)
      assert.strictEqual(
        expectFailure(yield* run(model), "invalid_response").message,
        `The server sent an invalid response: expected an event stream, got OK; check the provider's baseURL, ${server.baseURL}`
      )
      // An event stream that ends early is still that.
      assert.include(
        expectFailure(yield* run(model), "invalid_response").message,
        "the stream ended before the response was complete"
      )
    })
  )
})
