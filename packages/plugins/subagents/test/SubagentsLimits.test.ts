// What a subagent may have and what it gives back (CH-4, CH-1): never more tools, turns or time
// than its parent; a timed-out subagent says so, with what it changed; a long answer is cut; the
// scheduler's default slots (4 per session, 8 per tree, 16 queued).
import { existsSync } from "node:fs"
import * as path from "node:path"
import type { SessionId } from "@alisio/domain/Ids"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Fake from "@alisio/providers/FakeProvider"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { makeScheduler, type Refusal } from "../src/internal/scheduler.js"
import { SubagentsConfig } from "../src/SubagentsConfig.js"
import {
  advanceUntil,
  agentOf,
  answered,
  requestsOf,
  subagentsLayer,
  tempDir,
  waitUntil
} from "./support/subagentsHost.js"

const eventsOf = (sessionId: string) =>
  Effect.flatMap(SessionStore, (store) => store.events(sessionId as never)) as Effect.Effect<
    ReadonlyArray<KnownRunEvent>
  >

const toolResults = (events: ReadonlyArray<KnownRunEvent>) =>
  events.flatMap((e) => (e.type === "tool_call_completed" ? [e.data] : []))

const delegate = (subagent_type: string) =>
  Fake.callTools({ id: "t1", name: "task", args: { description: "job", prompt: "do the job", subagent_type } })

describe("subagents: never more than the parent", () => {
  it.scoped(
    "CH-4 CH-1 a read-only parent's general subagent gets only reading tools, and no more turns than the parent",
    () =>
      Effect.gen(function* () {
        const cwd = yield* tempDir
        const runner = yield* Runner
        const outcome = yield* runner.run({
          cwd,
          prompt: "root",
          model: "fake-model",
          readOnly: true,
          limits: { maxTurns: 3 }
        })
        assert.strictEqual(outcome.status, "completed")
        const requests = yield* requestsOf
        const child = requests.filter((r) => agentOf(r) === "general")
        // The agent may take 50 turns (the plugin's default), its parent only 3: it gets 3.
        assert.strictEqual(child.length, 3)
        const names = child[0]!.tools.map((t) => t.name)
        for (const writing of ["write", "edit", "bash"]) assert.notInclude(names, writing)
        assert.includeMembers(names, ["read", "grep", "glob", "ls"])
        const events = yield* eventsOf(outcome.sessionId)
        const started = events.flatMap((e) => (e.type === "child_session_started" ? [e.data] : []))
        assert.deepStrictEqual(started[0]?.narrowed, ["limits.maxTurns:50"])
        const [result] = toolResults(events)
        assert.match(result!.result, /agent="general" status="turns_exceeded"/)
        assert.include(result!.result, "The subagent used all the turns it was allowed without finishing.")
      }).pipe(
        Effect.provide(
          subagentsLayer({
            script: (request) => {
              if (agentOf(request) !== undefined) {
                return Fake.callTools({ id: `l${request.messages.length}`, name: "ls", args: {} })
              }
              return answered(request) ? Fake.answer("done") : delegate("general")
            }
          })
        )
      )
  )

  it.scoped("CH-4 a subagent that runs out of active time returns that, with what it changed", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const fiber = yield* Effect.fork(
        Effect.flatMap(Runner, (runner) => runner.run({ cwd, prompt: "root", model: "fake-model" }))
      )
      yield* waitUntil(requestsOf, (requests) => requests.filter((r) => agentOf(r) === "general").length === 2)
      yield* advanceUntil(1_000, Fiber.poll(fiber), Option.isSome)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "completed")
      assert.strictEqual(outcome.text, "goes on")
      const [result] = toolResults(yield* eventsOf(outcome.sessionId))
      assert.strictEqual(result!.status, "error")
      assert.match(result!.result, /^<subagent_result task="[0-9a-f]{8}" agent="general" status="failed"/)
      assert.include(result!.result, "The subagent failed: The run used up its 1s of active time")
      assert.include(result!.result, "In the shared workspace it called: write notes.txt.")
      assert.isTrue(existsSync(path.join(cwd, "notes.txt")))
    }).pipe(
      Effect.provide(
        subagentsLayer({
          config: { timeoutMs: 1_000 },
          script: (request) => {
            if (agentOf(request) !== undefined) {
              return answered(request)
                ? [Fake.delay(5_000), ...Fake.answer("too late")]
                : Fake.callTools({ id: "w1", name: "write", args: { path: "notes.txt", content: "half done\n" } })
            }
            return answered(request) ? Fake.answer("goes on") : delegate("general")
          }
        })
      )
    )
  )

  it.scoped("CH-4 a long answer reaches the parent cut to maxResultChars, wrapped, saying how much was cut", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const outcome = yield* Effect.flatMap(Runner, (runner) =>
        runner.run({ cwd, prompt: "root", model: "fake-model" })
      )
      const [result] = toolResults(yield* eventsOf(outcome.sessionId))
      const lines = result!.result.split("\n")
      assert.match(lines[0]!, /^<subagent_result task="[0-9a-f]{8}" agent="explore" status="completed"/)
      assert.strictEqual(lines[1], "x".repeat(1_000))
      assert.strictEqual(lines[2], "[… cut: 1500 more characters of the answer were left out]")
      assert.strictEqual(lines[3], "</subagent_result>")
    }).pipe(
      Effect.provide(
        subagentsLayer({
          config: { maxResultChars: 1_000 },
          script: (request) => {
            if (agentOf(request) !== undefined) return Fake.answer("x".repeat(2_500))
            return answered(request) ? Fake.answer("read it") : delegate("explore")
          }
        })
      )
    )
  )
})

