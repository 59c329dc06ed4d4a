// SSE framing: line ends, `data:` spacing, keep-alive comments, split characters, the final [DONE]

import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import {
  chunk,
  done,
  expectComplete,
  fixture,
  modelFor,
  replayEverywhere,
  request,
  run,
  sse
} from "./support/openAiCompatible.js"
import { assemble } from "./support/parts.js"
import * as SseServer from "./support/SseServer.js"

describe("OpenAiCompatible SSE framing", () => {
  it.scopedLive("PRV-2 parses CRLF and bare-CR framing like LF framing", () =>
    Effect.gen(function* () {
      const lf = fixture("openai-chat-tool-calls-parallel.sse").toString("utf8")
      const expected = yield* replayEverywhere(lf)
      assert.deepStrictEqual(yield* replayEverywhere(lf.replaceAll("\n", "\r\n")), expected)
      assert.deepStrictEqual(yield* replayEverywhere(lf.replaceAll("\n", "\r")), expected)
    })
  )

  it.scopedLive("PRV-2 parses `data:` without a space, keep-alive comments and empty lines", () =>
    Effect.gen(function* () {
      const original = fixture("openai-chat-text.sse").toString("utf8")
      const expected = yield* replayEverywhere(original)
      const noSpace = original.replaceAll("data: ", "data:")
      assert.deepStrictEqual(yield* replayEverywhere(noSpace), expected)
      const pinged = `: ping\n\n\n\n${original.replaceAll("\n\n", "\n\n: ping\n\n\n")}`
      assert.deepStrictEqual(yield* replayEverywhere(pinged), expected)
    })
  )

  it.scopedLive("PRV-2 keep-alive comments are not progress: no empty chunk is ever emitted", () =>
    Effect.gen(function* () {
      const body =
        ": OPENROUTER PROCESSING\n\n".repeat(20) + sse(chunk({ content: "hi" }), ": ping\n\n", chunk({}, "stop"), done)
      const server = yield* SseServer.always({ body, pieces: { seed: 9, maxPiece: 5 } })
      const chunks = yield* modelFor(server).stream(request()).pipe(Stream.chunks, Stream.runCollect)
      const sizes = Chunk.toReadonlyArray(chunks).map(Chunk.size)
      assert.isTrue(
        sizes.every((size) => size > 0),
        `chunk sizes ${sizes.join(",")}`
      )
      assert.deepStrictEqual(assemble(Chunk.toReadonlyArray(chunks).flatMap(Chunk.toReadonlyArray)).text, "hi")
    })
  )

  it.scopedLive("PRV-2 reassembles UTF-8 characters split across reads", () =>
    Effect.gen(function* () {
      const words = ["¡Olá, ", "世界", "! 🌍", " — ñandú"]
      const body = Buffer.from(sse(...words.map((text) => chunk({ content: text })), chunk({}, "stop"), done), "utf8")
      const server = yield* SseServer.always({ body, pieces: { seed: 4, maxPiece: 2 } })
      const got = expectComplete(yield* run(modelFor(server)))
      assert.strictEqual(got.text, words.join(""))
    })
  )

  it.scopedLive("PRV-2 accepts the final [DONE] without its blank line, and a finish without [DONE]", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        { body: `${sse(chunk({ content: "a" }), chunk({}, "stop"))}data: [DONE]` },
        { body: sse(chunk({ content: "b" }), chunk({}, "stop")) }
      )
      const model = modelFor(server)
      assert.strictEqual(expectComplete(yield* run(model)).text, "a")
      assert.strictEqual(expectComplete(yield* run(model)).text, "b")
    })
  )
})
