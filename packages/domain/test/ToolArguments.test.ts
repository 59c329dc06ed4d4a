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
