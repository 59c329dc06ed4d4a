// Bodies without end: a server that writes as fast as it can until the client goes away. Each read
// is bounded, so the adapter fails with a typed error instead of exhausting memory or the longest
// string V8 can make (`RangeError: Invalid string length`, an internal error to the person).

import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { ProviderError } from "@alisio/domain/Errors"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { chunk, request } from "./support/openAiCompatible.js"

/** A server answering every request with `status`, `head` and then `piece` over and over. */
const endless = (status: number, contentType: string, head: string, piece: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly baseURL: string; readonly server: ReturnType<typeof createServer> }>((resume) => {
      const block = Buffer.from(piece.repeat(Math.max(1, Math.floor(65_536 / piece.length))))
      const server = createServer((req, res) => {
        req.resume()
        res.writeHead(status, { "content-type": contentType })
        res.write(head)
        const pump = () => {
          while (!res.destroyed && res.write(block)) {
            // until the socket's buffer is full
          }
          if (!res.destroyed) res.once("drain", pump)
        }
        pump()
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server }))
      )
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const modelAt = (baseURL: string) => OpenAiCompatible.make({ baseURL, maxRetries: 0 })

/** Runs the stream counting what arrived, without keeping the parts (they may be 100 MiB of text). */
const drain = (baseURL: string) =>
  Effect.gen(function* () {
    let text = 0
    const error = yield* modelAt(baseURL)
      .stream(request())
      .pipe(
        Stream.runForEach((part) =>
          Effect.sync(() => {
            if (part._tag === "TextDelta") text += part.text.length
          })
        ),
        Effect.flip
      )
    assert.instanceOf(error, ProviderError)
    return { error: error as ProviderError, text }
  })

describe("OpenAiCompatible endless bodies", () => {
  it.scopedLive("PRV-2 an event-stream line that never ends fails as invalid_response at the answer's bound", () =>
    Effect.gen(function* () {
      const { baseURL } = yield* endless(
        200,
        "text/event-stream",
        'data: {"choices":[{"index":0,"delta":{"content":"',
        "x"
      )
      const { error, text } = yield* drain(baseURL)
      assert.strictEqual(error.code, "invalid_response")
      assert.include(error.message, "the answer passed 128 MiB and was stopped there")
      assert.strictEqual(text, 0)
    })
  )

  it.scopedLive("PRV-2 text deltas without end fail as invalid_response after the parts that arrived", () =>
    Effect.gen(function* () {
      const { baseURL } = yield* endless(
        200,
        "text/event-stream",
        "",
        `data: ${JSON.stringify(chunk({ content: "y".repeat(1000) }))}\n\n`
      )
      const { error, text } = yield* drain(baseURL)
      assert.strictEqual(error.code, "invalid_response")
      assert.include(error.message, "128 MiB")
      assert.isAbove(text, 100 * 1024 * 1024)
    })
  )

  it.scopedLive("PRV-2 a completion sent whole as JSON without end fails as invalid_response", () =>
    Effect.gen(function* () {
      const { baseURL } = yield* endless(200, "application/json", '{"choices":[{"index":0,"message":{"content":"', "z")
      const { error } = yield* drain(baseURL)
      assert.strictEqual(error.code, "invalid_response")
      assert.include(error.message, "128 MiB")
    })
  )

  it.scopedLive("PRV-2 an error body without end is read only as far as its first words", () =>
    Effect.gen(function* () {
      const { baseURL } = yield* endless(500, "text/plain", "upstream exploded ", "e")
      const { error } = yield* drain(baseURL)
      assert.strictEqual(error.code, "server")
      assert.include(error.message, "(HTTP 500): upstream exploded e")
    })
  )

  it.scopedLive("PRV-2 a list of models without end fails as invalid_response", () =>
    Effect.gen(function* () {
      const { baseURL } = yield* endless(200, "application/json", '{"data":[{"id":"', "m")
      const error = yield* Effect.flip(modelAt(baseURL).models)
      assert.strictEqual(error.code, "invalid_response")
      assert.include(error.message, "the list of models passed 32 MiB and was stopped there")
    })
  )
})
