// Parts made on first use (issue 17): one making, shared by every caller, each keeping its own services.
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { onFirstUse } from "../src/OnFirstUse.js"

class Caller extends Context.Tag("test/Caller")<Caller, string>() {}

describe("onFirstUse", () => {
  it.scoped("CH-1 a later caller keeps its own services: the first caller's do not reach it through the making", () =>
    Effect.gen(function* () {
      let made = 0
      const parts = yield* onFirstUse(
        Effect.sync(() => ++made),
        yield* Effect.scope
      )
      const use = (caller: string) =>
        Effect.flatMap(
          Effect.fork(Effect.zipRight(parts, Caller).pipe(Effect.provideService(Caller, caller))),
          (fiber) => Effect.flatten(Fiber.await(fiber))
        )
      // A caller that leaves its service unset between uses, as a UI's loop does between runs.
      const seen = yield* Effect.forEach(["first run", "second run"], use)
      assert.deepStrictEqual(seen, ["first run", "second run"])
      assert.strictEqual(made, 1)
    })
  )
})
