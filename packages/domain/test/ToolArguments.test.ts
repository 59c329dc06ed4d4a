import { defineTool, textResult } from "@alisio/domain/Tool"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const tool = defineTool({
  name: "pick",
  description: "Picks.",
  effect: "read",
  input: Schema.Struct({
    path: Schema.String,
    limit: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
    mode: Schema.optional(Schema.Literal("fast", "slow")),
    options: Schema.optional(Schema.Array(Schema.Struct({ label: Schema.String })))
  }),
  run: () => Effect.succeed(textResult("picked"))
})

const remedy = ". Call it again with arguments that match its input schema."

describe("tool arguments", () => {
  it("TL-2 a bad call is told each wrong argument once: what it must be and what it was", () => {
    assert.strictEqual(
      tool.invalid?.({ path: 3, limit: 1.5 }),
      `Invalid arguments for pick: path: expected string, got 3; limit: expected an integer, got 1.5${remedy}`
    )
    assert.strictEqual(
      tool.invalid?.({ mode: "quick", options: [{ label: "a" }, { label: 2 }] }),
      `Invalid arguments for pick: path is missing; mode: expected "fast" or "slow", got "quick"; options[1].label: expected string, got 2${remedy}`
    )
    assert.strictEqual(
      tool.invalid?.("a path"),
      `Invalid arguments for pick: the arguments must be a JSON object, got "a path"${remedy}`
    )
    assert.strictEqual(
      tool.invalid?.({ path: "a", options: 3 }),
      `Invalid arguments for pick: options: expected an array, got 3${remedy}`
    )
    assert.isUndefined(tool.invalid?.({ path: "a", limit: 2, extra: true }), "unknown arguments are ignored")
    const huge = tool.invalid?.({ path: "x".repeat(1_000_000), limit: "y".repeat(1_000_000) }) ?? ""
    assert.isBelow(huge.length, 500, "a huge wrong value is not echoed whole")
    assert.match(huge, /^Invalid arguments for pick: limit: expected number, got "yyy+…\. Call it again/)
  })
})

describe("arguments a tool does not take", () => {
  it.effect("TL-2 CH-1 a call with arguments the tool does not take runs, and its result names them as ignored", () =>
    Effect.gen(function* () {
      const context = {} as Parameters<typeof tool.execute>[1]
      const plain = yield* tool.execute({ path: "a" }, context)
      assert.deepStrictEqual(plain.content, [{ _tag: "text", text: "picked" }])
      const one = yield* tool.execute({ path: "a", model: "gpt-x" }, context)
      assert.deepStrictEqual(one.content, [
        { _tag: "text", text: "picked" },
        { _tag: "text", text: '(This argument was ignored: this tool does not take "model".)' }
      ])
      const hostile = Object.fromEntries(
        Array.from({ length: 20 }, (_, i) => [i === 0 ? `a\u001b[2J${"x".repeat(100)}` : `k${i}`, i])
      )
      const many = yield* tool.execute({ path: "a", ...hostile }, context)
      const note = many.content[1]
      assert.strictEqual(note?._tag, "text")
      const text = note?._tag === "text" ? note.text : ""
      assert.notInclude(text, "\u001b", "a control character in a name is escaped")
      assert.include(text, '"a\\u001b[2Jxxx')
      assert.include(text, "and 12 more.)")
      assert.isBelow(text.length, 500)
    })
  )
})
