// A provider read often completes many parts at once (one network read of an SSE body carries
// dozens of deltas): the runner takes such a chunk whole and emits its deltas together
// (`RunEmitter.emitDeltas`). Each delta must still be its own event, in order, with its own seq,
// seen by every kind of observer, and a `Retrying` part in the chunk keeps its place.

import { LanguageModel, type ResponsePart } from "@alisio/domain/LanguageModel"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as Interaction from "@alisio/runtime/Interaction"
import { RunEvents } from "@alisio/runtime/RunEvents"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { assertContract, baseOptions, collect, ofType, storeLayer, testTools, typesOf } from "./helpers/harness.js"

/** A model that answers every request with the given chunks, each delivered as one pull. */
const chunkedLayer = (chunks: ReadonlyArray<ReadonlyArray<ResponsePart>>) =>
  AgentRuntime.layer({ tools: testTools, interaction: Interaction.layerHeadless({ approveAll: true }) }).pipe(
    Layer.provideMerge(
      Layer.succeed(LanguageModel, {
        provider: "chunked",
        stream: () => Stream.fromChunks(...chunks.map((parts) => Chunk.fromIterable(parts))),
        models: Effect.succeed([])
      })
    ),
    Layer.provideMerge(storeLayer)
  )

const text = (t: string): ResponsePart => ({ _tag: "TextDelta", text: t })
const reasoning = (t: string): ResponsePart => ({ _tag: "ReasoningDelta", text: t })
const stop: ResponsePart = { _tag: "Finish", reason: "stop" }

describe("deltas that arrive together", () => {
  it.effect("EV-2 deltas of one read are each an event, in order, with consecutive seqs, for every observer", () =>
    Effect.gen(function* () {
      const bus = yield* RunEvents
      const listened: Array<string> = []
      yield* bus.listen("text_delta", (event) => {
        if (event.type === "text_delta") listened.push(event.data.text)
      })
      const subscription = yield* bus.subscribe
      const observed: Array<KnownRunEvent> = []
      const events = yield* collect({
        ...baseOptions,
        onEvent: (event) => Effect.sync(() => observed.push(event))
      })
      assertContract(events)
      assert.deepStrictEqual(typesOf(events), [
        "run_started",
        "message",
        "reasoning_delta",
        "text_delta",
        "text_delta",
        "text_delta",
        "turn_completed",
        "message",
        "run_completed"
      ])
      const deltas = events.filter((event) => event.type === "text_delta" || event.type === "reasoning_delta")
      assert.deepStrictEqual(
        deltas.map((event) => (event.data as { readonly text: string }).text),
        ["hmm", "Hel", "lo", " there"]
      )
      assert.strictEqual(ofType(events, "run_completed")[0]!.data.text, "Hello there")
      // The run's own observer, a listener of the type and a bus subscriber see the same events.
      assert.deepStrictEqual(observed, events)
      assert.deepStrictEqual(listened, ["Hel", "lo", " there"])
      const published = Chunk.toReadonlyArray(yield* Queue.takeAll(subscription))
      assert.deepStrictEqual(published, events)
    }).pipe(
      Effect.scoped,
      Effect.provide(
        chunkedLayer([
          [reasoning("hmm"), text("Hel"), text(""), text("lo")],
          [text(" there"), stop]
        ])
      )
    )
  )

  it.effect("LIM-4 a provider's retry in the same read comes before the deltas after it", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.deepStrictEqual(typesOf(events).slice(2, 5), ["request_retry", "text_delta", "text_delta"])
      assert.strictEqual(ofType(events, "run_completed")[0]!.data.text, "ab")
    }).pipe(
      Effect.provide(
        chunkedLayer([
          [
            { _tag: "Retrying", reason: "rate_limited", status: 429, afterMs: 0, attempt: 1, of: 2 },
            text("a"),
            text("b"),
            stop
          ]
        ])
      )
    )
  )

  it.effect("LIM-4 a retry after deltas of the same read fails the run; the deltas before it were emitted", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.deepStrictEqual(
        ofType(events, "text_delta").map((event) => event.data.text),
        ["a"]
      )
      assert.strictEqual(ofType(events, "request_retry").length, 0)
      const failed = ofType(events, "run_failed")[0]
      assert.deepStrictEqual([failed?.data.code, failed?.data.providerCode], ["provider_error", "invalid_response"])
    }).pipe(
      Effect.provide(
        chunkedLayer([
          [text("a"), { _tag: "Retrying", reason: "server_error", afterMs: 0, attempt: 1, of: 2 }, text("b"), stop]
        ])
      )
    )
  )
})
