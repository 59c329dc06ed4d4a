// TL-8: a provider error that echoes the key is redacted before anyone prints or stores it.

import type { ProviderError } from "@alisio/domain/Errors"
import type { ModelError } from "@alisio/domain/LanguageModel"
import { redactSecrets } from "@alisio/providers/internal/ErrorMapping"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as SseServer from "./support/SseServer.js"

const key = "live-key-0123456789abcdef"

const echoingKey = (status: number): SseServer.Reply => ({
  status,
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    error: { message: `Incorrect API key provided: ${key}. Also tried sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX.`, code: "x" }
  })
})

const modelFor = (server: SseServer.SseServer) =>
  OpenAiCompatible.make({
    baseURL: server.baseURL,
    apiKey: Redacted.make(key),
    retry: { baseDelayMs: 1, maxDelayMs: 4 },
    maxRetries: 0
  })

const request = {
  model: "gpt-4o",
  messages: [{ role: "user" as const, content: [{ _tag: "text" as const, text: "hi" }] }],
  tools: [],
  maxOutputTokens: 64
}

const providerError = (error: ModelError): ProviderError => {
  if (error._tag !== "ProviderError") throw new Error(`expected a ProviderError, got ${error._tag}`)
  return error
}

describe("redaction", () => {
  it("TL-8 replaces the configured key and anything shaped like a key", () => {
    assert.strictEqual(
      redactSecrets(`bad ${key}, bad sk-ant-api03-abcdefghijklmnop, masked sk-proj-****abcd`, [key]),
      "bad [redacted], bad [redacted], masked sk-proj-****abcd"
    )
    assert.strictEqual(redactSecrets("a short key: abc", ["abc"]), "a short key: abc")
  })

  it.scopedLive("TL-8 a 401 that echoes the key fails without it, streaming and listing models", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always(echoingKey(401))
      const model = modelFor(server)
      const streamed = providerError(yield* Effect.flip(Stream.runDrain(model.stream(request))))
      assert.strictEqual(streamed.code, "auth")
      assert.strictEqual(
        streamed.message,
        "The server refused the credentials (HTTP 401): Incorrect API key provided: [redacted]. Also tried [redacted]; check the key in OPENAI_API_KEY (or providers.openai.apiKey), or run `alisio connect openai` again."
      )
      assert.strictEqual(streamed.status, 401)
      const listed = yield* Effect.flip(model.models)
      assert.notInclude(listed.message, key)
      assert.include(listed.message, "[redacted]")
    })
  )

  it.scopedLive("TL-8 an error inside a 200 stream is redacted too", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always({
        status: 200,
        body: `data: ${JSON.stringify({ error: { message: `upstream rejected ${key}`, code: "invalid_api_key" } })}\n\n`
      })
      const error = providerError(yield* Effect.flip(Stream.runDrain(modelFor(server).stream(request))))
      assert.notInclude(error.message, key)
      assert.include(error.message, "upstream rejected [redacted]")
    })
  )
})
