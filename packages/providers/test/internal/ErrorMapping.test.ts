import { assert, describe, it } from "@effect/vitest"
import { contextExceeded, fromStatus, fromStreamPayload } from "../../src/internal/ErrorMapping.js"

describe("ErrorMapping", () => {
  it("CTX-1 recognises the context-length refusals of every server family, and the window they name", () => {
    const cases: ReadonlyArray<readonly [string | undefined, string, number | undefined]> = [
      // OpenAI Chat Completions, Groq
      [
        "context_length_exceeded",
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        128000
      ],
      // OpenAI Responses
      ["context_length_exceeded", "Your input exceeds the context window of this model.", undefined],
      // vLLM (older and newer words)
      [
        "BadRequestError",
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).",
        4096
      ],
      // llama.cpp, legacy and current
      [
        "invalid_request_error",
        "the request exceeds the available context size. try increasing the context size or enable context shift",
        undefined
      ],
      ["exceed_context_size_error", "the request exceeds the available context size, try increasing it", undefined],
      // Ollama
      [undefined, "the input length exceeds the context length", undefined],
      // LM Studio
      [undefined, "context length exceeded", undefined],
      // Mistral
      [
        "invalid_request_message_order",
        "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
        32768
      ],
      // OpenRouter
      [
        undefined,
        "This endpoint's maximum context length is 200000 tokens. However, you requested about 210000 tokens",
        200000
      ],
      // Anthropic-compatible, Gemini
      ["invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", undefined],
      [undefined, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", undefined]
    ]
    for (const [code, message, window] of cases) {
      assert.deepStrictEqual(contextExceeded(code, message), { window }, message)
    }
    assert.deepStrictEqual(contextExceeded("exceed_context_size_error", "too big", { n_ctx: 8192 }), { window: 8192 })
    for (const [code, message] of [
      ["rate_limit_exceeded", "Rate limit reached for gpt-4o on tokens per min (TPM)"],
      ["invalid_request_error", "max_tokens is too large: 200000. This model supports at most 16384 completion tokens"],
      [undefined, "temperature must be non-negative"]
    ] as const) {
      assert.isUndefined(contextExceeded(code, message), message)
    }
  })

  it("CTX-1 an HTTP refusal for length is context_length_exceeded and not retryable; a 429 never is", () => {
    const refused = fromStatus(
      "openai",
      400,
      { message: "This model's maximum context length is 8192 tokens.", code: "context_length_exceeded" },
      undefined,
      0
    )
    assert.strictEqual(refused.error.code, "context_length_exceeded")
    assert.strictEqual(refused.error.contextWindow, 8192)
    assert.isFalse(refused.retryable)
    const ollama = fromStatus("ollama", 500, { message: "the input length exceeds the context length" }, undefined, 0)
    assert.strictEqual(ollama.error.code, "context_length_exceeded")
    assert.isFalse(ollama.retryable)
    const limited = fromStatus("openai", 429, { message: "context length exceeded for this tier" }, undefined, 0)
    assert.strictEqual(limited.error.code, "rate_limited")
  })

  it("CTX-1 a refusal inside a 200 stream (llama.cpp's error field, LM Studio's error event) is context_length_exceeded", () => {
    const llama = fromStreamPayload("llama", {
      code: 400,
      message:
        "the request exceeds the available context size. try increasing the context size or enable context shift",
      type: "invalid_request_error"
    })
    assert.strictEqual(llama.error.code, "context_length_exceeded")
    assert.isFalse(llama.retryable)
    const lmStudio = fromStreamPayload("lmstudio", { error: { message: "context length exceeded" } })
    assert.strictEqual(lmStudio.error.code, "context_length_exceeded")
  })
})
