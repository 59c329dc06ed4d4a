// What a server says reaches the person's terminal and the store only as one line of plain text:
// error bodies (a proxy's HTML page, escape sequences, line breaks) and listed model ids.

import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { chunk, expectFailure, jsonReply, modelFor, run, sse } from "./support/openAiCompatible.js"
import * as SseServer from "./support/SseServer.js"

// biome-ignore lint/suspicious/noControlCharactersInRegex: what must never be in a message
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202e]/

describe("OpenAiCompatible hostile words", () => {
  it.scopedLive("PRV-2 error bodies become one plain line: a web page by its title, escapes and breaks removed", () =>
    Effect.gen(function* () {
      const cloudflare = `<!DOCTYPE html>\n<html>\n<head>\n<title>example.com | 502: Bad gateway</title>\n<style>${"body{}\n".repeat(500)}</style></head>\n<body>...</body></html>`
      const server = yield* SseServer.sequence(
        { status: 502, headers: { "content-type": "text/html" }, body: cloudflare },
        {
          status: 401,
          headers: { "content-type": "text/plain" },
          body: "bad key\n\u001b]0;pwned\u0007\u001b[2J\u001b[Hfake prompt $ \u202erm -rf"
        },
        { status: 500, headers: { "content-type": "text/plain" }, body: "e".repeat(5000) },
        jsonReply(400, { error: { message: "line one\nline two\u001b[31m red" } }),
        { body: sse(chunk({ content: "ok" }), { error: { message: "boom\r\n\u001b[2Jinside" } }) },
        { status: 200, headers: { "content-type": "application/json" }, body: '{"nothing": "\u001b[2Jhere"}' }
      )
      const model = modelFor(server, { maxRetries: 0 })
      const page = expectFailure(yield* run(model), "server").message
      assert.strictEqual(page, 'The server failed (HTTP 502): a web page ("example.com | 502: Bad gateway")')
      const escapes = expectFailure(yield* run(model), "auth").message
      assert.strictEqual(
        escapes,
        "The server refused the credentials (HTTP 401): bad key fake prompt $ rm -rf; check the key in OPENAI_API_KEY (or providers.openai.apiKey), or run `alisio connect openai` again."
      )
      const long = expectFailure(yield* run(model), "server").message
      assert.strictEqual(long, `The server failed (HTTP 500): ${"e".repeat(300)}…`)
      const json = expectFailure(yield* run(model), "bad_request").message
      assert.strictEqual(json, "The server rejected the request (HTTP 400): line one line two red")
      const inStream = expectFailure(yield* run(model), "server").message
      assert.strictEqual(inStream, "The server failed: boom inside")
      const notStream = expectFailure(yield* run(model), "invalid_response").message
      assert.strictEqual(
        notStream,
        'The server sent an invalid response: expected an event stream, got {"nothing": "here"}'
      )
      for (const message of [page, escapes, long, json, inStream, notStream]) assert.notMatch(message, UNSAFE)
    })
  )

  it.scopedLive("PRV-2 discovery skips ids that are no model name; a junk list is reported as plain text", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        jsonReply(200, {
          data: [
            { id: "evil\u001b[2J\u001b]0;pwn\u0007model" },
            { id: "two\nlines" },
            { id: "\u202eenilno" },
            { id: "m".repeat(100_000) },
            { id: "qwen3-coder" },
            null,
            { id: 7 }
          ]
        }),
        // Together AI lists its models as a bare array.
        jsonReply(200, [{ id: "meta-llama/Llama-3.3-70B-Instruct-Turbo", object: "model" }]),
        { status: 200, headers: { "content-type": "text/plain" }, body: "not json \u001b[2J at all" }
      )
      const model = modelFor(server)
      assert.deepStrictEqual(
        (yield* model.models).map((info) => info.id),
        ["qwen3-coder"]
      )
      assert.deepStrictEqual(
        (yield* model.models).map((info) => info.id),
        ["meta-llama/Llama-3.3-70B-Instruct-Turbo"]
      )
      const junk = yield* Effect.flip(model.models)
      assert.strictEqual(
        junk.message,
        "The server sent an invalid response: expected the list of models as JSON, got not json at all"
      )
    })
  )

  it.scopedLive("PRV-2 a server's words of megabytes are quoted only as far as their first 2 000 characters", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        { body: sse(chunk({ content: "ok" }), { error: { message: `boom ${"y".repeat(5 * 1024 * 1024)}` } }) },
        jsonReply(400, { error: { message: `bad ${"z".repeat(60_000)}` } })
      )
      const model = modelFor(server, { maxRetries: 0 })
      const inStream = expectFailure(yield* run(model), "server").message
      assert.strictEqual(inStream, `The server failed: boom ${"y".repeat(1995)}…`)
      const status = expectFailure(yield* run(model), "bad_request").message
      assert.strictEqual(status, `The server rejected the request (HTTP 400): bad ${"z".repeat(1996)}…`)
    })
  )
})
