// `forkInRun`: a plugin's work forked from a tool lives in the calling run's scope (CH-2): the run's
// ending, whatever ends it, interrupts it and waits for it before the terminal event.

import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as ChildSessions from "@alisio/runtime/ChildSessions"
import { Runner } from "@alisio/runtime/Runner"
import { Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { baseOptions, runnerLayer } from "./helpers/harness.js"

/** A tool that leaves work running in its run, which takes some real time to stop. */
const registerLinger = (order: Array<string>) =>
  Effect.gen(function* () {
    const children = yield* ChildSessions.ChildSessions
    const tools = yield* Tools
    const work = Effect.never.pipe(
      Effect.onInterrupt(() =>
        Effect.zipRight(
          Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20))),
          Effect.sync(() => order.push("work stopped"))
        )
      )
    )
    yield* tools.register(
      defineTool({
        name: "linger",
        description: "Leaves work running.",
        effect: "read",
        input: Schema.Struct({}),
        run: () =>
          Effect.map(children.forkInRun(work), (fiber) => textResult(Option.isSome(fiber) ? "forked" : "refused"))
      })
    )
  })

const runRecording = (order: Array<string>, reached?: Deferred.Deferred<void>) =>
  Effect.flatMap(Runner, (runner) =>
    runner.run({
      ...baseOptions,
      onEvent: (event) =>
        Effect.sync(() => order.push(event.type)).pipe(
          Effect.zipRight(
            reached !== undefined && event.type === "tool_call_completed"
              ? Deferred.succeed(reached, undefined)
              : Effect.void
          )
        )
    })
  )

describe("ChildSessions.forkInRun", () => {
  it.effect("CH-2 work a tool forked in its run is stopped before the run's run_cancelled", () =>
    Effect.gen(function* () {
      const order: Array<string> = []
      yield* registerLinger(order)
      const reached = yield* Deferred.make<void>()
      const run = yield* Effect.fork(runRecording(order, reached))
      yield* Deferred.await(reached)
      yield* Fiber.interrupt(run)
      assert.deepStrictEqual(order.slice(-2), ["work stopped", "run_cancelled"])
    }).pipe(
      Effect.provide(runnerLayer({ script: [Fake.callTools({ id: "c1", name: "linger", args: {} }), [Fake.silence]] }))
    )
  )

  it.effect("CH-2 work a tool forked in its run is stopped before the run's run_completed", () =>
    Effect.gen(function* () {
      const order: Array<string> = []
      yield* registerLinger(order)
      const outcome = yield* runRecording(order)
      assert.strictEqual(outcome.status, "completed")
      assert.deepStrictEqual(order.slice(-2), ["work stopped", "run_completed"])
    }).pipe(
      Effect.provide(
        runnerLayer({ script: [Fake.callTools({ id: "c1", name: "linger", args: {} }), Fake.answer("done")] })
      )
    )
  )
})
