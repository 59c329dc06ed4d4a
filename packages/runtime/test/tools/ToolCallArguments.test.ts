// What the model is told of a call it got wrong: a tool named the way another API spells it,
// arguments that are not JSON, or JSON encoded twice.
import * as Fake from "@alisio/providers/FakeProvider"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { assertContract, baseOptions, collect, ofType, runnerLayer } from "../helpers/harness.js"

describe("a call the model got wrong", () => {
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

  it.effect("TL-1 arguments that are not JSON say where parsing stopped; an object encoded twice is that object", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      const results = ofType(events, "tool_call_completed").map((e) => [e.data.status, e.data.result])
      assert.deepStrictEqual(results[0], ["completed", "echo: twice"])
      assert.strictEqual(results[1]![0], "error")
      assert.match(results[1]![1]!, /^The arguments of echo are not valid JSON \(.*position 13.*\): \{"text": "a",\}$/)
      assert.strictEqual(
        results[2]![1],
        `The arguments of echo are not valid JSON (${parseError("{".repeat(300))}): ${"{".repeat(200)}…`
      )
      // A string that is no encoded object stays a string: the tool says what it expected.
      assert.match(results[3]![1]!, /^Invalid arguments for echo: the arguments must be a JSON object, got "\{nope"/)
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            [
              ...Fake.toolCall("c1", "echo", JSON.stringify(JSON.stringify({ text: "twice" }))),
              ...Fake.toolCall("c2", "echo", '{"text": "a",}'),
              ...Fake.toolCall("c3", "echo", "{".repeat(300)),
              ...Fake.toolCall("c4", "echo", JSON.stringify("{nope")),
              Fake.finish("tool_calls")
            ],
            Fake.answer("ok")
          ]
        })
      )
    )
  )
})

const parseError = (text: string): string => {
  try {
    JSON.parse(text)
    return ""
  } catch (error) {
    return (error as Error).message
  }
}
