// The task records the plugin keeps in its state, read again by a later process (CH-4): `/agents`
// of a session lists every task it started, whenever in the run each one was started, and
// `task_status` / `task_wait` answer for a task an earlier process ran.
import * as path from "node:path"
import type { SessionId } from "@alisio/domain/Ids"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import {
  agentOf,
  answered,
  latestResults,
  requestsOf,
  subagentsLayer,
  taskIdIn,
  tempDir,
  waitUntil
} from "./support/subagentsHost.js"

/** The root asks for one task a turn, three turns running, then answers. */
const oneTaskATurn: Fake.Script = (request) => {
  if (agentOf(request) !== undefined) return Fake.answer(`report of ${agentOf(request)}`)
  const done = request.messages.filter((m) => m.role === "tool").length
  if (done === 3) return Fake.answer("all reported")
  return Fake.callTools({
    id: `t${done}`,
    name: "task",
    args: { description: `job ${done}`, prompt: `do job ${done}`, subagent_type: "explore" }
  })
}

describe("task records", () => {
  it.scoped("CH-4 /agents in a later process lists every task of the session, those of later turns too", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const filename = path.join(root, "alisio.db")
      const homes = {
        state: path.join(root, "state"),
        config: path.join(root, "config"),
        cache: path.join(root, "cache")
      }
      const host = (script: Fake.Script) => subagentsLayer({ script, store: SessionStore.layer({ filename }), homes })

      const outcome = yield* Effect.flatMap(Runner, (runner) =>
        runner.run({ cwd: root, prompt: "root", model: "fake-model" })
      ).pipe(Effect.provide(host(oneTaskATurn)))
      assert.strictEqual(outcome.status, "completed")

      // The first process has closed; a second one reads what it kept.
      const listing = yield* Effect.flatMap(PluginHost.PluginHost, (plugins) =>
        plugins.commands.run("agents", "", { sessionId: outcome.sessionId, cwd: root })
      ).pipe(Effect.provide(host([])))
      const rows = listing.split("\n").slice(1)
      assert.deepStrictEqual(
        rows.map((row) => row.split(/ {2,}/).slice(1, 3).join(" ")),
        ["completed explore", "completed explore", "completed explore"],
        listing
      )
    })
  )

  it.scoped("CH-4 task_status and task_wait in a resumed session answer for a task an earlier process ran", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const filename = path.join(root, "alisio.db")
      const homes = {
        state: path.join(root, "state"),
        config: path.join(root, "config"),
        cache: path.join(root, "cache")
      }
      const host = (script: Fake.Script) => subagentsLayer({ script, store: SessionStore.layer({ filename }), homes })
      const run = (prompt: string, sessionId?: SessionId) =>
        Effect.flatMap(Runner, (runner) =>
          runner.run({ cwd: root, prompt, model: "fake-model", ...(sessionId === undefined ? {} : { sessionId }) })
        )

      const first = yield* run("delegate").pipe(
        Effect.provide(
          host((request) => {
            if (agentOf(request) !== undefined) return Fake.answer("the loader is in src/load.ts")
            return answered(request)
              ? Fake.answer(latestResults(request).join("\n"))
              : Fake.callTools({
                  id: "t1",
                  name: "task",
                  args: { description: "find", prompt: "find the loader", subagent_type: "explore" }
                })
          })
        )
      )
      const id = taskIdIn(first.text)!
      assert.isDefined(id, first.text)

      // A later process resumes the session and asks after the task by its id.
      const second = yield* run("what did it find?", first.sessionId).pipe(
        Effect.provide(
          host((request) =>
            answered(request)
              ? Fake.answer(latestResults(request).join("\n----\n"))
              : Fake.callTools(
                  { id: "s1", name: "task_status", args: { task_id: id } },
                  { id: "w1", name: "task_wait", args: { task_id: id } },
                  { id: "s2", name: "task_status", args: { task_id: "0badc0de" } }
                )
          )
        )
      )
      const [status, waited, unknown] = second.text.split("\n----\n")
      for (const answer of [status, waited]) {
        assert.include(answer, `Task ${id} ran in an earlier run of this session.`)
        assert.include(answer, `<subagent_result task="${id}" agent="explore" status="completed"`)
        assert.include(answer, "the loader is in src/load.ts")
      }
      assert.strictEqual(unknown, "No task 0badc0de was started from this session.")
    })
  )

  it.scoped("CH-4 /agents of another process shows a live run's queued task as queued, not interrupted", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const filename = path.join(root, "alisio.db")
      const homes = {
        state: path.join(root, "state"),
        config: path.join(root, "config"),
        cache: path.join(root, "cache")
      }
      const host = (script: Fake.Script) =>
        subagentsLayer({
          script,
          store: SessionStore.layer({ filename }),
          homes,
          config: { maxConcurrentPerParent: 1 }
        })
      // One process runs two background tasks, one at a time: the second waits in its queue.
      const running = Effect.gen(function* () {
        const fiber = yield* Effect.fork(
          Effect.flatMap(Runner, (runner) => runner.run({ cwd: root, prompt: "root", model: "fake-model" }))
        )
        yield* waitUntil(requestsOf, (requests) => requests.some((r) => agentOf(r) !== undefined))
        const [session] = yield* Effect.flatMap(SessionStore.SessionStore, (store) =>
          store.sessions({ parentId: null })
        )
        // Another process lists them meanwhile.
        const listing = yield* Effect.flatMap(PluginHost.PluginHost, (plugins) =>
          plugins.commands.run("agents", "", { sessionId: session!.id, cwd: root })
        ).pipe(Effect.provide(host([])))
        yield* Fiber.interrupt(fiber)
        return listing
      })
      const listing = yield* running.pipe(
        Effect.provide(
          host((request) =>
            agentOf(request) !== undefined
              ? [...Fake.text("working"), Fake.silence]
              : answered(request)
                ? Fake.answer("both started")
                : Fake.callTools(
                    ...["first", "second"].map((name) => ({
                      id: `t-${name}`,
                      name: "task",
                      args: { description: name, prompt: `do ${name}`, subagent_type: "explore", background: true }
                    }))
                  )
          )
        )
      )
      const rows = listing.split("\n").slice(1)
      assert.deepStrictEqual(
        rows.map((row) => row.split(/ {2,}/).slice(1, 3).join(" ")),
        ["running explore", "queued explore"],
        listing
      )
    })
  )

  it.scoped("CH-4 a process that resumes a session after another keeps that one's tasks in the session's list", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const filename = path.join(root, "alisio.db")
      const homes = {
        state: path.join(root, "state"),
        config: path.join(root, "config"),
        cache: path.join(root, "cache")
      }
      const script: Fake.Script = (request) =>
        agentOf(request) !== undefined
          ? Fake.answer("reported")
          : answered(request)
            ? Fake.answer("done")
            : Fake.callTools({
                id: `t${request.messages.length}`,
                name: "task",
                args: { description: "look", prompt: "look around", subagent_type: "explore" }
              })
      const host = () => subagentsLayer({ script, store: SessionStore.layer({ filename }), homes })
      const run = (sessionId?: SessionId) =>
        Effect.flatMap(Runner, (runner) =>
          runner.run({
            cwd: root,
            prompt: "go",
            model: "fake-model",
            ...(sessionId === undefined ? {} : { sessionId })
          })
        )
      // Process A runs the session, stays open while process B goes on with it, then goes on again.
      const sessionId = yield* Effect.gen(function* () {
        const first = yield* run()
        yield* run(first.sessionId).pipe(Effect.provide(host()))
        yield* run(first.sessionId)
        return first.sessionId
      }).pipe(Effect.provide(host()))
      const listing = yield* Effect.flatMap(PluginHost.PluginHost, (plugins) =>
        plugins.commands.run("agents", "", { sessionId, cwd: root })
      ).pipe(Effect.provide(host()))
      assert.strictEqual(listing.split("\n").slice(1).length, 3, listing)
    })
  )
})
