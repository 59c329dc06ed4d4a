import { ProviderError } from "@alisio/domain/Errors"
import * as Fake from "@alisio/providers/FakeProvider"
import * as SessionTitles from "@alisio/runtime/SessionTitles"
import { assert, describe, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"

const summarize = (script: Fake.Script, within: Duration.DurationInput = "20 seconds") =>
  Effect.gen(function* () {
    const { fake, model } = yield* Fake.make(script)
    const title = yield* SessionTitles.summarize({ provider: model, model: "m", prompt: "Fix the login test", within })
    return { title, requests: yield* fake.requests }
  })

describe("SessionTitles", () => {
  it("CLI-1 a prompt's title is its first non-empty line, spaces collapsed, cut at a word near 60 characters", () => {
    assert.strictEqual(SessionTitles.fromPrompt("\n\n  Fix   the\tlogin test \nmore"), "Fix the login test")
    const long = SessionTitles.fromPrompt(`Refactor ${"the store and ".repeat(10)}`)
    assert.isAtMost(long.length, 60)
    assert.match(long, /^Refactor the store and (the store and )+the…$/, "cut between words")
    assert.strictEqual(SessionTitles.fromPrompt("x".repeat(80)), `${"x".repeat(59)}…`)
    assert.strictEqual(SessionTitles.fromPrompt("   "), "")
  })

  it("CLI-1 the model's answer becomes one line of title: quotes, a label and the final period go", () => {
    assert.deepStrictEqual(SessionTitles.cleanSummary('"Fix The Login Test."\n'), Option.some("Fix The Login Test"))
    assert.deepStrictEqual(SessionTitles.cleanSummary("Title: **Login fix**\nBecause…"), Option.some("Login fix"))
    assert.deepStrictEqual(SessionTitles.cleanSummary("\n\n# Faster builds"), Option.some("Faster builds"))
    assert.deepStrictEqual(SessionTitles.cleanSummary('  ""  '), Option.none())
  })

  it.effect("CLI-1 summarize asks once, with the prompt and no tools, and returns the cleaned title", () =>
    Effect.gen(function* () {
      const { requests, title } = yield* summarize([Fake.answer("Login test fix.")])
      assert.deepStrictEqual(title, Option.some("Login test fix"))
      assert.lengthOf(requests, 1)
      assert.deepStrictEqual(requests[0]!.tools, [])
      assert.deepStrictEqual(requests[0]!.messages, [
        { role: "user", content: [{ _tag: "text", text: "Fix the login test" }] }
      ])
      assert.match(requests[0]!.system ?? "", /^You name conversations/)
    })
  )

  it.effect("CLI-1 summarize never fails: a provider error or an empty answer give no title", () =>
    Effect.gen(function* () {
      const failed = yield* summarize([[Fake.fail(new ProviderError({ code: "rate_limited", message: "slow down" }))]])
      assert.isTrue(Option.isNone(failed.title))
      const empty = yield* summarize([Fake.answer("")])
      assert.isTrue(Option.isNone(empty.title))
    })
  )

  it.effect("CLI-1 summarize gives up when the model stays silent past its time, on the Effect clock", () =>
    Effect.gen(function* () {
      const waiting = yield* Effect.fork(summarize([[Fake.silence]], "5 seconds"))
      yield* TestClock.adjust("4 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)), "still waiting within its time")
      yield* TestClock.adjust("1 second")
      const { title } = yield* Fiber.join(waiting)
      assert.isTrue(Option.isNone(title))
    })
  )
})
