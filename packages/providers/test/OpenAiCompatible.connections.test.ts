// Connections: kept for the next request, released after [DONE], aborted on interruption

import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { chunk, done, driveClock, expectComplete, modelFor, request, run, sse } from "./support/openAiCompatible.js"
import * as SseServer from "./support/SseServer.js"

describe("OpenAiCompatible connections", () => {
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

  it.scoped(
    "PRV-2 a finish without [DONE] on a connection left open completes after a bounded grace, not as a stall",
    () =>
      Effect.gen(function* () {
        const server = yield* SseServer.always({
          body: sse(chunk({ content: "whole answer" }), chunk({}, "stop"), {
            ...chunk({}),
            choices: [],
            usage: { prompt_tokens: 3, completion_tokens: 2 }
          }),
          hang: true
        })
        const fiber = yield* Effect.fork(run(modelFor(server)))
        const { exit, slept } = yield* driveClock(fiber)
        assert.isTrue(Exit.isSuccess(exit))
        if (Exit.isSuccess(exit)) {
          const answer = expectComplete(exit.value)
          assert.strictEqual(answer.text, "whole answer")
          assert.strictEqual(answer.finish?.reason, "stop")
          assert.deepInclude(answer.finish?.usage, { inputTokens: 3, outputTokens: 2 })
        }
        assert.deepStrictEqual(slept, [5000], "waits a bounded grace for [DONE] or the end of the body")
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