describe("subagents: default slots", () => {
  it.effect("CH-4 by default 4 subagents run at once for one session, 8 for a tree, 16 wait; the 17th is refused", () =>
    Effect.gen(function* () {
      const config = Schema.decodeUnknownSync(SubagentsConfig)({})
      assert.deepStrictEqual(
        [config.maxDepth, config.maxConcurrentPerParent, config.maxConcurrentPerRoot, config.maxQueued],
        [3, 4, 8, 16]
      )
      const scheduler = yield* makeScheduler(config)
      const root = "root" as SessionId
      const enter = (id: string, parent: string) =>
        scheduler.enter({ id, parent: parent as SessionId, root }, undefined)
      const started: Array<string> = []
      const go = new Map<string, Deferred.Deferred<void, Refusal>>()
      const add = (id: string, parent: string) =>
        Effect.gen(function* () {
          const gate = yield* enter(id, parent)
          go.set(id, gate)
          if (yield* Deferred.isDone(gate)) started.push(id)
        })
      for (let i = 1; i <= 5; i++) yield* add(`a${i}`, "a")
      assert.deepStrictEqual(started, ["a1", "a2", "a3", "a4"])
      for (let i = 1; i <= 5; i++) yield* add(`b${i}`, "b")
      assert.deepStrictEqual(started, ["a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"])
      assert.deepStrictEqual((yield* scheduler.snapshot).queued, ["a5", "b5"])
      // One of a's ends: a5, first in the queue, takes the slot.
      yield* scheduler.leave("a1")
      assert.isTrue(yield* Deferred.isDone(go.get("a5")!))
      assert.isFalse(yield* Deferred.isDone(go.get("b5")!))
      for (let i = 1; i <= 15; i++) yield* add(`c${i}`, "c")
      assert.strictEqual((yield* scheduler.snapshot).queued.length, 16)
      const refused = yield* Effect.either(enter("c16", "c"))
      assert.isTrue(Either.isLeft(refused))
      if (Either.isLeft(refused)) {
        assert.strictEqual(refused.left.reason, "queue_full")
        assert.match(refused.left.message, /^The subagent queue is full: 16 tasks wait for a slot already/)
      }
    })
  )
})
