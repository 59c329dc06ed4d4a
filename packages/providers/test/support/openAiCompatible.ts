// What the OpenAiCompatible tests share: the recorded transcripts, a request, the adapter pointed at
// a scripted server, a run collected with its error, the checks of a complete or failed stream,
// Chat Completions chunks to build SSE bodies from, a JSON answer, a body replayed whole and split;
// and a TestClock driver for the waits of retries.

import { readFileSync } from "node:fs"
import { ProviderError, type ProviderErrorCode } from "@alisio/domain/Errors"
import type { LanguageModelService, ModelRequest, ResponsePart } from "@alisio/domain/LanguageModel"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import { assert } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { type Assembled, assemble, contractViolations } from "./parts.js"
import * as SseServer from "./SseServer.js"

export const fixtureDir = new URL("../fixtures/sse/", import.meta.url)
export const fixture = (file: string): Buffer => readFileSync(new URL(file, fixtureDir))

const user = (text: string) => ({ role: "user" as const, content: [{ _tag: "text" as const, text }] })

export const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "gpt-4o",
  messages: [user("hi")],
  tools: [],
  maxOutputTokens: 1024,
  ...over
})

export const modelFor = (server: SseServer.SseServer, options: Partial<OpenAiCompatible.Options> = {}) =>
  OpenAiCompatible.make({
    baseURL: server.baseURL,
    apiKey: Redacted.make("sk-test"),
    retry: { baseDelayMs: 1, maxDelayMs: 4 },
    ...options
  })

export interface Outcome {
  readonly parts: ReadonlyArray<ResponsePart>
  readonly error: ProviderError | undefined
}

/** Every part the stream emitted, and the error it ended with, if any. */
export const run = (model: LanguageModelService, req: ModelRequest = request()): Effect.Effect<Outcome> =>
  model.stream(req).pipe(
    Stream.either,
    Stream.runCollect,
    Effect.map((chunk) => {
      const items = Chunk.toReadonlyArray(chunk)
      const parts = items.flatMap((item) => (Either.isRight(item) ? [item.right] : []))
      const errors = items.flatMap((item) => (Either.isLeft(item) ? [item.left] : []))
      return { parts, error: errors[0] as ProviderError | undefined }
    })
  )

export const expectComplete = (outcome: Outcome): Assembled => {
  assert.isUndefined(outcome.error, outcome.error?.message)
  assert.deepStrictEqual(contractViolations(outcome.parts, true), [])
  return assemble(outcome.parts)
}

export const expectFailure = (outcome: Outcome, code: ProviderErrorCode): ProviderError => {
  assert.deepStrictEqual(contractViolations(outcome.parts, false), [])
  assert.isFalse(
    outcome.parts.some((part) => part._tag === "Finish"),
    "a failed stream has no Finish"
  )
  assert.instanceOf(outcome.error, ProviderError)
  assert.strictEqual(outcome.error!.code, code, outcome.error!.message)
  return outcome.error!
}

/** Runs the fiber to its end, moving the TestClock to each sleep it waits on; returns those sleeps. */
export const driveClock = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
  Effect.gen(function* () {
    const slept: Array<number> = []
    while (true) {
      const exit = yield* Fiber.poll(fiber)
      if (Option.isSome(exit)) return { exit: exit.value, slept }
      const sleeps = yield* TestClock.sleeps()
      if (Chunk.isNonEmpty(sleeps)) {
        const now = yield* Clock.currentTimeMillis
        const wake = Chunk.headNonEmpty(sleeps)
        slept.push(wake - now)
        yield* TestClock.setTime(wake)
      } else {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
      }
    }
  })

/** The random splits every recorded or built body is replayed in besides whole. */
export const splits = [
  { seed: 1, maxPiece: 7 },
  { seed: 2, maxPiece: 61 },
  { seed: 3, maxPiece: 509 }
]

/** An SSE body: objects as `data:` events, strings as they are. */
export const sse = (...events: ReadonlyArray<unknown>): string =>
  events.map((event) => (typeof event === "string" ? event : `data: ${JSON.stringify(event)}\n\n`)).join("")

/** A Chat Completions chunk with one choice. */
export const chunk = (
  delta: Record<string, unknown>,
  finishReason: string | null = null,
  extra: Record<string, unknown> = {}
) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finishReason }],
  ...extra
})

export const done = "data: [DONE]\n\n"

/** A JSON answer with `status`: objects as JSON, strings as they are. */
export const jsonReply = (status: number, body: unknown, headers: Record<string, string> = {}): SseServer.Reply => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body)
})

/** Serves `body` whole and split three ways; every replay must assemble to the same result. */
export const replayEverywhere = (body: string | Uint8Array, options: Partial<OpenAiCompatible.Options> = {}) =>
  Effect.gen(function* () {
    const server = yield* SseServer.sequence({ body }, ...splits.map((pieces) => ({ body, pieces })))
    const model = modelFor(server, options)
    const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8")
    // Ids the adapter invents differ between replays; only their presence matters.
    const stable = (got: Assembled): Assembled => ({
      ...got,
      calls: got.calls.map((call) => (text.includes(`"${call.id}"`) ? call : { ...call, id: "<generated>" }))
    })
    const first = expectComplete(yield* run(model))
    for (const pieces of splits) {
      assert.deepStrictEqual(stable(expectComplete(yield* run(model))), stable(first), `split with seed ${pieces.seed}`)
    }
    return first
  })
