import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type TuiFlags, tuiFlags } from "../src/Flags.js"
import { noFlags } from "../src/TuiMain.js"

describe("TuiMain", () => {
  it.effect("CLI-1 a bare `alisio` opens the UI with the flags the command tree parses no arguments into", () =>
    Effect.gen(function* () {
      let parsed: TuiFlags | undefined
      const alisio = Command.make("alisio", tuiFlags, (flags) =>
        Effect.sync(() => {
          parsed = flags
        })
      )
      yield* Command.run(alisio, { name: "alisio", version: "0" })(["node", "alisio"])
      assert.deepStrictEqual(noFlags, parsed)
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
