// The subagents plugin over the real runner, child sessions and plugin host, on the FakeProvider
// (CH-4): parallel tasks, the depth and queue limits, failures, cancellation, approvals, background
// tasks.
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ProviderError } from "@alisio/domain/Errors"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Fake from "@alisio/providers/FakeProvider"
import * as ChildSessions from "@alisio/runtime/ChildSessions"
import * as Interaction from "@alisio/runtime/Interaction"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as PluginUi from "@alisio/runtime/PluginUi"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import {
  advanceUntil,
  agentOf,
  allText,
  answered,
  latestResults,
  promptOf,
  requestsOf,
  subagentsLayer,
  taskIdIn,
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
      assert.deepStrictEqual(children.children.map((c) => c.title).sort(), ["explore: find it", "plan: plan it"])
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
                  {
                    id: "t2",
                    name: "task",
                    args: { description: "plan it", prompt: "plan the change", subagent_type: "plan" }
                  }
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
      assert.match(
        refused[0]!.result,
        /^The subagent queue is full: 1 task waits for a slot already \(at most 1 run at once for one session and 8 for a session tree\)/
      )
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

  it.scoped(
    "CH-4 a task call naming no agent, or one that does not exist, is told the agents it may name; a blank prompt is refused",
    () =>
      Effect.gen(function* () {
        const cwd = yield* tempDir
        const outcome = yield* run(cwd)
        assert.strictEqual(outcome.status, "completed")
        const results = toolResults(yield* eventsOf(outcome.sessionId))
        const missing = results.find((r) => r.toolCallId === "m1")
        const unknown = results.find((r) => r.toolCallId === "u1")
        assert.strictEqual(missing!.status, "error")
        assert.match(missing!.result, /^Invalid arguments for task: subagent_type is missing\. /)
        assert.match(missing!.result, /\nsubagent_type names the agent to run\. Available: general, explore, plan\.$/)
        assert.strictEqual(unknown!.status, "error")
        assert.strictEqual(unknown!.result, 'Unknown subagent_type "reviewer". Available: general, explore, plan.')
        const blank = results.find((r) => r.toolCallId === "b1")
        assert.strictEqual(blank!.status, "error")
        assert.match(blank!.result, /^prompt is empty: the subagent does not see this conversation, /)
        const children = yield* Effect.flatMap(ChildSessions.ChildSessions, (c) => c.tree(outcome.sessionId))
        assert.deepStrictEqual(children.children, [], "no subagent ran")
      }).pipe(
        Effect.provide(
          subagentsLayer({
            script: (request) =>
              answered(request)
                ? Fake.answer("noted")
                : Fake.callTools(
                    { id: "m1", name: "task", args: { description: "look", prompt: "look around" } },
                    {
                      id: "u1",
                      name: "task",
                      args: { description: "review", prompt: "review it", subagent_type: "reviewer" }
                    },
                    { id: "b1", name: "task", args: { description: "look", prompt: " \n", subagent_type: "explore" } }
                  )
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

  it.scoped("CH-4 CH-2 cancelling the parent stops its subagent and that one's own; both tasks end cancelled", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const fiber = yield* Effect.fork(run(cwd))
      yield* waitUntil(requestsOf, (requests) => requests.some((r) => agentOf(r) === "general › explore"))
      yield* Fiber.interrupt(fiber)
      const store = yield* SessionStore
      const [root] = yield* store.sessions({ parentId: null })
      const tree = yield* Effect.flatMap(ChildSessions.ChildSessions, (c) => c.tree(root!.id))
      const general = tree.children[0]!
      const explore = general.children[0]!
      assert.deepStrictEqual([tree.status, general.status, explore.status], ["cancelled", "cancelled", "cancelled"])
      const host = yield* PluginHost.PluginHost
      const listing = yield* host.commands.run("agents", "", { sessionId: root!.id, cwd })
      const rows = listing.split("\n").slice(1)
      assert.strictEqual(rows.length, 2, listing)
      assert.match(rows[0]!, /^[0-9a-f]{8} {2}cancelled {2}general /)
      assert.match(rows[1]!, /^[0-9a-f]{8} {2}cancelled {4}explore /)
      const generalCalls = toolResults(yield* eventsOf(general.sessionId))
      assert.deepStrictEqual(
        generalCalls.map((c) => c.status),
        ["cancelled"],
        "the general agent's task call ended with it"
      )
    }).pipe(
      Effect.provide(
        subagentsLayer({
          script: (request) => {
            const agent = agentOf(request)
            if (agent === "general › explore") return [...Fake.text("working"), Fake.silence]
            const next = agent === undefined ? "general" : "explore"
            return Fake.callTools({
              id: `c-${next}`,
              name: "task",
              args: { description: `${next} work`, prompt: "work", subagent_type: next }
            })
          }
        })
      )
    )
  )

  it.scoped(
    "CH-4 LIM-2 a subagent's approval reaches the person labelled with its agent path; clocks above pause",
    () => {
      const asked: Array<Interaction.ApprovalRequest> = []
      return Effect.gen(function* () {
        const cwd = yield* tempDir
        const runner = yield* Runner
        const fiber = yield* Effect.fork(
          runner.run({ cwd, prompt: "root", model: "fake-model", limits: { timeoutMs: 10_000 } })
        )
        yield* waitUntil(
          Effect.sync(() => asked.length),
          (n) => n === 1
        )
        yield* TestClock.adjust(100_000)
        const outcome = yield* Fiber.join(fiber)
        assert.strictEqual(outcome.status, "completed", outcome.error)
        assert.strictEqual(asked[0]!.label, "general › general")
        assert.strictEqual(asked[0]!.tool, "write")
        const store = yield* SessionStore
        const tree = yield* Effect.flatMap(ChildSessions.ChildSessions, (c) => c.tree(outcome.sessionId))
        const grandchild = tree.children[0]!.children[0]!
        const requested = (yield* store.events(grandchild.sessionId)).find((e) => e.type === "approval_requested")
        assert.strictEqual(
          requested?.type === "approval_requested" ? requested.data.label : undefined,
          "general › general"
        )
      }).pipe(
        Effect.provide(
          subagentsLayer({
            interaction: Interaction.layerScripted({
              approve: (request) =>
                Effect.sync(() => asked.push(request)).pipe(Effect.zipRight(Effect.sleep(100_000)), Effect.as(true))
            }),
            script: (request) => {
              const agent = agentOf(request)
              if (answered(request)) return Fake.answer(`${agent ?? "root"} done`)
              if (agent === "general › general") {
                return Fake.callTools({ id: "w1", name: "write", args: { path: "a.txt", content: "hello" } })
              }
              return Fake.callTools({
                id: `g-${agent ?? "root"}`,
                name: "task",
                args: { description: "write a file", prompt: "write a.txt", subagent_type: "general" }
              })
            }
          })
        )
      )
    }
  )

  it.scoped("CH-4 a background task: task_status while it runs, task_wait for its result, and no notice after", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const fiber = yield* Effect.fork(run(cwd))
      yield* waitUntil(requestsOf, (requests) => requests.some((r) => latestResults(r)[0]?.startsWith("Task ")))
      yield* TestClock.adjust(1_000)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "completed")
      const requests = yield* requestsOf
      const roots = requests.filter((r) => agentOf(r) === undefined)
      assert.match(latestResults(roots[1]!)[0]!, /^Started in the background as task [0-9a-f]{8} \(explore\)\. /)
      assert.match(latestResults(roots[2]!)[0]!, /^Task [0-9a-f]{8} \(explore: look\) is running, for /)
      const waited = latestResults(roots[3]!)[0]!
      assert.match(waited, /^<subagent_result task="[0-9a-f]{8}" agent="explore" status="completed"/)
      assert.include(waited, "background answer")
      assert.strictEqual(roots.length, 4)
      assert.isFalse(
        requests.some((r) => allText(r).includes("[notice]")),
        "the result was delivered by task_wait"
      )
    }).pipe(
      Effect.provide(
        subagentsLayer({
          script: (request) => {
            if (agentOf(request) !== undefined) return [Fake.delay(1_000), ...Fake.answer("background answer")]
            const [last] = latestResults(request)
            const id = taskIdIn(last ?? "") ?? /Task ([0-9a-f]{8})/.exec(last ?? "")?.[1]
            if (last === undefined) {
              return Fake.callTools({
                id: "b1",
                name: "task",
                args: { description: "look", prompt: "look", subagent_type: "explore", background: true }
              })
            }
            if (last.startsWith("Started"))
              return Fake.callTools({ id: "s1", name: "task_status", args: { task_id: id } })
            if (last.startsWith("Task ")) return Fake.callTools({ id: "w1", name: "task_wait", args: { task_id: id } })
            return Fake.answer("all done")
          }
        })
      )
    )
  )

  it.scoped("CH-4 a background task's end is a notice in the parent's next turn; the parent waits for it", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const fiber = yield* Effect.fork(run(cwd))
      yield* waitUntil(requestsOf, (requests) => requests.filter((r) => agentOf(r) === undefined).length === 2)
      yield* TestClock.adjust(1_000)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "completed")
      assert.strictEqual(outcome.text, "the explorer said: background answer")
      assert.strictEqual(outcome.turns, 3)
      const store = yield* SessionStore
      const messages = (yield* store.messages(outcome.sessionId)).map((m) => m.message)
      const notice = messages.at(-2)!
      assert.strictEqual(notice.role, "user")
      const text = notice.role === "user" && notice.content[0]?._tag === "text" ? notice.content[0].text : ""
      assert.match(
        text,
        /^\[notice\] The background task [0-9a-f]{8} \(explore: look\) ended completed:\n<subagent_result/
      )
      assert.include(text, "background answer")
    }).pipe(
      Effect.provide(
        subagentsLayer({
          script: (request) => {
            if (agentOf(request) !== undefined) return [Fake.delay(1_000), ...Fake.answer("background answer")]
            const last = request.messages.at(-1)
            if (last?.role === "user" && JSON.stringify(last).includes("[notice]")) {
              return Fake.answer("the explorer said: background answer")
            }
            return answered(request)
              ? Fake.answer("I will wait for it")
              : Fake.callTools({
                  id: "b1",
                  name: "task",
                  args: { description: "look", prompt: "look", subagent_type: "explore", background: true }
                })
          }
        })
      )
    )
  )

  it.scoped("CH-4 task_wait with timeout_ms gives up after that much active time and says the task goes on", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const fiber = yield* Effect.fork(run(cwd))
      yield* waitUntil(requestsOf, (requests) => requests.some((r) => agentOf(r) !== undefined))
      yield* waitUntil(requestsOf, (requests) => requests.some((r) => latestResults(r)[0]?.startsWith("Started")))
      yield* advanceUntil(1_000, requestsOf, (requests) =>
        requests.some((r) => latestResults(r)[0]?.startsWith("Still"))
      )
      yield* TestClock.adjust(60_000)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "completed")
      const requests = yield* requestsOf
      const gaveUp = requests.map((r) => latestResults(r)[0] ?? "").find((t) => t.startsWith("Still"))!
      assert.match(gaveUp, /^Still running after 5s\. Task [0-9a-f]{8} \(explore: slow\) is running/)
      assert.strictEqual(outcome.text, "finally")
    }).pipe(
      Effect.provide(
        subagentsLayer({
          script: (request) => {
            if (agentOf(request) !== undefined) return [Fake.delay(60_000), ...Fake.answer("slow answer")]
            const [last] = latestResults(request)
            const lastMessage = request.messages.at(-1)
            if (lastMessage?.role === "user" && JSON.stringify(lastMessage).includes("[notice]"))
              return Fake.answer("finally")
            if (last === undefined) {
              return Fake.callTools({
                id: "b1",
                name: "task",
                args: { description: "slow", prompt: "slow", subagent_type: "explore", background: true }
              })
            }
            if (last.startsWith("Started")) {
              return Fake.callTools({
                id: "w1",
                name: "task_wait",
                args: { task_id: taskIdIn(last), timeout_ms: 5_000 }
              })
            }
            return Fake.answer("waiting")
          }
        })
      )
    )
  )

  it.scoped(
    "CH-4 the code reviewer of Claude Code's documentation works unchanged from a trusted project's .claude/agents",
    () =>
      Effect.gen(function* () {
        const cwd = yield* tempDir
        mkdirSync(path.join(cwd, ".claude", "agents"), { recursive: true })
        copyFileSync(
          fileURLToPath(new URL("./fixtures/claude-code/code-reviewer.md", import.meta.url)),
          path.join(cwd, ".claude", "agents", "code-reviewer.md")
        )
        const outcome = yield* run(cwd)
        assert.strictEqual(outcome.status, "completed")
        const requests = yield* requestsOf
        const reviewer = requests.find((r) => agentOf(r) === "code-reviewer")!
        assert.match(
          reviewer.system ?? "",
          /^You are a senior code reviewer ensuring high standards of code quality and security\./
        )
        assert.deepStrictEqual(reviewer.tools.map((t) => t.name).sort(), ["bash", "glob", "grep", "read"])
        const [result] = toolResults(yield* eventsOf(outcome.sessionId))
        assert.match(result!.result, /^<subagent_result task="[0-9a-f]{8}" agent="code-reviewer" status="completed"/)
        assert.include(result!.result, "No blocking issues.")
      }).pipe(
        Effect.provide(
          subagentsLayer({
            trustProject: true,
            script: (request) => {
              if (agentOf(request) === "code-reviewer") return Fake.answer("No blocking issues.")
              return answered(request)
                ? Fake.answer("reviewed")
                : Fake.callTools({
                    id: "r1",
                    name: "task",
                    args: { description: "review", prompt: "review my change", subagent_type: "code-reviewer" }
                  })
            }
          })
        )
      )
  )
})

