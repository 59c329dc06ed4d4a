import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as FakeProvider from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import { HumanWaits } from "@alisio/runtime/HumanWaits"
import * as Interaction from "@alisio/runtime/Interaction"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { commandPrefix, Grants, offerFor } from "../../src/tui/Grants.js"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import * as TuiInteraction from "../../src/tui/TuiInteraction.js"
import { showWaits } from "../../src/tui/Waits.js"
import { settle, VirtualTerminal } from "./VirtualTerminal.js"

const noteTool = defineTool({
  name: "note",
  description: "Writes a note.",
  effect: "write",
  input: Schema.Struct({ text: Schema.String }),
  run: ({ text }) => Effect.succeed(textResult(`noted: ${text}`))
})

const askTool = defineTool({
  name: "ask",
  description: "Asks the person.",
  effect: "internal",
  input: Schema.Struct({ question: Schema.String }),
  run: ({ question }, context) =>
    Effect.map(context.askUser({ question, options: ["red", "blue"] }), (answer) => textResult(`answer: ${answer}`))
})

const peekTool = defineTool({
  name: "peek",
  description: "Looks at a path.",
  effect: "read",
  input: Schema.Struct({ path: Schema.String }),
  run: ({ path }, context) => Effect.as(context.approveExternalPath(path), textResult(`looked at ${path}`))
})

const planTool = defineTool({
  name: "propose",
  description: "Puts a plan to the person.",
  effect: "internal",
  input: Schema.Struct({ plan: Schema.String }),
  run: ({ plan }, context) =>
    context.reviewPlan === undefined
      ? Effect.succeed(textResult("no review"))
      : Effect.map(context.reviewPlan(plan), (decision) =>
          textResult(decision.approved ? "approved" : `changes: ${decision.feedback ?? ""}`)
        )
})

const until = (check: () => boolean) =>
  Effect.promise(async () => {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
    assert.isTrue(check(), "the condition never held")
  })

const harness = (script: FakeProvider.Script, tools = [noteTool]) => {
  const board = new TuiInteraction.WaitBoard()
  const grants = new Grants()
  const layer = AgentRuntime.layer({
    tools,
    interaction: TuiInteraction.layer(board, { approveAll: false, grants })
  }).pipe(Layer.provideMerge(FakeProvider.layer(script)), Layer.provideMerge(SessionStore.layerMemory))
  return { board, grants, layer }
}

