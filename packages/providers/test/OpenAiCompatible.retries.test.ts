// Retries: what is retried, after how long, and what is not

import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import {
  chunk,
  done,
  driveClock,
  expectComplete,
  expectFailure,
  jsonReply,
  modelFor,
  run,
  sse
} from "./support/openAiCompatible.js"
import { assemble } from "./support/parts.js"
import * as SseServer from "./support/SseServer.js"

describe("OpenAiCompatible retries", () => {
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

  it.scoped(
    "PRV-1 PRV-2 the list of models does not wait out a long Retry-After in silence: it fails at once, saying so",
    () =>
      Effect.gen(function* () {
        const server = yield* SseServer.always(
          jsonReply(
            429,
            { error: { message: "Rate limit reached", code: "rate_limit_exceeded" } },
            { "retry-after": "20" }
          )
        )
        // A run resolving its model goes on without the list (Providers.resolve); before, it waited 40 s.
        const error = yield* Effect.flip(modelFor(server).models)
        assert.strictEqual(error.code, "rate_limited")
        assert.include(error.message, "the server asks to wait 20s before the next request")
        assert.strictEqual(server.requests.length, 1)
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

  it.scopedLive("PRV-2 a Retry-After of years is reported as more than a day, not as a count of hours", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.always(
        jsonReply(429, { error: { message: "slow down" } }, { "retry-after": "99999999999999999999" })
      )
      assert.strictEqual(
        expectFailure(yield* run(modelFor(server)), "rate_limited").message,
        "The server is rate limiting requests (HTTP 429): slow down; the server asks to wait more than a day before the next request."
      )
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
})

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      server.close(() => resolve(port))
    })
  })
