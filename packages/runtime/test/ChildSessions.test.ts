import { join } from "node:path"
import type { ChildOutcome } from "@alisio/domain/ChildSession"
import { ProviderError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { ModelRequest } from "@alisio/domain/LanguageModel"
import { isTerminalType, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as ChildSessions from "@alisio/runtime/ChildSessions"
import { CurrentRun } from "@alisio/runtime/CurrentRun"
import * as HumanWaits from "@alisio/runtime/HumanWaits"
import * as Interaction from "@alisio/runtime/Interaction"
import { RunEvents } from "@alisio/runtime/RunEvents"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStoreModule from "@alisio/runtime/SessionStore"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { defaultApprovals, Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { spawnFixture, tempDir } from "./fixtures/storeTesting.js"
import { answered, delegateTool, hangingTree, promptOf } from "./helpers/delegate.js"
import { layerFailing } from "./helpers/failingStore.js"
import { assertPairs, baseOptions, runnerLayer } from "./helpers/harness.js"

const treeLayer = (
  script: Fake.Script,
  options: {
    readonly limits?: Partial<ChildSessions.ChildSessionLimits>
    readonly interaction?: Layer.Layer<Interaction.Interaction>
    readonly store?: Layer.Layer<SessionStore>
  } = {}
) =>
  runnerLayer({
    script,
    ...(options.limits === undefined ? {} : { childSessions: options.limits }),
    ...(options.interaction === undefined ? {} : { interaction: options.interaction }),
    ...(options.store === undefined ? {} : { store: options.store })
  })

const registerDelegate = Effect.gen(function* () {
  const children = yield* ChildSessions.ChildSessions
  const tools = yield* Tools
  yield* tools.register(delegateTool(children))
})

/** Every event of every run, as published. */
const recordAll = Effect.gen(function* () {
  const events = yield* RunEvents
  return yield* events.subscribe
})

const drain = (queue: Queue.Dequeue<KnownRunEvent>) => Effect.map(Queue.takeAll(queue), (chunk) => [...chunk])

describe("ChildSessions", () => {
  it.scoped("CH-2 interrupting the root cancels every descendant first; one terminal event each, the root's last", () =>
    Effect.gen(function* () {
      yield* registerDelegate
      const feed = yield* recordAll
      const runner = yield* Runner
      const store = yield* SessionStore
      const grandchildStreaming = yield* Deferred.make<void>()
      const root = yield* Effect.fork(
        runner.run({
          ...baseOptions,
          prompt: "root",
          onEvent: () => Effect.void
        })
      )
      // Wait until the grandchild streams.
      const seen: Array<KnownRunEvent> = []
      while (!(yield* Deferred.isDone(grandchildStreaming))) {
        const event = yield* Queue.take(feed)
        seen.push(event)
        if (event.type === "text_delta") yield* Deferred.succeed(grandchildStreaming, undefined)
      }
      yield* Fiber.interrupt(root)
      seen.push(...(yield* drain(feed)))
      for (const runId of new Set(seen.map((e) => e.runId))) assertPairs(seen.filter((e) => e.runId === runId))

      const rootSession = seen[0]!.sessionId
      const tree = yield* Effect.flatMap(ChildSessions.ChildSessions, (c) => c.tree(rootSession))
      const child = tree.children[0]!
      const grandchild = child.children[0]!
      assert.deepStrictEqual([tree.status, child.status, grandchild.status], ["cancelled", "cancelled", "cancelled"])

      const sessions: ReadonlyArray<SessionId> = [rootSession, child.sessionId, grandchild.sessionId]
      const terminalIds: Array<number> = []
      for (const session of sessions) {
        const stored = yield* store.events(session)
        const terminals = stored.filter((e) => isTerminalType(e.type))
        assert.deepStrictEqual(
          terminals.map((e) => e.type),
          ["run_cancelled"],
          `session ${session}`
        )
        terminalIds.push(Number(terminals[0]!.eventId))
        const runs = yield* store.runs!(session)
        assert.deepStrictEqual(
          runs.map((r) => r.status),
          ["cancelled"]
        )
      }
      assert.isTrue(
        terminalIds[2]! < terminalIds[1]! && terminalIds[1]! < terminalIds[0]!,
        "grandchild, child, then root"
      )
      const rootEvents = yield* store.events(rootSession)
      const ended = rootEvents.filter((e) => e.type === "child_session_ended")
      assert.deepStrictEqual(
        ended.map((e) => e.type === "child_session_ended" && e.data.status),
        ["cancelled"]
      )
      assert.strictEqual(rootEvents.at(-1)?.type, "run_cancelled")
      const childJournal = yield* store.toolCalls(child.sessionId)
      assert.deepStrictEqual(
        childJournal.map((c) => c.status),
        ["cancelled"],
        "the child's running delegate call was cancelled"
      )
    }).pipe(Effect.provide(treeLayer(hangingTree)))
  )

  it("CH-1 permissions are the intersection with the parent's, and what was asked beyond is reported", () => {
    const parent = {
      toolNames: new Set(["echo", "note", "delegate"]),
      capabilities: new Set(["net"]),
      approvals: { ...defaultApprovals, write: "deny" as const },
      readOnly: true
    }
    const grant = ChildSessions.narrowPermissions(parent, {
      prompt: "x",
      tools: ["echo", "sleep"],
      capabilities: ["net", "gpu"],
      approvals: "approve",
      readOnly: false
    })
    assert.deepStrictEqual(grant.tools, ["echo"])
    assert.deepStrictEqual(grant.capabilities, ["net"])
    assert.deepStrictEqual(grant.approvals, { read: "approve", internal: "approve", write: "deny", external: "ask" })
    assert.isTrue(grant.readOnly)
    assert.deepStrictEqual(grant.narrowed, [
      "tool:sleep",
      "capability:gpu",
      "approvals.write:approve",
      "approvals.external:approve",
      "readOnly:false"
    ])
    const inherit = ChildSessions.narrowPermissions({ ...parent, readOnly: false }, { prompt: "x" })
    assert.deepStrictEqual(inherit.tools, ["echo", "note", "delegate"])
    assert.isFalse(inherit.readOnly)
    assert.deepStrictEqual(inherit.narrowed, [])
  })

  it.scoped("CH-1 a read-only parent makes the child read-only; asking for more is narrowed and reported", () =>
    Effect.gen(function* () {
      yield* registerDelegate
      const feed = yield* recordAll
      const runner = yield* Runner
      const outcome = yield* runner.run({
        ...baseOptions,
        prompt: "root",
        readOnly: true,
        tools: ["echo", "delegate", "note"]
      })
      assert.strictEqual(outcome.status, "completed")
      const events = yield* drain(feed)
      const started = events.find((e) => e.type === "child_session_started")
      assert.deepStrictEqual(started?.type === "child_session_started" ? started.data.narrowed : undefined, [
        "tool:sleep",
        "readOnly:false"
      ])
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      const childRequest = requests.find((r) => promptOf(r) === "child")!
      assert.deepStrictEqual(
        childRequest.tools.map((t) => t.name),
        ["echo"],
        "note is not offered to a read-only child"
      )
      const childDenied = events.find((e) => e.type === "tool_call_completed" && e.data.name === "note")
      assert.strictEqual(childDenied?.type === "tool_call_completed" && childDenied.data.status, "denied")
    }).pipe(
      Effect.provide(
        treeLayer((request, index) => {
          if (promptOf(request) === "root") {
            return answered(request)
              ? Fake.answer("done")
              : Fake.callTools({
                  id: "r1",
                  name: "delegate",
                  args: { prompts: ["child"], tools: ["echo", "note", "sleep"], readOnly: false }
                })
          }
          return answered(request)
            ? Fake.answer("child done")
            : Fake.callTools({ id: `n${index}`, name: "note", args: { text: "x" } })
        })
      )
    )
  )

  it.scoped("LIM-2 a grandchild's open approval pauses the root's and the child's clocks", () =>
    Effect.gen(function* () {
      yield* registerDelegate
      const runner = yield* Runner
      const fiber = yield* Effect.fork(runner.run({ ...baseOptions, prompt: "root", limits: { timeoutMs: 10_000 } }))
      yield* TestClock.adjust(100_000)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "completed")
      assert.strictEqual(outcome.text, "root done")
    }).pipe(
      Effect.provide(
        treeLayer(
          (request, index) => {
            const prompt = promptOf(request)
            if (answered(request)) return Fake.answer(`${prompt} done`)
            if (prompt === "root")
              return Fake.callTools({ id: `r${index}`, name: "delegate", args: { prompts: ["child"] } })
            if (prompt === "child")
              return Fake.callTools({ id: `c${index}`, name: "delegate", args: { prompts: ["grandchild"] } })
            return Fake.callTools({ id: `g${index}`, name: "note", args: { text: "needs approval" } })
          },
          { interaction: Interaction.layerScripted({ approve: () => Effect.as(Effect.sleep(100_000), true) }) }
        )
      )
    )
  )

  it.scoped("LIM-2 a root waiting on its (slow) child keeps counting and times out; the child is cancelled", () =>
    Effect.gen(function* () {
      yield* registerDelegate
      const runner = yield* Runner
      const store = yield* SessionStore
      const fiber = yield* Effect.fork(runner.run({ ...baseOptions, prompt: "root", limits: { timeoutMs: 10_000 } }))
      yield* TestClock.adjust(10_000)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "failed")
      assert.strictEqual(outcome.failure?.code, "timeout")
      assert.strictEqual(outcome.failure?.timeout?.tool, "delegate")
      const kids = yield* store.sessions({ parentId: outcome.sessionId })
      assert.deepStrictEqual(
        kids.map((k) => k.status),
        ["cancelled"]
      )
    }).pipe(
      Effect.provide(
        treeLayer((request) =>
          promptOf(request) === "root"
            ? Fake.callTools({
                id: "r1",
                name: "delegate",
                args: { prompts: ["child"], limits: { timeoutMs: 600_000 } }
              })
            : [Fake.delay(60_000), ...Fake.answer("too late")]
        )
      )
    )
  )

  it.scoped("CH-1 the depth limit is a typed error the caller sees", () =>
    Effect.gen(function* () {
      yield* registerDelegate
      const runner = yield* Runner
      const feed = yield* recordAll
      const outcome = yield* runner.run({ ...baseOptions, prompt: "root" })
      assert.strictEqual(outcome.status, "completed")
      const results = (yield* drain(feed)).flatMap((e) => (e.type === "tool_call_completed" ? [e.data.result] : []))
      assert.isTrue(
        results.some((r) => r.includes("2 levels deep; the limit is 1")),
        results.join(" | ")
      )
    }).pipe(
      Effect.provide(
        treeLayer(
          (request, index) => {
            const prompt = promptOf(request)
            if (answered(request)) return Fake.answer(`${prompt} done`)
            return Fake.callTools({
              id: `d${index}`,
              name: "delegate",
              args: { prompts: [prompt === "root" ? "child" : "grandchild"] }
            })
          },
          { limits: { maxDepth: 1 } }
        )
      )
    )
  )

  it.scoped("CH-1 the per-root concurrency limit refuses a child beyond it", () =>
    Effect.gen(function* () {
      yield* registerDelegate
      const runner = yield* Runner
      const feed = yield* recordAll
      yield* runner.run({ ...baseOptions, prompt: "root" })
      const results = (yield* drain(feed)).flatMap((e) => (e.type === "tool_call_completed" ? [e.data.result] : []))
      assert.isTrue(
        results.some((r) => r.includes("already runs 2 child sessions")),
        results.join(" | ")
      )
    }).pipe(
      Effect.provide(
        treeLayer(
          (request) =>
            promptOf(request) === "root"
              ? answered(request)
                ? Fake.answer("done")
                : Fake.callTools({ id: "r1", name: "delegate", args: { prompts: ["a", "b", "c"] } })
              : Fake.answer("child"),
          { limits: { maxConcurrentPerRoot: 2 } }
        )
      )
    )
  )

  it.scoped("CH-1 abort stops one child: its outcome is cancelled, list shows it, the parent goes on", () =>
    Effect.gen(function* () {
      const children = yield* ChildSessions.ChildSessions
      const tools = yield* Tools
      const outcomes: Array<string> = []
      const spawned: Array<SessionId> = []
      yield* tools.register(
        defineTool({
          name: "start_and_abort",
          description: "Starts a child, aborts it, reports its outcome and the parent's list of children.",
          effect: "internal",
          input: Schema.Struct({}),
          run: () =>
            Effect.gen(function* () {
              const run = yield* Effect.orDie(Effect.serviceOption(CurrentRun))
              const handle = yield* children.spawn({ prompt: "hang", title: "slow one" })
              spawned.push(handle.sessionId)
              yield* children.abort(handle)
              const outcome = yield* children.await(handle)
              const listed = Option.isSome(run) ? yield* children.list(run.value.sessionId) : []
              outcomes.push(
                outcome.status,
                ...listed.map((c) => `${c.sessionId === handle.sessionId}:${c.runId === handle.runId}:${c.status}`)
              )
              return textResult(outcome.status)
            }).pipe(Effect.orDie)
        })
      )
      const outcome = yield* (yield* Runner).run({ ...baseOptions, prompt: "root" })
      assert.strictEqual(outcome.status, "completed")
      assert.deepStrictEqual(outcomes, ["cancelled", "true:true:cancelled"])
      const childEvents = yield* (yield* SessionStore).events(spawned[0]!)
      assert.deepStrictEqual(
        childEvents.map((e) => e.type),
        ["run_started", "run_cancelled"],
        "aborted as it started: still one terminal event"
      )
    }).pipe(
      Effect.provide(
        treeLayer((request) =>
          promptOf(request) === "root"
            ? answered(request)
              ? Fake.answer("root done")
              : Fake.callTools({ id: "r1", name: "start_and_abort", args: {} })
            : [...Fake.text("busy"), Fake.silence]
        )
      )
    )
  )

  it.scoped("CH-1 a child's failure is an outcome for the parent, which goes on", () =>
    Effect.gen(function* () {
      yield* registerDelegate
      const runner = yield* Runner
      const outcome = yield* runner.run({ ...baseOptions, prompt: "root" })
      assert.strictEqual(outcome.status, "completed")
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      const last = requests.at(-1)!
      const toolResult = last.messages.find((m) => m.role === "tool")
      assert.include(JSON.stringify(toolResult), "failed:  (server down)")
    }).pipe(
      Effect.provide(
        treeLayer((request) =>
          promptOf(request) === "root"
            ? answered(request)
              ? Fake.answer("recovered")
              : Fake.callTools({ id: "r1", name: "delegate", args: { prompts: ["child"] } })
            : [Fake.fail(new ProviderError({ code: "server", message: "server down" }))]
        )
      )
    )
  )
})

describe("ChildSessions in a long-lived process", () => {
  const lastText = (request: ModelRequest) => {
    const last = request.messages.at(-1)
    return last?.role === "user" && last.content[0]?._tag === "text" ? last.content[0].text : ""
  }
  const creating = Deferred.unsafeMake<void>(FiberId.none)
  it.scoped("CH-1 a spawn interrupted in its middle keeps no slot and leaves no child queued", () =>
    Effect.gen(function* () {
      yield* registerDelegate
      const runner = yield* Runner
      const store = yield* SessionStore
      const children = yield* ChildSessions.ChildSessions
      const first = yield* Effect.fork(runner.run({ ...baseOptions, prompt: "root" }))
      yield* Deferred.await(creating)
      // The root is interrupted while its delegate tool is inside spawn, the child's row just written.
      const interrupting = yield* Effect.fork(Fiber.interrupt(first))
      yield* TestClock.adjust(10_000)
      yield* Fiber.join(interrupting)
      const rootSession = (yield* store.sessions({ parentId: null }))[0]!.id
      const kids = yield* store.sessions({ parentId: rootSession })
      assert.deepStrictEqual(
        kids.map((k) => k.status),
        ["cancelled"]
      )
      assert.deepStrictEqual(yield* children.held, { children: 0, roots: 0 })
      const again = yield* runner.run({ ...baseOptions, sessionId: rootSession, prompt: "again" })
      assert.strictEqual(again.status, "completed")
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.include(JSON.stringify(requests.at(-1)!.messages.at(-1)), "completed: child done", "the slot was free")
    }).pipe(
      Effect.provide(
        treeLayer(
          (request) => {
            if (promptOf(request) === "child") return Fake.answer("child done")
            if (request.messages.at(-1)?.role === "tool") return Fake.answer("root done")
            return Fake.callTools({ id: `r-${lastText(request)}`, name: "delegate", args: { prompts: ["child"] } })
          },
          {
            limits: { maxConcurrentPerRoot: 1 },
            store: layerFailing({
              afterCreate: {
                match: (input) => input.parentId !== undefined,
                run: Effect.zipRight(Deferred.succeed(creating, undefined), Effect.sleep(10_000))
              }
            })
          }
        )
      )
    )
  )

  it.scoped(
    "LIM-1 CH-1 once runs end, no wait entry and no child is held; an ended child's outcome comes from the store",
    () =>
      Effect.gen(function* () {
        const children = yield* ChildSessions.ChildSessions
        const waits = yield* HumanWaits.HumanWaits
        const tools = yield* Tools
        const outcomes: Array<ChildOutcome> = []
        yield* tools.register(
          defineTool({
            name: "spawn_and_await_twice",
            description: "Spawns two children, awaits them, then awaits them again once they are released.",
            effect: "internal",
            input: Schema.Struct({}),
            run: () =>
              Effect.gen(function* () {
                const handles = yield* Effect.forEach(["child one", "child two"], (prompt) =>
                  children.spawn({ prompt })
                )
                for (const handle of handles) outcomes.push(yield* children.await(handle))
                while ((yield* children.held).children > 0) yield* Effect.yieldNow()
                for (const handle of handles) outcomes.push(yield* children.await(handle))
                return textResult("ok")
              }).pipe(Effect.orDie)
          })
        )
        const outcome = yield* (yield* Runner).run({ ...baseOptions, prompt: "root" })
        assert.strictEqual(outcome.status, "completed")
        assert.deepStrictEqual(
          outcomes.map((o) => [o.status, o.text]),
          [
            ["completed", "child one done"],
            ["completed", "child two done"],
            ["completed", "child one done"],
            ["completed", "child two done"]
          ]
        )
        assert.deepStrictEqual(outcomes[2], outcomes[0], "the stored outcome is the live one")
        assert.deepStrictEqual(yield* children.held, { children: 0, roots: 0 })
        assert.strictEqual(yield* waits.size, 0, "no HumanWaits entry is left for the root or its children")
      }).pipe(
        Effect.provide(
          treeLayer(
            (request) => {
              const prompt = promptOf(request)
              if (prompt !== "root") return Fake.answer(`${prompt} done`)
              return answered(request)
                ? Fake.answer("root done")
                : Fake.callTools({ id: "r1", name: "spawn_and_await_twice", args: {} })
            },
            { interaction: Interaction.layerScripted({ approve: () => Effect.succeed(true) }) }
          )
        )
      )
  )
})

describe("ChildSessions across processes", () => {
  it.scoped(
    "CH-3 a tree left running by a killed process reads interrupted at the next start",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const child = yield* spawnFixture("treeChild.ts", [filename])
        const { sessions } = (yield* child.nextLine) as { sessions: ReadonlyArray<SessionId> }
        assert.strictEqual(sessions.length, 3)
        yield* child.kill9
        const store = yield* SessionStoreModule.make({ filename })
        const counts = yield* store.interruptRuns!()
        assert.deepStrictEqual(counts, { runs: 3, sessions: 3 })
        for (const session of sessions) {
          const runs = yield* store.runs!(session)
          assert.deepStrictEqual(
            runs.map((r) => r.status),
            ["interrupted"]
          )
        }
        const statuses = yield* Effect.forEach(sessions, (id) => Effect.map(store.session(id), (s) => s.status))
        assert.deepStrictEqual(
          statuses,
          ["interrupted", "interrupted", "interrupted"],
          "the root too, now that none of its runs is alive"
        )
        assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 0 })
      }),
    { timeout: 60_000 }
  )
})