describe("subagents: surfaces", () => {
  it.scoped("CH-4 /agents cancel stops a running background subagent; the panel shows the tree; /agents lists it", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const fiber = yield* Effect.fork(run(cwd))
      yield* waitUntil(requestsOf, (requests) => requests.some((r) => agentOf(r) === "explore"))
      const ui = yield* PluginUi.PluginUi
      const panel = yield* waitUntil(ui.panels, (panels) =>
        panels.some((p) => p.lines[0] === "agents: 1 running, 0 queued")
      )
      assert.match(panel[0]!.lines[1]!, /^[0-9a-f]{8} running explore: slow look$/)
      const store = yield* SessionStore
      const [root] = yield* store.sessions({ parentId: null })
      const host = yield* PluginHost.PluginHost
      const id = /^([0-9a-f]{8}) {2}running/m.exec(
        yield* host.commands.run("agents", "list", { sessionId: root!.id, cwd })
      )![1]!
      assert.strictEqual(
        yield* host.commands.run("agents", `cancel ${id}`, { sessionId: root!.id, cwd }),
        `Cancelled task ${id}: it is cancelled.`
      )
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "completed")
      assert.strictEqual(outcome.text, "noted")
      const listing = yield* host.commands.run("agents", "", { sessionId: root!.id, cwd })
      assert.match(listing.split("\n")[1]!, new RegExp(`^${id}  cancelled  explore  \\S+ +0 +cancelled$`))
      assert.strictEqual(
        yield* host.commands.run("agents", `cancel ${id}`, { sessionId: root!.id, cwd }),
        `Task ${id} is not running in this process (it is cancelled).`
      )
      assert.strictEqual(
        yield* host.commands.run("agents", "merge", { sessionId: root!.id, cwd }),
        "Usage: /agents [list] | /agents cancel <id> | /agents merge <id> | /agents discard <id> | /agents defs"
      )
    }).pipe(
      Effect.provide(
        subagentsLayer({
          script: (request) => {
            if (agentOf(request) !== undefined) return [...Fake.text("looking"), Fake.silence]
            const last = JSON.stringify(request.messages.at(-1))
            if (last.includes("[notice]")) return Fake.answer("noted")
            return answered(request)
              ? Fake.answer("waiting")
              : Fake.callTools({
                  id: "b1",
                  name: "task",
                  args: { description: "slow look", prompt: "look", subagent_type: "explore", background: true }
                })
          }
        })
      )
    )
  )

  it.scoped("CH-4 /agents defs lists every agent with where it comes from, and the problems of agent files", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      mkdirSync(path.join(cwd, ".alisio", "agents"), { recursive: true })
      writeFileSync(
        path.join(cwd, ".alisio", "agents", "explore.md"),
        "---\ndescription: My explore\ntools: Read\n---\nLook.\n"
      )
      writeFileSync(path.join(cwd, ".alisio", "agents", "broken.md"), "---\ndescription: d\nmaxTurns: -1\n---\nB\n")
      const host = yield* PluginHost.PluginHost
      const defs = yield* host.commands.run("agents", "defs", { cwd })
      const lines = defs.split("\n")
      assert.strictEqual(lines[0], "Agents (the first of each name wins):")
      assert.strictEqual(
        lines[1],
        `explore  project (.alisio/agents) ${path.join(cwd, ".alisio", "agents", "explore.md")}`
      )
      assert.include(defs, "general  builtin\n    General-purpose agent")
      assert.include(defs, "Hidden by an agent of the same name found first:\nexplore  builtin")
      assert.include(
        defs,
        `  error: ${path.join(cwd, ".alisio", "agents", "broken.md")}:3: maxTurns: expected a positive whole number, got -1`
      )
      const context = yield* host.contextFor({ cwd, prompt: "hi", model: "fake-model" })
      assert.include(
        context,
        "Subagents you can delegate to with the task tool (subagent_type: description):\n- explore: My explore\n"
      )
      const ui = yield* PluginUi.PluginUi
      assert.deepStrictEqual(
        (yield* ui.notifications).map((n) => `${n.level}: ${n.message}`),
        [
          `error: agent file: ${path.join(cwd, ".alisio", "agents", "broken.md")}:3: maxTurns: expected a positive whole number, got -1`
        ]
      )
    }).pipe(Effect.provide(subagentsLayer({ script: [], trustProject: true })))
  )
})
