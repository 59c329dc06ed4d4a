// A tool stopped by the run's cancellation can say what it left behind (`ToolContext.cancelledWith`,
// from its interruption finalizer): the stored result, which a resumed session sends the model,
// and the call's completion carry it after the host's own line (TL-4, CLI-2).

import { textOf } from "@alisio/domain/Message"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { baseOptions, interruptAt, runnerLayer, testTools } from "./helpers/harness.js"

const NOTE = "Its partial work is kept on the branch work/1 in /tmp/work-1."

const leavesWorkTool = defineTool({
  name: "leaves_work",
  description: "Works until stopped, and says where its partial work is.",
  effect: "read",
  input: Schema.Struct({}),
  run: (_, context) =>
    context.progress("working\n").pipe(
      Effect.zipRight(Effect.never),
      Effect.as(textResult("never")),
      Effect.onInterrupt(() => context.cancelledWith?.(NOTE) ?? Effect.void)
    )
})

const layer = runnerLayer({
  tools: [...testTools, leavesWorkTool],
  script: [Fake.callTools({ id: "c1", name: "leaves_work", args: {} })]
})

describe("a cancelled tool call's result", () => {
  it.effect("TL-4 CLI-2 a tool cancelled with the run tells what it left behind: stored and in its completion", () =>
    Effect.gen(function* () {
      const events = yield* interruptAt(baseOptions, "tool_progress")
      const expected = `The tool call was cancelled before it finished.\n${NOTE}`
      const completed = events.find((event) => event.type === "tool_call_completed")
      assert.deepStrictEqual(
        completed?.type === "tool_call_completed" && [completed.data.status, completed.data.result],
        ["cancelled", expected]
      )
      const store = yield* SessionStore.SessionStore
      const stored = (yield* store.messages(events[0]!.sessionId))
        .map((row) => row.message)
        .find((m) => m.role === "tool")
      assert.strictEqual(stored?.role === "tool" && textOf(stored.content), expected)
    }).pipe(Effect.provide(layer))
  )
})
