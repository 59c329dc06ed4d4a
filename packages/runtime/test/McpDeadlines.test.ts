// The call timeouts of an MCP connection: one watcher fiber on the Effect clock for every call
// under way (internal/mcp/deadlines.ts), driven here by the TestClock.
import * as Deadlines from "@alisio/runtime/internal/mcp/deadlines"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"

// Lets the watcher fiber run up to its next wait.
const settle = Effect.repeatN(Effect.yieldNow(), 20)

/** A deadline that calls `onExpire` (a call's object is one, with its own `expire`). */
class Noted extends Deadlines.Deadline {
  constructor(readonly onExpire: () => void) {
    super()
  }
  expire(): void {
    this.onExpire()
  }
}

/** Adds a deadline of `ms` that calls `onExpire`, and returns it. */
const add = (deadlines: Deadlines.Deadlines, ms: number, onExpire: () => void) => {
  const deadline = new Noted(onExpire)
  deadlines.add(deadline, ms)
  return deadline
}

describe("MCP call deadlines", () => {
  it.scoped("MCP-1 a call's deadline expires on the clock; a removed one never does", () =>
    Effect.gen(function* () {
      const deadlines = yield* Deadlines.make
      const expired: Array<string> = []
      add(deadlines, 1_000, () => expired.push("a"))
      const b = add(deadlines, 2_000, () => expired.push("b"))
      add(deadlines, 3_000, () => expired.push("c"))
      yield* settle
      yield* TestClock.adjust(999)
      yield* settle
      assert.deepStrictEqual(expired, [])
      yield* TestClock.adjust(1)
      yield* settle
      assert.deepStrictEqual(expired, ["a"])
      deadlines.remove(b)
      yield* TestClock.adjust(5_000)
      yield* settle
      assert.deepStrictEqual(expired, ["a", "c"])
    })
  )

  it.scoped("MCP-1 a shorter deadline added while the watcher sleeps on a longer one expires on time", () =>
    Effect.gen(function* () {
      const deadlines = yield* Deadlines.make
      const expired: Array<string> = []
      add(deadlines, 60_000, () => expired.push("long"))
      yield* settle
      add(deadlines, 100, () => expired.push("short"))
      yield* settle
      yield* TestClock.adjust(100)
      yield* settle
      assert.deepStrictEqual(expired, ["short"])
      yield* TestClock.adjust(60_000)
      yield* settle
      assert.deepStrictEqual(expired, ["short", "long"])
    })
  )

  it.scoped("MCP-1 deadlines come and go as calls do; each expires once, the removed never", () =>
    Effect.gen(function* () {
      const deadlines = yield* Deadlines.make
      let expired = 0
      for (let i = 0; i < 1_000; i++) deadlines.remove(add(deadlines, 500, () => expired++))
      const kept = add(deadlines, 500, () => expired++)
      yield* settle
      yield* TestClock.adjust(500)
      yield* settle
      assert.strictEqual(expired, 1)
      deadlines.remove(kept)
      yield* TestClock.adjust(10_000)
      yield* settle
      assert.strictEqual(expired, 1)
    })
  )
})
