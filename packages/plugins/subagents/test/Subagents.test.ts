// The subagents plugin over the real runner, child sessions and plugin host, on the FakeProvider
// (CH-4): parallel tasks, the depth and queue limits, failures, cancellation, approvals, background
// tasks.
import { ProviderError } from "@alisio/domain/Errors"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Fake from "@alisio/providers/FakeProvider"
import * as ChildSessions from "@alisio/runtime/ChildSessions"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import {
  agentOf,
  answered,
  latestResults,
  promptOf,
  requestsOf,
  subagentsLayer,
  tempDir,
  waitUntil
} from "./support/subagentsHost.js"

const run = (cwd: string, prompt = "root") =>
  Effect.flatMap(Runner, (runner) => runner.run({ cwd, prompt, model: "fake-model" }))

const eventsOf = (sessionId: string) =>
  Effect.flatMap(SessionStore, (store) => store.events(sessionId as never)) as Effect.Effect<
    ReadonlyArray<KnownRunEvent>
  >

const serverDown = new ProviderError({ code: "server", message: "server down" })

const toolResults = (events: ReadonlyArray<KnownRunEvent>) =>
  events.flatMap((e) => (e.type === "tool_call_completed" ? [e.data] : []))

describe("subagents", () => {
  it.scoped("CH-4 two task calls in one response run their subagents at once; each report comes back wrapped", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const fiber = yield* Effect.fork(run(cwd))
      // Both children have sent their first request before either may answer: they run in parallel.
      yield* waitUntil(requestsOf, (requests) => requests.filter((r) => agentOf(r) !== undefined).length === 2)
      yield* TestClock.adjust(1_000)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "completed")
      assert.strictEqual(outcome.text, "both done")

      const events = yield* eventsOf(outcome.sessionId)
      const starts = events.flatMap((e, i) => (e.type === "child_session_started" ? [i] : []))
      const ends = events.flatMap((e, i) => (e.type === "child_session_ended" ? [i] : []))
      assert.strictEqual(starts.length, 2)
      assert.isTrue(Math.max(...starts) < Math.min(...ends), "both started before either ended")
      const labels = events.flatMap((e) => (e.type === "child_session_started" ? [e.data.label] : [])).sort()
      assert.deepStrictEqual(labels, ["explore", "plan"])

      const results = toolResults(events).map((r) => r.result)
      assert.strictEqual(results.length, 2)
      for (const [agent, answer] of [
        ["explore", "found it in src/a.ts"],
        ["plan", "1. do this"]
      ]) {
        const result = results.find((r) => r.includes(`agent="${agent}"`))
        assert.isDefined(result, agent)
        assert.match(result!, /^<subagent_result task="[0-9a-f]{8}" agent="\w+" status="completed"/)
        assert.include(result!, `${answer}\n</subagent_result>`)
      }

      const requests = yield* requestsOf
      const explore = requests.find((r) => agentOf(r) === "explore")!
      assert.match(explore.system ?? "", /^You are a fast, read-only search agent/)
      assert.deepStrictEqual(explore.tools.map((t) => t.name).sort(), ["glob", "grep", "ls", "read"])
      assert.strictEqual(promptOf(explore), "find the loader")
      const children = yield* Effect.flatMap(ChildSessions.ChildSessions, (c) => c.tree(outcome.sessionId))
      assert.deepStrictEqual(children.children.map((c) => c.title).sort(), [
        "explore: find it",
        "plan: plan it"
      ])
    }).pipe(
      Effect.provide(
        subagentsLayer({
          script: (request) => {
            const agent = agentOf(request)
            if (agent === "explore") return [Fake.delay(1_000), ...Fake.answer("found it in src/a.ts")]
            if (agent === "plan") return [Fake.delay(1_000), ...Fake.answer("1. do this")]
            return answered(request)
              ? Fake.answer("both done")
              : Fake.callTools(
                  {
                    id: "t1",
                    name: "task",
                    args: { description: "find it", prompt: "find the loader", subagent_type: "explore" }
                  },
                  { id: "t2", name: "task", args: { description: "plan it", prompt: "plan the change", subagent_type: "plan" } }
                )
          }
        })
      )
    )
  )

  it.scoped("CH-4 a fourth level of delegation is refused with the limit; three levels run", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const outcome = yield* run(cwd)
      assert.strictEqual(outcome.status, "completed")
      const requests = yield* requestsOf
      const deepest = requests.filter((r) => agentOf(r) === "general › general › general" && answered(r))
      assert.strictEqual(deepest.length, 1)
      assert.match(
        latestResults(deepest[0]!)[0]!,
        /^Delegation goes 3 levels deep at most, and this task would be level 4 \(general › general › general › general\)/
      )
      const tree = yield* Effect.flatMap(ChildSessions.ChildSessions, (c) => c.tree(outcome.sessionId))
      const depth = (node: typeof tree): number => 1 + Math.max(0, ...node.children.map(depth))
      assert.strictEqual(depth(tree), 4, "root and three levels of children")
    }).pipe(
      Effect.provide(
        subagentsLayer({
          script: (request) => {
            if (answered(request)) return Fake.answer(`done at ${agentOf(request) ?? "root"}`)
            return Fake.callTools({
              id: `d${(agentOf(request) ?? "").length}`,
              name: "task",
              args: { description: "deeper", prompt: "go deeper", subagent_type: "general" }
            })
          }
        })
      )
    )
  )

  it.scoped("CH-4 beyond the queue the task call fails with a clear error; the queued one runs after", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const fiber = yield* Effect.fork(run(cwd))
      yield* waitUntil(requestsOf, (requests) => requests.some((r) => agentOf(r) !== undefined))
      yield* TestClock.adjust(1_000)
      yield* waitUntil(requestsOf, (requests) => requests.filter((r) => agentOf(r) !== undefined).length === 2)
      yield* TestClock.adjust(1_000)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "completed")
      const results = toolResults(yield* eventsOf(outcome.sessionId))
      const refused = results.filter((r) => r.status === "error")
      assert.strictEqual(refused.length, 1)
      assert.match(refused[0]!.result, /^The subagent queue is full: 1 task waits for a slot already \(1 subagents run at once for one session, 8 for a session tree\)/)
      assert.strictEqual(results.filter((r) => r.result.includes('status="completed"')).length, 2)
    }).pipe(
      Effect.provide(
        subagentsLayer({
          config: { maxConcurrentPerParent: 1, maxQueued: 1 },
          script: (request) => {
            if (agentOf(request) !== undefined) return [Fake.delay(1_000), ...Fake.answer(promptOf(request))]
            return answered(request)
              ? Fake.answer("done")
              : Fake.callTools(
                  ...["a", "b", "c"].map((name) => ({
                    id: `q${name}`,
                    name: "task",
                    args: { description: name, prompt: `job ${name}`, subagent_type: "explore" }
                  }))
                )
          }
        })
      )
    )
  )

  it.scoped("CH-4 a failing subagent's report says it failed and why; the parent goes on", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const outcome = yield* run(cwd)
      assert.strictEqual(outcome.status, "completed")
      assert.strictEqual(outcome.text, "recovered")
      const [result] = toolResults(yield* eventsOf(outcome.sessionId))
      assert.strictEqual(result!.status, "error")
      assert.match(result!.result, /status="failed"/)
      assert.include(result!.result, "The subagent failed: server down")
    }).pipe(
      Effect.provide(
        subagentsLayer({
          script: (request) => {
            if (agentOf(request) !== undefined) return [Fake.fail(serverDown)]
            return answered(request)
              ? Fake.answer("recovered")
              : Fake.callTools({
                  id: "f1",
                  name: "task",
                  args: { description: "look", prompt: "look around", subagent_type: "explore" }
                })
          }
        })
      )
    )
  )
})
