// Runs and their request ids (ST-3): a retried or racing request gets the run that exists.

import { SessionNotFoundError } from "@alisio/domain/Errors"
import { RunId } from "@alisio/domain/Ids"
import * as Fake from "@alisio/providers/FakeProvider"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { currentOwner } from "../src/ProcessOwner.js"
import { Runner } from "../src/Runner.js"
import * as SessionStore from "../src/SessionStore.js"
import { baseOptions, runnerLayer } from "./helpers/harness.js"
import { user, withMemoryStore } from "./helpers/sessionStore.js"

describe("SessionStore", () => {
  it.effect("ST-3 beginRun with the same requestId returns the existing run", () =>
    withMemoryStore((store) =>
      Effect.gen(function* () {
        const session = yield* store.createSession({ cwd: "/w" })
        const input = {
          id: RunId.make("run-a"),
          sessionId: session.id,
          requestId: "req-1",
          model: "gpt",
          provider: "openai",
          owner: currentOwner
        }
        const first = yield* store.beginRun!(input)
        assert.isFalse(first.existing)
        assert.strictEqual(first.run.status, "running")

        const retry = yield* store.beginRun!({ ...input, id: RunId.make("run-b") })
        assert.isTrue(retry.existing)
        assert.strictEqual(retry.run.id, "run-a")
        assert.deepStrictEqual(
          (yield* store.runs!(session.id)).map((r) => r.id),
          ["run-a"]
        )

        // A child session's request ids are its own: the same id there is another run.
        const child = yield* store.createSession({ cwd: "/w", parentId: session.id })
        const other = yield* store.beginRun!({ ...input, id: RunId.make("run-c"), sessionId: child.id })
        assert.isFalse(other.existing)

        yield* TestClock.adjust(500)
        yield* store.endRun!(input.id, { status: "completed", usage: { inputTokens: 5, outputTokens: 6 } })
        const ended = Option.getOrThrow(yield* store.runByRequest!(session.id, "req-1"))
        assert.strictEqual(ended.status, "completed")
        assert.deepStrictEqual(ended.usage, { inputTokens: 5, outputTokens: 6 })
        assert.strictEqual(ended.endedAt, 500)
        assert.deepStrictEqual(ended.owner, currentOwner)
        assert.isTrue(Option.isNone(yield* store.runByRequest!(session.id, "req-2")))
        const missing = yield* Effect.flip(store.endRun!(RunId.make("nope"), { status: "failed" }))
        assert.strictEqual(missing.reason, "not_found")
      })
    )
  )

  it.effect(
    "ST-3 a root run's request id is claimed across sessions: found in one query, and a second root session gets the first run",
    () =>
      withMemoryStore((store) =>
        Effect.gen(function* () {
          const input = { model: "gpt", provider: "openai", owner: currentOwner, requestId: "req-9" }
          const older = yield* store.createSession({ cwd: "/a" })
          const first = yield* store.beginRun!({ ...input, id: RunId.make("run-1"), sessionId: older.id })
          assert.isFalse(first.existing)
          // Many newer sessions, in other folders too: the lookup does not scan them.
          for (let i = 0; i < 250; i++) yield* store.createSession({ cwd: i % 2 === 0 ? "/a" : "/b" })
          assert.strictEqual(Option.getOrThrow(yield* store.runForRequest!("req-9")).id, "run-1")
          assert.isTrue(Option.isNone(yield* store.runForRequest!("req-unknown")))

          // A racing process created its own session for the request: it gets the first run, and
          // its empty session is removed; a session with history is kept.
          const placeholder = yield* store.createSession({ cwd: "/b" })
          const lost = yield* store.beginRun!({ ...input, id: RunId.make("run-2"), sessionId: placeholder.id })
          assert.isTrue(lost.existing)
          assert.strictEqual(lost.run.id, "run-1")
          assert.strictEqual(lost.run.sessionId, older.id)
          assert.instanceOf(yield* Effect.flip(store.session(placeholder.id)), SessionNotFoundError)
          const withHistory = yield* store.createSession({ cwd: "/b" })
          yield* store.appendMessages(withHistory.id, [user("earlier")])
          const again = yield* store.beginRun!({ ...input, id: RunId.make("run-3"), sessionId: withHistory.id })
          assert.strictEqual(again.run.id, "run-1")
          assert.strictEqual((yield* store.messages(withHistory.id)).length, 1)
          assert.deepStrictEqual(yield* store.runs!(withHistory.id), [])
        })
      )
  )

  it.effect(
    "ST-3 two Runner.run racing on one request id without a session: one runs, the other gets its run and leaves no session",
    () =>
      Effect.gen(function* () {
        const store = yield* SessionStore.SessionStore
        const runner = yield* Runner
        const fake = yield* Fake.FakeProvider
        const options = { ...baseOptions, requestId: "req-race" }
        const outcomes = yield* Effect.all([runner.run(options), runner.run(options)], { concurrency: "unbounded" })
        assert.deepStrictEqual(outcomes.map((outcome) => outcome.existing).sort(), [false, true])
        assert.strictEqual(outcomes[0].runId, outcomes[1].runId)
        assert.strictEqual(outcomes[0].sessionId, outcomes[1].sessionId)
        assert.strictEqual((yield* fake.requests).length, 1)
        assert.deepStrictEqual(
          (yield* store.sessions()).map((session) => session.id),
          [outcomes[0].sessionId]
        )
      }).pipe(Effect.provide(runnerLayer({ script: [Fake.answer("once"), Fake.answer("twice")] })))
  )
})
