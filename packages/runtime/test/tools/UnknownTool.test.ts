// What the model is told when it names a builtin tool the way another API spells it.
import * as Fake from "@alisio/providers/FakeProvider"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { assertContract, baseOptions, collect, ofType, runnerLayer } from "../helpers/harness.js"

describe("unknown tools", () => {
  it.effect("TL-1 a tool name behind another API's namespace (functions.echo, default_api:sleep) is pointed at", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      const said = ofType(events, "tool_call_completed").map((e) => e.data.result.split(" Available tools")[0])
      assert.deepStrictEqual(said, [
        'Unknown tool "functions.echo". Did you mean "echo"?',
        'Unknown tool "default_api:sleep". Did you mean "sleep"?',
        'Unknown tool "tools/echo". Did you mean "echo"?',
        'Unknown tool "functions.zzzz".'
      ])
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            Fake.callTools(
              { id: "c1", name: "functions.echo", args: {} },
              { id: "c2", name: "default_api:sleep", args: {} },
              { id: "c3", name: "tools/echo", args: {} },
              { id: "c4", name: "functions.zzzz", args: {} }
            ),
            Fake.answer("ok")
          ]
        })
      )
    )
  )
})
