// Tool calls as servers stream them: without index, with shared or empty ids, with odd indexes

import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { chunk, done, modelFor, replayEverywhere, run, sse } from "./support/openAiCompatible.js"
import * as SseServer from "./support/SseServer.js"

describe("OpenAiCompatible tool calls", () => {
  it.scopedLive("PRV-2 assembles tool calls without index, keyed by their ids (Gemini style)", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({
            role: "assistant",
            tool_calls: [{ id: "a1", type: "function", function: { name: "read", arguments: '{"path":"x"}' } }]
          }),
          chunk({ tool_calls: [{ id: "b2", type: "function", function: { name: "read", arguments: '{"path":' } }] }),
          chunk({ tool_calls: [{ function: { arguments: '"y"}' } }] }),
          chunk({}, "tool_calls"),
          done
        )
      )
      assert.deepStrictEqual(got.calls, [
        { id: "a1", name: "read", arguments: '{"path":"x"}' },
        { id: "b2", name: "read", arguments: '{"path":"y"}' }
      ])
      assert.strictEqual(got.finish?.reason, "tool_calls")
    })
  )

  it.scopedLive("PRV-2 two calls with one id stay two calls, the second with an id of its own", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({
            tool_calls: [
              { index: 0, id: "call_0", type: "function", function: { name: "ls", arguments: "{}" } },
              { index: 1, id: "call_0", type: "function", function: { name: "read", arguments: '{"path":' } }
            ]
          }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: '"a"}' } }] }),
          chunk({}, "tool_calls"),
          done
        )
      )
      const [first, second] = got.calls
      assert.deepStrictEqual(first, { id: "call_0", name: "ls", arguments: "{}" })
      assert.deepStrictEqual({ ...second!, id: "" }, { id: "", name: "read", arguments: '{"path":"a"}' })
      assert.match(second!.id, /^call_[0-9a-f]{24}$/)
    })
  )

  it.scopedLive("PRV-2 assembles tool calls whose indexes do not start at 0 (Anthropic compatibility)", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({ role: "assistant", content: "Let me check." }),
          chunk({
            tool_calls: [
              { index: 1, id: "toolu_01", type: "function", function: { name: "get_weather", arguments: "" } }
            ]
          }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: '{"city":' } }] }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: ' "Oslo"}' } }] }),
          chunk({
            tool_calls: [
              { index: 2, id: "toolu_02", type: "function", function: { name: "get_time", arguments: "{}" } }
            ]
          }),
          chunk({}, "tool_calls"),
          done
        )
      )
      assert.strictEqual(got.text, "Let me check.")
      assert.deepStrictEqual(got.calls, [
        { id: "toolu_01", name: "get_weather", arguments: '{"city": "Oslo"}' },
        { id: "toolu_02", name: "get_time", arguments: "{}" }
      ])
    })
  )

  it.scopedLive("PRV-2 ignores empty repeated ids and names, and invents an id when the server gives none", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({
            tool_calls: [{ index: 0, id: "call_x", type: "function", function: { name: "bash", arguments: "" } }]
          }),
          chunk({ tool_calls: [{ index: 0, id: "", type: "function", function: { name: "", arguments: '{"cmd":' } }] }),
          chunk({ tool_calls: [{ index: 0, id: "call_x", function: { name: "bash", arguments: '"ls"}' } }] }),
          chunk({ tool_calls: [{ index: 1, id: "", type: "function", function: { name: "pwd", arguments: "{}" } }] }),
          chunk({ tool_calls: [{ index: 1, id: "", function: { arguments: "" } }] }),
          chunk({}, "tool_calls"),
          done
        )
      )
      assert.strictEqual(got.calls.length, 2)
      assert.deepStrictEqual(got.calls[0], { id: "call_x", name: "bash", arguments: '{"cmd":"ls"}' })
      assert.strictEqual(got.calls[1]!.name, "pwd")
      assert.strictEqual(got.calls[1]!.arguments, "{}")
      assert.isTrue(got.calls[1]!.id.length > 0 && got.calls[1]!.id !== "call_x")
    })
  )

  it.scopedLive("PRV-2 starts a new call when a server reuses index 0 with a new id and name", () =>
    Effect.gen(function* () {
      const got = yield* replayEverywhere(
        sse(
          chunk({
            tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "a", arguments: '{"n":1}' } }]
          }),
          chunk({
            tool_calls: [{ index: 0, id: "c2", type: "function", function: { name: "b", arguments: '{"n":2}' } }]
          }),
          chunk({}, "tool_calls"),
          done
        )
      )
      assert.deepStrictEqual(got.calls, [
        { id: "c1", name: "a", arguments: '{"n":1}' },
        { id: "c2", name: "b", arguments: '{"n":2}' }
      ])
    })
  )

  it.scopedLive(
    "PRV-2 TL-6 a response of 100 000 tool calls is read whole, each call with its own id",
    () =>
      Effect.gen(function* () {
        const count = 100_000
        const calls = Array.from({ length: count }, (_, index) =>
          sse(chunk({ tool_calls: [{ index, id: `call_${index}`, function: { name: "ls", arguments: "{}" } }] }))
        ).join("")
        const server = yield* SseServer.always({ body: calls + sse(chunk({}, "tool_calls"), done) })
        // Comparing every id with every other took about 45 s here (past the time limit of the
        // test); a set of the ids takes about 2 s on a slow machine.
        const outcome = yield* run(modelFor(server))
        assert.isUndefined(outcome.error, outcome.error?.message)
        const ids = outcome.parts.flatMap((part) => (part._tag === "ToolCallStart" ? [part.id] : []))
        assert.strictEqual(new Set(ids).size, count)
        assert.deepStrictEqual(outcome.parts.at(-1), { _tag: "Finish", reason: "tool_calls" })
      }),
    60_000
  )
})
