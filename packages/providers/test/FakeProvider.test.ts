// The scripted model every runtime test runs on (PRV-4): what each kind of step streams, when, and
// how it ends, and the real runner composed over it.

import { OutputTruncatedError, ProviderError } from "@alisio/domain/Errors"
import { ToolCallId } from "@alisio/domain/Ids"
import type { ModelError, ModelRequest, ResponsePart } from "@alisio/domain/LanguageModel"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as Interaction from "@alisio/runtime/Interaction"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Fake from "../src/FakeProvider.js"

const request = (text: string): ModelRequest => ({
  model: "fake-model",
  messages: [{ role: "user", content: [{ _tag: "text", text }] }],
  tools: [],
  maxOutputTokens: 1024
})

/**
 * Streams one request through a model made from `script`, in a fiber, keeping each part as it
 * arrives: the test sees what came before a delay, a silence or an error.
 */
const streaming = (script: Fake.Script, text = "hi") =>
  Effect.gen(function* () {
    const { fake, model } = yield* Fake.make(script)
    const parts: Array<ResponsePart> = []
    const fiber = yield* Effect.fork(
      Stream.runForEach(model.stream(request(text)), (part) => Effect.sync(() => parts.push(part)))
    )
    return { fake, model, parts, fiber }
  })

describe("FakeProvider", () => {
  it.effect("PRV-4 text, reasoning and tool-call deltas stream in script order, then the finish with its usage", () =>
    Effect.gen(function* () {
      const usage = { inputTokens: 7, outputTokens: 3 }
      const { fiber, parts } = yield* streaming([
        [
          Fake.reasoning("thinking"),
          ...Fake.text("Hello there", { chunks: 3 }),
          ...Fake.toolCall("c1", "read", { path: "a.ts" }, { fragments: 2 }),
          Fake.finish("tool_calls", usage)
        ]
      ])
      yield* Fiber.join(fiber)
      const id = ToolCallId.make("c1")
      const args = JSON.stringify({ path: "a.ts" })
      const half = Math.ceil(args.length / 2)
      assert.deepStrictEqual(parts, [
        { _tag: "ReasoningDelta", text: "thinking" },
        { _tag: "TextDelta", text: "Hell" },
        { _tag: "TextDelta", text: "o th" },
        { _tag: "TextDelta", text: "ere" },
        { _tag: "ToolCallStart", id, name: "read" },
        { _tag: "ToolCallDelta", id, argumentsDelta: args.slice(0, half) },
        { _tag: "ToolCallDelta", id, argumentsDelta: args.slice(half) },
        { _tag: "ToolCallEnd", id },
        { _tag: "Finish", reason: "tool_calls", usage }
      ])
    })
  )

  it.effect("PRV-4 each request gets the next scripted response, or the one a function picks; all are recorded", () =>
    Effect.gen(function* () {
      const collect = (model: { stream: (r: ModelRequest) => Stream.Stream<ResponsePart, ModelError> }, text: string) =>
        Stream.runCollect(model.stream(request(text))).pipe(Effect.map((chunk) => [...chunk]))
      const listed = yield* Fake.make([Fake.answer("first"), Fake.answer("second")])
      assert.deepStrictEqual((yield* collect(listed.model, "a"))[0], { _tag: "TextDelta", text: "first" })
      assert.deepStrictEqual((yield* collect(listed.model, "b"))[0], { _tag: "TextDelta", text: "second" })
      assert.deepStrictEqual(
        (yield* listed.fake.requests).map((r) => r.messages[0]?.content),
        [[{ _tag: "text", text: "a" }], [{ _tag: "text", text: "b" }]]
      )
      // A third request has no response: a typed error naming it, not a hang.
      const missing = yield* Effect.flip(collect(listed.model, "c"))
      assert.strictEqual(missing._tag, "ProviderError")
      assert.include(missing.message, "request 3")

      const chosen = yield* Fake.make((req, index) => Fake.answer(`${index}:${req.model}`))
      assert.deepStrictEqual((yield* collect(chosen.model, "x"))[0], { _tag: "TextDelta", text: "0:fake-model" })
      assert.deepStrictEqual((yield* collect(chosen.model, "y"))[0], { _tag: "TextDelta", text: "1:fake-model" })
    })
  )

  it.effect("PRV-4 a delay holds the next part until the TestClock has advanced by it", () =>
    Effect.gen(function* () {
      const { fake, fiber, parts } = yield* streaming([[...Fake.text("a"), Fake.delay(1_000), ...Fake.answer("b")]])
      yield* TestClock.adjust(999)
      assert.deepStrictEqual(parts, [{ _tag: "TextDelta", text: "a" }])
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust(1)
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(
        parts.map((part) => part._tag),
        ["TextDelta", "TextDelta", "Finish"]
      )
      assert.strictEqual(yield* fake.interrupted, 0, "a response that ended was not cut off")
    })
  )

  it.effect("PRV-4 retrying reports the provider's own retry, then waits its afterMs on the clock", () =>
    Effect.gen(function* () {
      const { fiber, parts } = yield* streaming([[...Fake.retrying(2_000, { status: 429 }), ...Fake.answer("ok")]])
      yield* TestClock.adjust(1_999)
      assert.deepStrictEqual(parts, [
        { _tag: "Retrying", reason: "rate_limited", status: 429, afterMs: 2_000, attempt: 1, of: 2 }
      ])
      yield* TestClock.adjust(1)
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(parts.at(1), { _tag: "TextDelta", text: "ok" })
    })
  )

  it.effect("PRV-4 a silence sends nothing more, however long the clock runs, until the request is interrupted", () =>
    Effect.gen(function* () {
      const { fake, fiber, parts } = yield* streaming([
        [...Fake.text("partial"), Fake.silence, ...Fake.answer("never")]
      ])
      yield* TestClock.adjust("1 hour")
      assert.deepStrictEqual(parts, [{ _tag: "TextDelta", text: "partial" }])
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      assert.strictEqual(yield* fake.interrupted, 0)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* fake.interrupted, 1)
      assert.strictEqual(parts.length, 1)
    })
  )

  it.effect("PRV-4 truncation: a length finish, a tool call cut mid-arguments, or an OutputTruncatedError", () =>
    Effect.gen(function* () {
      const atLength = yield* streaming([[...Fake.text("half an ans"), Fake.finish("length")]])
      yield* Fiber.join(atLength.fiber)
      assert.deepStrictEqual(atLength.parts.at(-1), { _tag: "Finish", reason: "length" })

      const cut = yield* streaming([[...Fake.toolCall("c1", "write", '{"path":"a.ts","cont', { cut: true })]])
      yield* Fiber.join(cut.fiber)
      assert.deepStrictEqual(
        cut.parts.map((part) => part._tag),
        ["ToolCallStart", "ToolCallDelta"]
      )
      assert.deepStrictEqual(cut.parts[1], {
        _tag: "ToolCallDelta",
        id: ToolCallId.make("c1"),
        argumentsDelta: '{"path":"a.ts","cont'
      })

      const truncated = new OutputTruncatedError({ message: "output cut", maxOutputTokens: 64 })
      const failed = yield* streaming([[...Fake.text("so far"), Fake.fail(truncated)]])
      const error = yield* Effect.flip(Fiber.join(failed.fiber))
      assert.strictEqual(error, truncated)
      assert.deepStrictEqual(failed.parts, [{ _tag: "TextDelta", text: "so far" }])
      assert.strictEqual(yield* failed.fake.interrupted, 0, "a response that failed was not cut off")
    })
  )

  it.effect("PRV-4 a scripted error ends the stream with that error after the parts before it", () =>
    Effect.gen(function* () {
      const limited = new ProviderError({ code: "rate_limited", message: "slow down", retryAfterMs: 2_000 })
      const { fiber, parts } = yield* streaming([[...Fake.text("one"), Fake.fail(limited), ...Fake.answer("two")]])
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error, limited)
      assert.deepStrictEqual(parts, [{ _tag: "TextDelta", text: "one" }])
    })
  )

  it.effect("PRV-4 the real runner completes a run on the fake layer: deltas, a delay, a tool call, no network", () =>
    Effect.gen(function* () {
      const runner = yield* Runner
      const fiber = yield* Effect.fork(runner.run({ cwd: "/tmp", prompt: "shout hi", model: "fake-model" }))
      // The second answer is scripted after a delay: the run waits for the clock, not for real time.
      yield* TestClock.adjust(999)
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust(1)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "completed")
      assert.strictEqual(outcome.text, "HI, done")
      assert.strictEqual(outcome.turns, 2)
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.strictEqual(requests.length, 2)
      assert.deepStrictEqual(
        requests[0]!.tools.map((tool) => tool.name),
        ["shout"]
      )
      const toolMessage = requests[1]!.messages.find((message) => message.role === "tool")
      assert.deepStrictEqual(toolMessage?.content, [{ _tag: "text", text: "HI" }])
      const store = yield* SessionStore.SessionStore
      assert.deepStrictEqual(
        (yield* store.runs!(outcome.sessionId)).map((run) => [run.id, run.status, run.provider]),
        [[outcome.runId, "completed", "fake"]]
      )
    }).pipe(
      Effect.provide(
        AgentRuntime.layer({
          tools: [
            defineTool({
              name: "shout",
              description: "Upper-cases its text.",
              effect: "read",
              input: Schema.Struct({ text: Schema.String }),
              run: ({ text }) => Effect.succeed(textResult(text.toUpperCase()))
            })
          ],
          interaction: Interaction.layerHeadless({ approveAll: true })
        }).pipe(
          Layer.provideMerge(
            Fake.layer([
              Fake.callTools({ id: "c1", name: "shout", args: { text: "hi" } }),
              [Fake.delay(1_000), ...Fake.text("HI, done", { chunks: 2 }), Fake.finish("stop")]
            ])
          ),
          Layer.provideMerge(SessionStore.layerMemory)
        )
      )
    )
  )
})