describe("TUI waits", () => {
  it.live(
    "UI-1 LIM-1 an approval is a dialog; the clock pauses while it is open; 'always' approves the next call of the tool",
    () => {
      const { board, grants, layer } = harness([
        FakeProvider.callTools({ id: "c1", name: "note", args: { text: "one" } }),
        FakeProvider.callTools({ id: "c2", name: "note", args: { text: "two" } }),
        FakeProvider.answer("done")
      ])
      const terminal = new VirtualTerminal(60, 20)
      const screen = new Screen(terminal, makeTheme({ color: false }))
      return Effect.gen(function* () {
        screen.tui.start()
        yield* Effect.addFinalizer(() => Effect.sync(() => screen.tui.stop()))
        yield* showWaits(screen, board, grants)
        const events: Array<KnownRunEvent> = []
        const runner = yield* Runner
        const waits = yield* HumanWaits
        const run = yield* Effect.fork(
          runner.run({
            cwd: "/tmp",
            prompt: "note twice",
            model: "fake",
            onEvent: (event) => Effect.sync(() => events.push(event))
          })
        )
        yield* until(() => board.size === 1)
        const sessionId = events[0]!.sessionId
        const open = yield* waits.openBelow(sessionId)
        assert.strictEqual(yield* open.get, 1, "the wait counts for the session: its active clock is paused")
        yield* Effect.promise(settle)
        const shown = (yield* Effect.promise(() => terminal.screen())).join("\n")
        assert.include(shown, "Allow note (write)?")
        assert.include(shown, "text: one")
        assert.include(shown, "Yes, and allow note for this session")
        assert.include(shown, "waiting for you · clock paused", "the status line says the clock stands still")
        terminal.send("a")
        const outcome = yield* Fiber.join(run)
        assert.strictEqual(outcome.status, "completed")
        assert.strictEqual(yield* open.get, 0)
        const resolved = events.flatMap((event) => (event.type === "approval_resolved" ? [event.data] : []))
        assert.deepStrictEqual(
          resolved.map((data) => [data.approved, data.by]),
          [
            [true, "person"],
            [true, "policy"]
          ]
        )
        assert.strictEqual(board.size, 0)
      }).pipe(Effect.provide(layer), Effect.scoped)
    }
  )

  it.live("UI-1 CH-4 a subagent's approval names the agent path that asks", () => {
    const board = new TuiInteraction.WaitBoard()
    const grants = new Grants()
    const terminal = new VirtualTerminal(80, 20)
    const screen = new Screen(terminal, makeTheme({ color: false }))
    return Effect.gen(function* () {
      screen.tui.start()
      yield* Effect.addFinalizer(() => Effect.sync(() => screen.tui.stop()))
      yield* showWaits(screen, board, grants)
      const answers: Array<boolean> = []
      board.add({
        _tag: "Approval",
        request: {
          sessionId: "child" as never,
          approvalId: "a1",
          kind: "tool",
          summary: "bash: ls",
          tool: "bash",
          effect: "external",
          arguments: JSON.stringify({ command: "ls" }),
          label: "general › explore"
        },
        answer: (answer) => answers.push(answer.approved)
      })
      yield* Effect.promise(settle)
      const shown = (yield* Effect.promise(() => terminal.screen())).join("\n")
      assert.include(shown, "general › explore: Allow bash (external)?")
      terminal.send("n")
      yield* until(() => answers.length === 1)
      assert.deepStrictEqual(answers, [false])
    }).pipe(Effect.scoped)
  })

  it.live(
    "UI-1 CH-4 'always' answers the open approvals it covers: subagents asking the same at once are asked once",
    () => {
      const board = new TuiInteraction.WaitBoard()
      const grants = new Grants()
      const terminal = new VirtualTerminal(80, 20)
      const screen = new Screen(terminal, makeTheme({ color: false }))
      return Effect.gen(function* () {
        screen.tui.start()
        yield* Effect.addFinalizer(() => Effect.sync(() => screen.tui.stop()))
        yield* showWaits(screen, board, grants)
        const answers: Array<[string, boolean, string]> = []
        // As the TUI's Interaction does: an answered wait leaves the board.
        const ask = (id: string, command: string, label: string) => {
          const wait: TuiInteraction.Wait = {
            _tag: "Approval",
            request: {
              sessionId: `child-${id}` as never,
              approvalId: id,
              kind: "tool",
              summary: `bash: ${command}`,
              tool: "bash",
              effect: "external",
              arguments: JSON.stringify({ command }),
              label
            },
            answer: (answer) => {
              answers.push([id, answer.approved, answer.by])
              board.remove(wait)
            }
          }
          board.add(wait)
        }
        ask("a1", "npm test", "general")
        ask("a2", "npm test -- --watch=false", "general")
        ask("a3", "rm -r build", "general")
        ask("a4", "npm test", "general › general")
        yield* Effect.promise(settle)
        terminal.send("a")
        yield* until(() => answers.length === 3)
        assert.deepStrictEqual(answers, [
          ["a2", true, "policy"],
          ["a4", true, "policy"],
          ["a1", true, "person"]
        ])
        assert.strictEqual(board.size, 1, "what the grant does not cover is still asked")
        yield* Effect.promise(settle)
        assert.include((yield* Effect.promise(() => terminal.screen())).join("\n"), "rm -r build")
      }).pipe(Effect.scoped)
    }
  )

  it.live("UI-1 a cancelled run withdraws its open wait: the dialog goes and the editor is back", () => {
    const { board, grants, layer } = harness([FakeProvider.callTools({ id: "c1", name: "note", args: { text: "x" } })])
    const terminal = new VirtualTerminal(60, 20)
    const screen = new Screen(terminal, makeTheme({ color: false }))
    return Effect.gen(function* () {
      yield* showWaits(screen, board, grants)
      const runner = yield* Runner
      const run = yield* Effect.fork(runner.run({ cwd: "/tmp", prompt: "note", model: "fake" }))
      yield* until(() => board.size === 1 && screen.dialogOpen)
      yield* Fiber.interrupt(run)
      assert.strictEqual(board.size, 0)
      assert.isFalse(screen.dialogOpen)
    }).pipe(Effect.provide(layer), Effect.scoped)
  })

  it.live("UI-1 ask_user_question gets the option the person picks", () => {
    const { board, grants, layer } = harness(
      [
        FakeProvider.callTools({ id: "q1", name: "ask", args: { question: "Which colour?" } }),
        FakeProvider.answer("ok")
      ],
      [askTool]
    )
    const terminal = new VirtualTerminal(60, 20)
    const screen = new Screen(terminal, makeTheme({ color: false }))
    return Effect.gen(function* () {
      screen.tui.start()
      yield* Effect.addFinalizer(() => Effect.sync(() => screen.tui.stop()))
      yield* showWaits(screen, board, grants)
      const runner = yield* Runner
      const results: Array<string> = []
      const run = yield* Effect.fork(
        runner.run({
          cwd: "/tmp",
          prompt: "ask",
          model: "fake",
          onEvent: (event) => Effect.sync(() => event.type === "tool_call_completed" && results.push(event.data.result))
        })
      )
      yield* until(() => board.current?._tag === "Question")
      terminal.send("2")
      yield* Fiber.join(run)
      assert.deepStrictEqual(results, ["answer: blue"])
    }).pipe(Effect.provide(layer), Effect.scoped)
  })

  it.live("UI-1 LIM-1 a tool asking for plan review gets the person's decision; the clock pauses meanwhile", () => {
    const { board, grants, layer } = harness(
      [
        FakeProvider.callTools({ id: "p1", name: "propose", args: { plan: "1. read\n2. fix" } }),
        FakeProvider.answer("ok")
      ],
      [planTool]
    )
    const terminal = new VirtualTerminal(60, 20)
    const screen = new Screen(terminal, makeTheme({ color: false }))
    return Effect.gen(function* () {
      screen.tui.start()
      yield* Effect.addFinalizer(() => Effect.sync(() => screen.tui.stop()))
      yield* showWaits(screen, board, grants)
      const runner = yield* Runner
      const waits = yield* HumanWaits
      const results: Array<string> = []
      let sessionId: string | undefined
      const run = yield* Effect.fork(
        runner.run({
          cwd: "/tmp",
          prompt: "plan",
          model: "fake",
          onEvent: (event) =>
            Effect.sync(() => {
              sessionId ??= event.sessionId
              if (event.type === "tool_call_completed") results.push(event.data.result)
            })
        })
      )
      yield* until(() => board.current?._tag === "Plan")
      const open = yield* waits.openBelow(sessionId as never)
      assert.strictEqual(yield* open.get, 1)
      yield* Effect.promise(settle)
      const review = (yield* Effect.promise(() => terminal.screen())).join("\n")
      assert.include(review, "Plan review")
      assert.include(review, "2. fix", "the plan is shown")
      assert.include(review, "Approve the plan")
      assert.include(review, "waiting for you · clock paused")
      terminal.send("n")
      for (const key of "smaller steps") terminal.send(key)
      terminal.send("\r")
      yield* Fiber.join(run)
      assert.deepStrictEqual(results, ["changes: smaller steps"])
    }).pipe(Effect.provide(layer), Effect.scoped)
  })

  it.live(
    "UI-1 TL-3 an access outside the workspace is a dialog naming the path; 'always' grants its folder for the session",
    () => {
      const { board, grants, layer } = harness(
        [
          FakeProvider.callTools({ id: "e1", name: "peek", args: { path: "/etc/hosts" } }),
          FakeProvider.callTools({ id: "e2", name: "peek", args: { path: "/etc/passwd" } }),
          FakeProvider.callTools({ id: "e3", name: "peek", args: { path: "/var/log" } }),
          FakeProvider.answer("done")
        ],
        [peekTool]
      )
      const terminal = new VirtualTerminal(70, 20)
      const screen = new Screen(terminal, makeTheme({ color: false }))
      return Effect.gen(function* () {
        screen.tui.start()
        yield* Effect.addFinalizer(() => Effect.sync(() => screen.tui.stop()))
        yield* showWaits(screen, board, grants)
        const runner = yield* Runner
        const events: Array<KnownRunEvent> = []
        const run = yield* Effect.fork(
          runner.run({
            cwd: "/tmp/workspace",
            prompt: "peek",
            model: "fake",
            onEvent: (event) => Effect.sync(() => events.push(event))
          })
        )
        yield* until(() => board.size === 1)
        yield* Effect.promise(settle)
        const first = (yield* Effect.promise(() => terminal.screen())).join("\n")
        assert.include(first, "Allow peek to access a path outside the workspace?")
        assert.include(first, "/etc/hosts")
        assert.include(first, "Yes, and allow access to /etc for this session")
        terminal.send("a")
        // /etc/passwd is under the granted folder; /var/log is not, and the person says no.
        yield* until(() => board.current?._tag === "Approval" && board.current.request.path === "/var/log")
        terminal.send("n")
        const outcome = yield* Fiber.join(run)
        assert.strictEqual(outcome.status, "completed")
        const requested = events.flatMap((event) => (event.type === "approval_requested" ? [event.data.kind] : []))
        assert.deepStrictEqual(requested, ["external_directory", "external_directory", "external_directory"])
        const resolved = events.flatMap((event) => (event.type === "approval_resolved" ? [event.data] : []))
        assert.deepStrictEqual(
          resolved.map((data) => [data.approved, data.by]),
          [
            [true, "person"],
            [true, "policy"],
            [false, "person"]
          ]
        )
        const results = events.flatMap((event) => (event.type === "tool_call_completed" ? [event.data.status] : []))
        assert.deepStrictEqual(results, ["completed", "completed", "error"])
      }).pipe(Effect.provide(layer), Effect.scoped)
    }
  )

  it.live(
    "UI-1 headless runs keep their policy: a plan review has nobody to ask, an approval follows the policy",
    () => {
      const layer = AgentRuntime.layer({
        tools: [planTool, noteTool],
        interaction: Interaction.layerHeadless({ approveAll: false })
      }).pipe(
        Layer.provideMerge(
          FakeProvider.layer([
            FakeProvider.callTools(
              { id: "p1", name: "propose", args: { plan: "1. read" } },
              { id: "n1", name: "note", args: { text: "x" } }
            ),
            FakeProvider.answer("ok")
          ])
        ),
        Layer.provideMerge(SessionStore.layerMemory)
      )
      return Effect.gen(function* () {
        const runner = yield* Runner
        const completed: Array<readonly [string, string]> = []
        const outcome = yield* runner.run({
          cwd: "/tmp",
          prompt: "plan",
          model: "fake",
          onEvent: (event) =>
            Effect.sync(() => {
              if (event.type === "tool_call_completed") completed.push([event.data.status, event.data.result])
            })
        })
        assert.strictEqual(outcome.status, "completed")
        assert.deepStrictEqual(completed[0], [
          "error",
          "No person is available to review a plan here; go on with your best judgement."
        ])
        assert.strictEqual(completed[1]?.[0], "denied")
      }).pipe(Effect.provide(layer))
    }
  )

  it("UI-1 a bash grant covers a command prefix, never a compound command; a folder grant covers what is under it", () => {
    assert.strictEqual(commandPrefix("git status --short"), "git status")
    assert.strictEqual(commandPrefix("ls -la"), "ls")
    assert.strictEqual(commandPrefix("git -C x push"), "git")
    assert.isUndefined(commandPrefix("ls; rm -rf /"))
    assert.isUndefined(commandPrefix("echo $(whoami)"))
    assert.isUndefined(commandPrefix("FOO=1 make"))
    const bash = (command: string) => ({
      sessionId: "s" as never,
      approvalId: "a",
      kind: "tool" as const,
      summary: "",
      tool: "bash",
      arguments: JSON.stringify({ command })
    })
    const grants = new Grants()
    grants.switchTo(undefined)
    grants.grant(offerFor(bash("git status"))!.key)
    assert.isTrue(grants.allows(bash("git status -s")))
    assert.isFalse(grants.allows(bash("git push")))
    assert.isFalse(grants.allows(bash("git status && git push")))
    grants.adopt("s1")
    grants.switchTo("s2")
    assert.isFalse(grants.allows(bash("git status")), "grants belong to their session")
    grants.switchTo("s1")
    assert.isTrue(grants.allows(bash("git status")))
    const outside = (path: string) => ({
      sessionId: "s" as never,
      approvalId: "a",
      kind: "external_directory" as const,
      summary: "",
      tool: "read",
      path
    })
    grants.grant(offerFor(outside("/etc/hosts"))!.key)
    assert.isTrue(grants.allows(outside("/etc/passwd")))
    assert.isFalse(grants.allows(outside("/etcetera/x")))
  })
})
