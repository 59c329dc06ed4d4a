// A session's later runs in the same process, as the interactive UI makes them (each message a run
// in a fiber of its own): each delegates in its own run, and hears nothing false of a cancelled one
// (CH-1, CH-2, CH-4).

import type { SessionId } from "@alisio/domain/Ids"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import {
  agentOf,
  allText,
  answered,
  latestResults,
  requestsOf,
  subagentsLayer,
  tempDir,
  waitUntil
} from "./support/subagentsHost.js"

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

  for (const [when, waiting] of [
    ["in a task call", false],
    ["waiting for its model", true]
  ] as const) {
    it.scoped(
      `CH-2 CH-4 a run cancelled ${when} with background tasks queued: each ends cancelled, and the next run hears no failure`,
      () =>
        Effect.gen(function* () {
          const cwd = yield* tempDir
          const runner = yield* Runner
          const first = yield* Effect.fork(runner.run({ cwd, prompt: "first", model: "fake-model" }))
          yield* waitUntil(requestsOf, (requests) => requests.some((r) => agentOf(r) === "explore"))
          if (waiting)
            yield* waitUntil(requestsOf, (requests) => requests.some((r) => answered(r) && agentOf(r) === undefined))
          yield* Fiber.interrupt(first)
          const store = yield* SessionStore
          const [root] = yield* store.sessions({ parentId: null })
          const listing = yield* Effect.flatMap(PluginHost.PluginHost, (host) =>
            host.commands.run("agents", "", { sessionId: root!.id, cwd })
          )
          const rows = listing.split("\n").slice(1)
          assert.strictEqual(rows.length, 3, listing)
          for (const row of rows) assert.match(row, /^[0-9a-f]{8} {2}cancelled {2}explore /, listing)

          const second = yield* runner.run({ cwd, prompt: "second", model: "fake-model", sessionId: root!.id })
          assert.strictEqual(second.status, "completed")
          const told = (yield* requestsOf).filter((r) => agentOf(r) === undefined).at(-1)!
          assert.notMatch(allText(told), /failed|No subagent slot/, allText(told))
        }).pipe(
          Effect.provide(
            subagentsLayer({
              config: { maxConcurrentPerParent: 1 },
              script: (request) => {
                if (agentOf(request) !== undefined) return [...Fake.text("working"), Fake.silence]
                if (allText(request).includes("second")) return Fake.answer("went on")
                if (answered(request)) return [Fake.silence]
                return Fake.callTools(
                  ...["now", "later", "last"].map((name, i) => ({
                    id: `t-${name}`,
                    name: "task",
                    args: {
                      description: name,
                      prompt: `look ${name}`,
                      subagent_type: "explore",
                      background: waiting || i > 0
                    }
                  }))
                )
              }
            })
          )
        )
    )
  }
})
