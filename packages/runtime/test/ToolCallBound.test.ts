// TL-4: the tool calls of one response are bounded. A server that sends thousands of calls in one
// answer gets the first MAX_TOOL_CALLS_PER_RESPONSE run, one refusal for the rest, and a session
// and next request that stay bounded and valid (every stored call has its result).

import { MAX_TOOL_CALLS_PER_RESPONSE } from "@alisio/domain/Limits"
import type { Message } from "@alisio/domain/Message"
import * as Fake from "@alisio/providers/FakeProvider"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  assertContract,
  assertPairs,
  baseOptions,
  collect,
  ofType,
  pingTool,
  runnerLayer,
  testTools
} from "./helpers/harness.js"

const pings = (count: number, name = "ping") =>
  Array.from({ length: count }, (_, i) => ({ id: `c${i}`, name, args: { note: `${i}` } }))

/** Every assistant tool call has exactly one tool result after it, and no result lacks its call. */
const assertAnswered = (messages: ReadonlyArray<Message>) => {
  const asked = messages.flatMap((m) =>
    m.role === "assistant" ? m.content.flatMap((p) => (p._tag === "tool_call" ? [p.id as string] : [])) : []
  )
  const answered = messages.flatMap((m) => (m.role === "tool" ? [m.toolCallId as string] : []))
  assert.deepStrictEqual(answered, asked)
}

describe("TL-4 the tool calls of one response are bounded", () => {
  const flood = 2_000
  const ping = pingTool()
  it.effect(
    `TL-4 a response with ${flood} calls runs ${MAX_TOOL_CALLS_PER_RESPONSE}, refuses the rest in one result, and stores a bounded, valid turn`,
    () =>
      Effect.gen(function* () {
        const events = yield* collect({ ...baseOptions, limits: { maxTurns: 1 } })
        assertContract(events)
        assertPairs(events)
        assert.strictEqual(ping.runs(), MAX_TOOL_CALLS_PER_RESPONSE)
        const completed = ofType(events, "tool_call_completed")
        assert.strictEqual(ofType(events, "tool_call_started").length, MAX_TOOL_CALLS_PER_RESPONSE + 1)
        assert.strictEqual(completed.length, MAX_TOOL_CALLS_PER_RESPONSE + 1)
        const refused = completed.find((e) => e.data.status === "denied")
        assert.strictEqual(refused?.data.toolCallId, `c${MAX_TOOL_CALLS_PER_RESPONSE}`)
        assert.include(refused?.data.result, `asked for ${flood} tool calls`)
        assert.include(refused?.data.result, `at most ${MAX_TOOL_CALLS_PER_RESPONSE}`)
        assert.include(refused?.data.result, `ping ×${flood - MAX_TOOL_CALLS_PER_RESPONSE}`)
        assert.strictEqual(completed.filter((e) => e.data.status === "completed").length, MAX_TOOL_CALLS_PER_RESPONSE)
        assert.deepStrictEqual(ofType(events, "turns_exceeded").length, 1)

        const store = yield* SessionStore.SessionStore
        const sessionId = events[0]!.sessionId
        assert.strictEqual((yield* store.toolCalls(sessionId)).length, MAX_TOOL_CALLS_PER_RESPONSE + 1)
        const stored = (yield* store.messages(sessionId)).map((m) => m.message)
        assertAnswered(stored)
        const calls = stored.flatMap((m) =>
          m.role === "assistant" ? m.content.filter((p) => p._tag === "tool_call") : []
        )
        assert.strictEqual(calls.length, MAX_TOOL_CALLS_PER_RESPONSE + 1)
      }).pipe(
        Effect.provide(
          runnerLayer({
            tools: [...testTools, ping.tool],
            script: [Fake.callTools(...pings(flood)), Fake.answer("done")]
          })
        )
      )
  )

  const next = pingTool()
  it.effect("TL-4 the next request carries the bounded turn: every call with its result, the refusal included", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.strictEqual(ofType(events, "run_completed")[0]?.data.text, "done")
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      const second = requests[1]!.messages
      assertAnswered(second)
      assert.strictEqual(second.filter((m) => m.role === "tool").length, MAX_TOOL_CALLS_PER_RESPONSE + 1)
      const last = second.at(-1)
      assert.isTrue(last?.role === "tool" && last.isError)
      const refusal = ofType(events, "tool_call_completed").find((e) => e.data.status === "denied")
      assert.include(refusal?.data.result, "ping ×436, nope ×20")
    }).pipe(
      Effect.provide(
        runnerLayer({
          tools: [...testTools, next.tool],
          script: [
            Fake.callTools(...pings(500), ...pings(20, "nope").map((c) => ({ ...c, id: `x${c.id}` }))),
            Fake.answer("done")
          ]
        })
      )
    )
  )

  const exact = pingTool()
  it.effect(`TL-4 exactly ${MAX_TOOL_CALLS_PER_RESPONSE} calls all run, none refused`, () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.strictEqual(exact.runs(), MAX_TOOL_CALLS_PER_RESPONSE)
      const statuses = ofType(events, "tool_call_completed").map((e) => e.data.status)
      assert.deepStrictEqual(
        statuses,
        Array.from({ length: MAX_TOOL_CALLS_PER_RESPONSE }, () => "completed")
      )
    }).pipe(
      Effect.provide(
        runnerLayer({
          tools: [...testTools, exact.tool],
          script: [Fake.callTools(...pings(MAX_TOOL_CALLS_PER_RESPONSE)), Fake.answer("done")]
        })
      )
    )
  )

  const cut = pingTool()
  it.effect(
    "TL-4 a response cut by the output budget is bounded too: its complete calls run up to the bound (LIM-7)",
    () =>
      Effect.gen(function* () {
        const events = yield* collect(baseOptions)
        assertContract(events)
        assert.strictEqual(cut.runs(), MAX_TOOL_CALLS_PER_RESPONSE)
        assert.strictEqual(ofType(events, "truncation_recovery").length, 1)
        const statuses = ofType(events, "tool_call_completed").map((e) => e.data.status)
        assert.strictEqual(statuses.length, MAX_TOOL_CALLS_PER_RESPONSE + 1)
        assert.strictEqual(statuses.at(-1), "denied")
        const store = yield* SessionStore.SessionStore
        assertAnswered((yield* store.messages(events[0]!.sessionId)).map((m) => m.message))
      }).pipe(
        Effect.provide(
          runnerLayer({
            tools: [...testTools, cut.tool],
            script: [
              [
                ...pings(300).flatMap((c) => Fake.toolCall(c.id, c.name, c.args)),
                ...Fake.toolCall("cut", "ping", '{"note":', { cut: true }),
                Fake.finish("length")
              ],
              Fake.answer("done")
            ]
          })
        )
      )
  )
})
