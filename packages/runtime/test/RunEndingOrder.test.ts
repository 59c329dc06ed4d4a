// A run with a timeout that ends while a tool call stops slowly (as bash does, killing its
// processes): the call's completion comes before the terminal event, which is the run's last (EV-1).

import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import {
  assertContract,
  baseOptions,
  collect,
  interruptAt,
  runnerLayer,
  testTools,
  typesOf
} from "./helpers/harness.js"

/** Works until stopped, and takes some real time to stop. */
const slowStopTool = defineTool({
  name: "slow_stop",
  description: "Works until stopped; stopping takes a while.",
  effect: "read",
  input: Schema.Struct({}),
  run: (_, context) =>
    context.progress("working\n").pipe(
      Effect.zipRight(Effect.never),
      Effect.as(textResult("never")),
      Effect.onInterrupt(() => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 30))))
    )
})

const layer = runnerLayer({
  tools: [...testTools, slowStopTool],
  script: [Fake.callTools({ id: "c1", name: "slow_stop", args: {} })]
})

const afterStart = (types: ReadonlyArray<string>) =>
  types.slice(types.indexOf("tool_call_started")).filter((type) => type !== "tool_progress")

describe("the end of a run with a timeout (EV-1)", () => {
  it.effect("EV-1 a run with a timeout cancelled during a tool call ends with run_cancelled last, after the call", () =>
    Effect.gen(function* () {
      const events = yield* interruptAt({ ...baseOptions, limits: { timeoutMs: 3_600_000 } }, "tool_progress")
      assertContract(events)
      assert.deepStrictEqual(afterStart(typesOf(events)), [
        "tool_call_started",
        "tool_call_completed",
        "message",
        "message",
        "run_cancelled"
      ])
    }).pipe(Effect.provide(layer))
  )

  it.effect("EV-1 LIM-3 the timeout firing during a tool call: the call completes cancelled before run_failed", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect({ ...baseOptions, limits: { timeoutMs: 5_000 } }))
      yield* TestClock.adjust(5_000)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.deepStrictEqual(afterStart(typesOf(events)), [
        "tool_call_started",
        "tool_call_completed",
        "message",
        "message",
        "run_failed"
      ])
      const completed = events.find((event) => event.type === "tool_call_completed")
      assert.strictEqual(completed?.type === "tool_call_completed" && completed.data.status, "cancelled")
      const failed = events.at(-1)
      assert.strictEqual(failed?.type === "run_failed" && failed.data.code, "timeout")
    }).pipe(Effect.provide(layer))
  )
})
