// Failures

import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import {
  chunk,
  done,
  driveClock,
  expectComplete,
  expectFailure,
  modelFor,
  request,
  run,
  sse
} from "./support/openAiCompatible.js"
import { assemble } from "./support/parts.js"
import * as SseServer from "./support/SseServer.js"

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
      const noModel = expectFailure(yield* run(model), "bad_request").message
      assert.include(noModel, "Model llama9 not found")
      assert.notInclude(noModel, "baseURL", "a 404 that names a model is about the model")
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

  it.scoped(
    "PRV-2 a Retry-After beyond the cap is not waited for, and the error says how long the server asked for",
    () =>
      Effect.gen(function* () {
        const server = yield* SseServer.always(
          jsonReply(429, { error: { message: "slow down" } }, { "retry-after": "3600" })
        )
        const fiber = yield* Effect.fork(run(modelFor(server, { retry: {} })))
        const { exit, slept } = yield* driveClock(fiber)
        assert.isTrue(Exit.isSuccess(exit))
        if (Exit.isSuccess(exit)) {
          const error = expectFailure(exit.value, "rate_limited")
          assert.strictEqual(error.retryAfterMs, 3_600_000)
          assert.strictEqual(
            error.message,
            "The server is rate limiting requests (HTTP 429): slow down; the server asks to wait 1h before the next request."
          )
        }
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
      // It was reached: the words say the answer broke off, not that the server is out of reach.
      assert.match(
        expectFailure(outcome, "network").message,
        /^The connection to the server broke while the answer was streaming: \S/
      )
      assert.strictEqual(assemble(outcome.parts).text, "Hel")
      assert.strictEqual(server.requests.length, 2, "retried once before output, never after")
      assert.deepStrictEqual(
        outcome.parts.flatMap((part) => (part._tag === "Retrying" ? [part.reason] : [])),
        ["network"]
      )
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
          `The server sent an invalid response: expected an event stream, got a web page ("Sign in [2J ]52;c;eA== to Corp Proxy"): ` +
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

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      server.close(() => resolve(port))
    })
  })
