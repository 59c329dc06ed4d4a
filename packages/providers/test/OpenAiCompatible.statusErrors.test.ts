// Error statuses: what each server's refusal becomes, in its own words

import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
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

describe("OpenAiCompatible error statuses", () => {
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

  it.scopedLive("PRV-2 a refused key (401, 403, none sent) ends in one line naming where the key is set", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        jsonReply(401, { error: { message: "Incorrect API key provided", code: "invalid_api_key" } }),
        jsonReply(403, { error: { message: "Project does not have access to model gpt-4o" } }),
        jsonReply(401, { error: { message: "Missing bearer authentication" } }),
        jsonReply(401, { error: { message: "invalid key" } })
      )
      assert.strictEqual(
        expectFailure(yield* run(modelFor(server)), "auth").message,
        "The server refused the credentials (HTTP 401): Incorrect API key provided; check the key in OPENAI_API_KEY (or providers.openai.apiKey), or run `alisio connect openai` again."
      )
      assert.strictEqual(
        expectFailure(yield* run(modelFor(server)), "auth").message,
        "The server refused the credentials (HTTP 403): Project does not have access to model gpt-4o; the key may lack access to this model or endpoint: check it in OPENAI_API_KEY (or providers.openai.apiKey)."
      )
      const keyless = OpenAiCompatible.make({ baseURL: server.baseURL, providerId: "work" })
      assert.strictEqual(
        expectFailure(yield* run(keyless), "auth").message,
        "The server refused the credentials (HTTP 401): Missing bearer authentication; no key was sent: set providers.work.apiKeyEnv or apiKey, or run `alisio connect work`."
      )
      const listed = yield* Effect.flip(modelFor(server, { providerId: "work" }).models)
      assert.strictEqual(
        listed.message,
        "The server refused the credentials (HTTP 401): invalid key; check the key in providers.work.apiKeyEnv or apiKey, or run `alisio connect work` again."
      )
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
})

describe("OpenAiCompatible redirects", () => {
  const answer = { body: sse(chunk({ content: "moved" }), chunk({}, "stop"), done) }

  it.scopedLive(
    "PRV-2 TL-8 a redirect is followed on the same origin with the request whole; to another address the key and headers never go",
    () =>
      Effect.gen(function* () {
        const elsewhere = yield* SseServer.always(answer)
        const server = yield* SseServer.make((recorded, n) =>
          n === 0
            ? { status: 307, headers: { location: "/v2/chat/completions" } }
            : recorded.url.startsWith("/v2")
              ? answer
              : { status: 302, headers: { location: `${elsewhere.baseURL}/chat/completions` } }
        )
        const model = modelFor(server, { headers: { "api-key": "azure-secret" } })
        assert.strictEqual(expectComplete(yield* run(model)).text, "moved")
        const [first, followed] = server.requests
        assert.strictEqual(followed?.method, "POST")
        assert.deepStrictEqual(followed?.body, first?.body, "the body goes with it")
        assert.strictEqual(followed?.headers["api-key"], "azure-secret")

        const refused = expectFailure(yield* run(model), "bad_request")
        assert.include(
          refused.message,
          `the server redirected to ${new URL(elsewhere.baseURL).origin}, another address`
        )
        assert.include(refused.message, "set the provider's baseURL to the new address")
        assert.strictEqual(elsewhere.requests.length, 0, "nothing, no key, reached the other address")
      })
  )

  it.scopedLive("PRV-2 a redirect loop stops after a few hops, naming it", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({ status: 308, headers: { location: "/v1/chat/completions" } })
      const error = expectFailure(yield* run(modelFor(server)), "bad_request")
      assert.include(error.message, "the server redirected more than 5 times")
      assert.strictEqual(server.requests.length, 6)
    })
  )
})
