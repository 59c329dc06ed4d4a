// A session's later runs in the same process, as the interactive UI makes them (each message a run
// in a fiber of its own): each delegates in its own run (CH-1, CH-4).

import type { SessionId } from "@alisio/domain/Ids"
import * as Fake from "@alisio/providers/FakeProvider"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { agentOf, answered, latestResults, subagentsLayer, tempDir } from "./support/subagentsHost.js"

describe("subagents in a session's later runs", () => {
  it.scoped("CH-1 CH-4 the second message of a session delegates in its own run, not in the first (ended) one", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const runner = yield* Runner
      // Each run in a fiber of its own, awaited and not joined, as the interactive UI runs them.
      const runAlone = (prompt: string, sessionId?: SessionId) =>
        Effect.flatMap(
          Effect.fork(
            runner.run({ cwd, prompt, model: "fake-model", ...(sessionId === undefined ? {} : { sessionId }) })
          ),
          (fiber) => Effect.flatten(Fiber.await(fiber))
        )
      const first = yield* runAlone("first")
      const second = yield* runAlone("second", first.sessionId)
      for (const outcome of [first, second]) {
        assert.strictEqual(outcome.status, "completed")
        assert.match(outcome.text, /^<subagent_result task="[0-9a-f]{8}" agent="explore" status="completed"/)
      }
      const events = yield* Effect.flatMap(SessionStore, (store) => store.events(second.sessionId))
      const started = events.flatMap((e) => (e.type === "child_session_started" ? [e.runId] : []))
      assert.deepStrictEqual(started, [first.runId, second.runId])
    }).pipe(
      Effect.provide(
        subagentsLayer({
          script: (request) => {
            if (agentOf(request) !== undefined) return Fake.answer("child report")
            return answered(request)
              ? Fake.answer(latestResults(request).join("\n"))
              : Fake.callTools({
                  id: `t${request.messages.length}`,
                  name: "task",
                  args: { description: "look", prompt: "look around", subagent_type: "explore" }
                })
          }
        })
      )
    )
  )
})
