// Requests, discovery, configuration

import { ToolCallId } from "@alisio/domain/Ids"
import { LanguageModel, type ModelRequest } from "@alisio/domain/LanguageModel"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { chunk, done, expectComplete, fixture, modelFor, request, run, sse } from "./support/openAiCompatible.js"
import * as SseServer from "./support/SseServer.js"

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

  it.scopedLive(
    "PRV-2 a baseURL with a query (Azure's ?api-version=) keeps it after the path, with or without a slash",
    () =>
      Effect.gen(function* () {
        const server = yield* SseServer.sequence(
          { headers: { "content-type": "application/json" }, body: JSON.stringify({ object: "list", data: [] }) },
          { body: okBody },
          { body: okBody }
        )
        yield* modelFor(server, { baseURL: `${server.baseURL}?api-version=2024-10-21` }).models
        expectComplete(
          yield* run(modelFor(server, { baseURL: `${server.baseURL}/?api-version=2024-10-21#x` }), request())
        )
        expectComplete(yield* run(modelFor(server, { baseURL: `${server.baseURL}/` }), request()))
        assert.deepStrictEqual(
          server.requests.map((recorded) => recorded.url),
          ["/v1/models?api-version=2024-10-21", "/v1/chat/completions?api-version=2024-10-21", "/v1/chat/completions"]
        )
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

  it.scoped("PRV-2 a server that accepts /models and never answers fails discovery after a minute, not retried", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({ stall: true })
      // Default retries: the silence is not asked again (a run waits on discovery before its clocks start).
      const listing = yield* Effect.fork(modelFor(server).models)
      while (server.requests.length === 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
      yield* TestClock.adjust("59 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(listing)))
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(Fiber.join(listing))
      assert.strictEqual(error.code, "network")
      assert.include(error.message, `${server.baseURL} accepted the connection but sent no answer within 1m`)
      assert.strictEqual(server.requests.length, 1)
    })
  )

  it.effect("PRV-2 a baseURL that is no http(s) address fails at once, not retried, naming where it is set", () =>
    Effect.gen(function* () {
      for (const baseURL of ["not a url", "ftp://127.0.0.1/v1", "http://", "http://127.0.0.1:99999/v1"]) {
        const model = OpenAiCompatible.make({ baseURL })
        const outcome = yield* run(model)
        assert.deepStrictEqual(outcome.parts, [], "no retry was announced")
        assert.strictEqual(outcome.error?.code, "bad_request")
        assert.strictEqual(
          outcome.error?.message,
          `The provider's address is not usable: ${baseURL} is not an http:// or https:// address; set OPENAI_BASE_URL or providers.openai.baseURL to the server's API address, e.g. http://127.0.0.1:8080/v1`
        )
        const listed = yield* Effect.flip(OpenAiCompatible.make({ baseURL, providerId: "work" }).models)
        assert.include(listed.message, "set providers.work.baseURL to the server's API address")
      }
    })
  )

  it.scopedLive("PRV-2 TL-8 a baseURL with a user name or password fails at once, never quoting the password", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({ body: sse(chunk({ content: "hi" }, "stop"), done) })
      const bare = new URL(server.baseURL)
      const baseURL = `http://alice:s3cret-pass@${bare.host}${bare.pathname}`
      const outcome = yield* run(OpenAiCompatible.make({ baseURL }))
      assert.deepStrictEqual(outcome.parts, [], "no retry was announced")
      assert.strictEqual(outcome.error?.code, "bad_request")
      assert.strictEqual(
        outcome.error?.message,
        `The provider's address is not usable: ${server.baseURL} was given with a user name or password in it, which are never sent from an address; remove them from OPENAI_BASE_URL or providers.openai.baseURL and give the key in OPENAI_API_KEY`
      )
      const listed = yield* Effect.flip(OpenAiCompatible.make({ baseURL, providerId: "work" }).models)
      assert.notInclude(listed.message, "s3cret")
      assert.include(listed.message, "give the key in providers.work.apiKeyEnv or apiKey")
      assert.strictEqual(server.requests.length, 0)
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
