import * as AskUserQuestion from "@alisio/runtime/tools/AskUserQuestion"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, callFails, makeContext } from "./context.js"

describe("ask_user_question", () => {
  it.effect("TL-1 returns the person's answer", () =>
    Effect.gen(function* () {
      const { context } = yield* makeContext("/", { answer: "use tabs" })
      const text = yield* call(
        AskUserQuestion.make(),
        { question: "Tabs or spaces?", options: ["tabs", "spaces"] },
        context
      )
      assert.strictEqual(text, "use tabs")
    })
  )

  it.effect("TL-1 headless: the tool error says no person is available", () =>
    Effect.gen(function* () {
      const { context } = yield* makeContext("/")
      const message = yield* callFails(AskUserQuestion.make(), { question: "Tabs or spaces?" }, context)
      assert.strictEqual(
        message,
        "No person is available to answer (headless run). Go on with your best judgement and state the assumption you made."
      )
      assert.include(yield* callFails(AskUserQuestion.make(), { question: " " }, context), "Invalid arguments")
    })
  )
})
