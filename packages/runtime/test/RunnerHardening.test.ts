// The runner's guarantees under stress: cut calls never run, one terminal event whatever the
// store does, every started call and asked approval ends, interruption never splits commit from
// publish, only real content is progress, and memory stays bounded in a long-lived process.

import { OutputTruncatedError } from "@alisio/domain/Errors"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { isTerminalType } from "@alisio/domain/RunEvent"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as HumanWaits from "@alisio/runtime/HumanWaits"
import * as Interaction from "@alisio/runtime/Interaction"
import * as RunEvents from "@alisio/runtime/RunEvents"
import * as Runner from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Tools from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { ProgressGate } from "../src/internal/progressGate.js"
import { isWholeArguments } from "../src/internal/truncation.js"
import { diskFull, layerFailing } from "./helpers/failingStore.js"
import {
  assertContract,
  assertPairs,
  baseOptions,
  collect,
  interruptAt,
  ofType,
  peekTool,
  pingTool,
  runnerLayer,
  testTools,
  typesOf
} from "./helpers/harness.js"

/** A raw part step, for what the helpers never build (empty deltas). */
const part = (p: Fake.Step & { _tag: "Part" }): Fake.Step => p
const emptyText = part({ _tag: "Part", part: { _tag: "TextDelta", text: "" } })

/** A test logger that keeps every message. */
const captureLogs = () => {
  const lines: Array<string> = []
  const layer = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message }) => {
      lines.push(JSON.stringify(message))
    })
  )
  return { lines, layer }
}

describe("LIM-6 a call cut by the output budget never runs", () => {
  it("LIM-6 whole arguments are one complete JSON object; empty, partial or bare values are not", () => {
    assert.isTrue(isWholeArguments('{"note":"x"}'))
    assert.isTrue(isWholeArguments(" {} "))
    for (const cut of ["", "  ", '{"note":', "1", '"abc"', "[]", "null", "{} {"]) {
      assert.isFalse(isWholeArguments(cut), JSON.stringify(cut))
    }
  })

  const ping = pingTool()
  it.effect("LIM-6 at finish length, a call with a name and empty arguments is cut, never run as {}", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.strictEqual(ping.runs(), 0, "the ping tool never ran")
      assert.strictEqual(ofType(events, "tool_call_started").length, 0)
      assert.deepStrictEqual(
        ofType(events, "truncation_recovery").map((e) => e.data.reason),
        ["tool_call_cut"]
      )
      const store = yield* SessionStore.SessionStore
      assert.strictEqual((yield* store.toolCalls(events[0]!.sessionId)).length, 0)
      assert.strictEqual(ofType(events, "run_completed")[0]?.data.text, "done")
    }).pipe(
      Effect.provide(
        runnerLayer({
          tools: [...testTools, ping.tool],
          script: [
            [...Fake.text("Pinging"), ...Fake.toolCall("c1", "ping", ""), Fake.finish("length")],
            Fake.answer("done")
          ]
        })
      )
    )
  )

  const reported = pingTool()
  it.effect("LIM-6 when the provider reports the cut, an ended call with empty arguments does not run either", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.strictEqual(reported.runs(), 1, "only the call with whole arguments ran")
      assert.deepStrictEqual(
        ofType(events, "tool_call_completed").map((e) => [e.data.toolCallId, e.data.status]),
        [["c1", "completed"]]
      )
      assert.deepStrictEqual(
        ofType(events, "truncation_recovery").map((e) => e.data.reason),
        ["tool_call_cut"]
      )
    }).pipe(
      Effect.provide(
        runnerLayer({
          tools: [...testTools, reported.tool],
          script: [
            [
              ...Fake.toolCall("c1", "ping", { note: "whole" }),
              ...Fake.toolCall("c2", "ping", ""),
              Fake.fail(new OutputTruncatedError({ message: "cut" }))
            ],
            Fake.answer("done")
          ]
        })
      )
    )
  )
})

describe("EV-5 exactly one terminal event, even when the store fails", () => {
  const logs = captureLogs()
  it.effect(
    "EV-5 a terminal event the store refuses is still published (without an eventId), and the failure logged",
    () =>
      Effect.gen(function* () {
        const events = yield* collect(baseOptions)
        assertPairs(events)
        assert.deepStrictEqual(
          events.map((e) => e.seq),
          events.map((_, i) => i + 1)
        )
        const last = events.at(-1)!
        assert.strictEqual(last.type, "run_completed")
        assert.isUndefined(last.eventId, "not stored, so no eventId")
        assert.strictEqual(events.filter((e) => isTerminalType(e.type)).length, 1)
        const store = yield* SessionStore.SessionStore
        const runs = yield* store.runs!(last.sessionId)
        assert.deepStrictEqual(
          runs.map((r) => r.status),
          ["completed"]
        )
        assert.isTrue(
          logs.lines.some((line) => line.includes("run_completed event was published but could not be stored")),
          logs.lines.join("\n")
        )
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: [Fake.answer("ok")],
            store: layerFailing({ failEvent: (event) => isTerminalType(event.type) })
          })
        ),
        Effect.provide(logs.layer)
      )
  )

  it.effect("EV-5 a disk that fills up mid-run fails the run once: its ending's failed writes log no second line", () =>
    Effect.gen(function* () {
      const runner = yield* Runner.Runner
      const outcome = yield* runner.run(baseOptions)
      assert.strictEqual(outcome.status, "failed")
      assert.strictEqual(outcome.error, diskFull.message)
      assert.deepStrictEqual(
        logs.lines.filter((line) => line.includes(diskFull.message)),
        [],
        "the run's failure already says the disk is full"
      )
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.answer("ok")],
          store: layerFailing({ fullFrom: (event) => event.type === "message" })
        })
      ),
      Effect.provide(logs.layer)
    )
  )

  it.effect(
    "EV-5 when run_started cannot be stored the run still ends through finalize: run_failed, row not left running",
    () =>
      Effect.gen(function* () {
        const seen: Array<KnownRunEvent> = []
        const runner = yield* Runner.Runner
        const outcome = yield* runner.run({ ...baseOptions, onEvent: (event) => Effect.sync(() => seen.push(event)) })
        assert.strictEqual(outcome.status, "failed")
        assert.strictEqual(outcome.failure?.code, "internal")
        assert.include(outcome.error, "storing run_started")
        assert.deepStrictEqual(typesOf(seen), ["run_failed"])
        assert.strictEqual(seen[0]!.seq, 1)
        const store = yield* SessionStore.SessionStore
        const runs = yield* store.runs!(outcome.sessionId)
        assert.deepStrictEqual(
          runs.map((r) => r.status),
          ["failed"]
        )
        assert.strictEqual((yield* store.session(outcome.sessionId)).status, "failed")
        assert.strictEqual((yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)).length, 0)
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: [Fake.answer("never asked")],
            store: layerFailing({ failEvent: (event) => event.type === "run_started" })
          })
        )
      )
  )

  it.effect("EV-5 when the session's running status cannot be written the run ends run_failed through finalize", () =>
    Effect.gen(function* () {
      const seen: Array<KnownRunEvent> = []
      const runner = yield* Runner.Runner
      const outcome = yield* runner.run({ ...baseOptions, onEvent: (event) => Effect.sync(() => seen.push(event)) })
      assert.strictEqual(outcome.status, "failed")
      assertContract(seen)
      assert.deepStrictEqual(typesOf(seen), ["run_started", "run_failed"])
      const store = yield* SessionStore.SessionStore
      const runs = yield* store.runs!(outcome.sessionId)
      assert.deepStrictEqual(
        runs.map((r) => r.status),
        ["failed"]
      )
      assert.strictEqual((yield* store.session(outcome.sessionId)).status, "failed")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.answer("never asked")],
          store: layerFailing({ failStatus: (_, status) => status === "running" })
        })
      )
    )
  )
})

describe("TL-4 every started call ends, every asked approval is resolved", () => {
  it.effect("TL-4 cancelling while a tool waits for approval ends the call cancelled and withdraws the approval", () =>
    Effect.gen(function* () {
      const events = yield* interruptAt(baseOptions, "approval_requested")
      assertContract(events)
      assert.deepStrictEqual(typesOf(events).slice(-6), [
        "approval_requested",
        "approval_resolved",
        "tool_call_completed",
        "message",
        "message",
        "run_cancelled"
      ])
      assert.deepStrictEqual(ofType(events, "approval_resolved")[0]!.data, {
        approvalId: ofType(events, "approval_requested")[0]!.data.approvalId,
        approved: false,
        by: "person",
        cancelled: true
      })
      assert.strictEqual(ofType(events, "tool_call_completed")[0]!.data.status, "cancelled")
      const store = yield* SessionStore.SessionStore
      const journal = yield* store.toolCalls(events[0]!.sessionId)
      assert.deepStrictEqual(
        journal.map((c) => c.status),
        ["cancelled"]
      )
      const runs = yield* store.runs!(events[0]!.sessionId)
      assert.strictEqual(runs[0]?.status, "cancelled")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.callTools({ id: "c1", name: "note", args: { text: "x" } })],
          interaction: Interaction.layerScripted({ approve: () => Effect.never })
        })
      )
    )
  )

  it.effect("TL-3 cancelling during an external-directory approval inside a tool ends both as well", () =>
    Effect.gen(function* () {
      const events = yield* interruptAt(baseOptions, "approval_requested")
      assertContract(events)
      assert.strictEqual(ofType(events, "approval_requested")[0]!.data.kind, "external_directory")
      assert.strictEqual(ofType(events, "approval_resolved")[0]!.data.cancelled, true)
      assert.strictEqual(ofType(events, "tool_call_completed")[0]!.data.status, "cancelled")
      const store = yield* SessionStore.SessionStore
      const journal = yield* store.toolCalls(events[0]!.sessionId)
      assert.deepStrictEqual(
        journal.map((c) => c.status),
        ["cancelled"]
      )
    }).pipe(
      Effect.provide(
        runnerLayer({
          tools: [...testTools, peekTool],
          script: [Fake.callTools({ id: "c1", name: "peek", args: { path: "/elsewhere/secret" } })],
          interaction: Interaction.layerScripted({ approve: () => Effect.never })
        })
      )
    )
  )

  it("EV-5 the contract check refuses a started call never completed and an approval never resolved", () => {
    const stamp = { schemaVersion: 1 as const, runId: "r" as never, sessionId: "s" as never, time: "t" }
    const started = {
      ...stamp,
      seq: 1,
      type: "tool_call_started" as const,
      data: { toolCallId: "c1" as never, name: "note", arguments: "{}", effect: "write" as const }
    }
    const asked = {
      ...stamp,
      seq: 2,
      type: "approval_requested" as const,
      data: { approvalId: "a1", kind: "tool" as const, toolCallId: "c1" as never, summary: "note {}" }
    }
    const resolved = {
      ...stamp,
      seq: 3,
      type: "approval_resolved" as const,
      data: { approvalId: "a1", approved: false, by: "policy" as const }
    }
    const completed = {
      ...stamp,
      seq: 4,
      type: "tool_call_completed" as const,
      data: { toolCallId: "c1" as never, name: "note", status: "denied" as const, result: "no", durationMs: 0 }
    }
    assert.throws(() => assertPairs([started]), /started and never completed/)
    assert.throws(() => assertPairs([started, asked, completed]), /completed with an approval still open/)
    assert.throws(() => assertPairs([started, completed, completed]), /completed without being started, or twice/)
    assert.throws(() => assertPairs([{ ...asked, data: { ...asked.data, toolCallId: undefined } }]), /never resolved/)
    assert.throws(() => assertPairs([resolved]), /resolved without being asked/)
    assert.doesNotThrow(() => assertPairs([started, asked, resolved, completed]))
  })
})

describe("EV-3 commit and publish are one step under interruption", () => {
  const committed = Deferred.unsafeMake<void>(FiberId.none)
  it.effect("EV-3 a run interrupted right after an event is committed still publishes it; no seq is reused", () =>
    Effect.gen(function* () {
      const seen: Array<KnownRunEvent> = []
      const runner = yield* Runner.Runner
      const fiber = yield* Effect.fork(
        runner.run({ ...baseOptions, onEvent: (event) => Effect.sync(() => seen.push(event)) })
      )
      yield* Deferred.await(committed)
      // The interruption lands while the turn_completed row is committed and not yet returned.
      const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(interrupting)
      const store = yield* SessionStore.SessionStore
      const stored = yield* store.events(seen[0]!.sessionId)
      const seqs = stored.map((e) => e.seq)
      assert.deepStrictEqual(seqs, [...new Set(seqs)], "every stored event has its own seq")
      assert.deepStrictEqual(
        stored.map((e) => e.eventId),
        seen.filter((e) => e.eventId !== undefined).map((e) => e.eventId),
        "every stored event was published"
      )
      assert.include(typesOf(seen), "turn_completed")
      assert.strictEqual(seen.at(-1)?.type, "run_cancelled")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.callTools({ id: "c1", name: "echo", args: { text: "a" } }), Fake.answer("ok")],
          store: layerFailing({
            afterCommit: {
              match: (event) => event.type === "turn_completed",
              run: Effect.zipRight(Deferred.succeed(committed, undefined), Effect.sleep(1_000))
            }
          })
        })
      )
    )
  )
})

describe("LIM-6 recoveries count in a row", () => {
  it.effect("LIM-6 a good turn resets the recoveries and restores a lowered effort", () =>
    Effect.gen(function* () {
      const events = yield* collect({ ...baseOptions, effort: "high" })
      assertContract(events)
      assert.strictEqual(events.at(-1)?.type, "run_completed")
      assert.deepStrictEqual(
        ofType(events, "truncation_recovery").map((e) => [e.data.attempt, e.data.effort]),
        [
          [1, "medium"],
          [1, "medium"],
          [2, "low"]
        ]
      )
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.deepStrictEqual(
        requests.map((r) => r.effort),
        ["high", "medium", "high", "medium", "low"]
      )
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            [Fake.finish("length")],
            Fake.callTools({ id: "c1", name: "echo", args: { text: "a" } }),
            [Fake.finish("length")],
            [Fake.finish("length")],
            Fake.answer("done")
          ]
        })
      )
    )
  )
})

describe("LIM-4 only real content is progress", () => {
  const emptyDeltas = (count: number, everyMs: number): ReadonlyArray<Fake.Step> =>
    Array.from({ length: count }, () => [emptyText, Fake.delay(everyMs)]).flat()

  it.effect("LIM-4 a server sending only empty deltas hits the first-token timeout, is resent, then fails", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect({ ...baseOptions, limits: { firstTokenTimeoutMs: 1_000 } }))
      yield* TestClock.adjust(1_000)
      yield* TestClock.adjust(1_000)
      const done = yield* Fiber.poll(fiber)
      assert.isTrue(Option.isSome(done), "ended after two silent attempts of 1 s")
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.strictEqual(ofType(events, "request_retry").length, 1)
      const failed = ofType(events, "run_failed")[0]!
      assert.strictEqual(failed.data.timeout?.kind, "first_token")
      assert.strictEqual(failed.data.timeout?.attempts, 2)
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            [...emptyDeltas(100, 300), Fake.silence],
            [...emptyDeltas(100, 300), Fake.silence]
          ]
        })
      )
    )
  )

  it.effect("LIM-4 empty deltas after real text do not hold off the idle timeout", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(
        collect({ ...baseOptions, limits: { firstTokenTimeoutMs: 1_000, streamIdleTimeoutMs: 5_000 } })
      )
      yield* TestClock.adjust(5_000)
      const done = yield* Fiber.poll(fiber)
      assert.isTrue(Option.isSome(done), "stalled 5 s after the text, empty deltas or not")
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.strictEqual(ofType(events, "run_failed")[0]!.data.timeout?.kind, "stream_idle")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [[...Fake.text("hi"), ...emptyDeltas(100, 1_000), ...Fake.text("late"), Fake.finish("stop")]]
        })
      )
    )
  )

  it.effect(
    "LIM-4 an idle timeout shorter than the first-token timeout stops a stall after the first token in time",
    () =>
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(
          collect({ ...baseOptions, limits: { firstTokenTimeoutMs: 60_000, streamIdleTimeoutMs: 5_000 } })
        )
        yield* TestClock.adjust(5_000)
        const done = yield* Fiber.poll(fiber)
        assert.isTrue(Option.isSome(done), "stalled 5 s after the text, not 60 s")
        const events = yield* Fiber.join(fiber)
        assertContract(events)
        assert.strictEqual(ofType(events, "run_failed")[0]!.data.timeout?.kind, "stream_idle")
      }).pipe(Effect.provide(runnerLayer({ script: [[...Fake.text("partial"), Fake.silence]] })))
  )

  it.effect("EV-4 ttftMs counts to the first real content, not to an empty delta", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(collect(baseOptions))
      yield* TestClock.adjust(300)
      const events = yield* Fiber.join(fiber)
      assertContract(events)
      assert.strictEqual(ofType(events, "turn_completed")[0]!.data.ttftMs, 300)
    }).pipe(
      Effect.provide(runnerLayer({ script: [[emptyText, Fake.reasoning(""), Fake.delay(300), ...Fake.answer("hi")]] }))
    )
  )
})

describe("TL-2 what the model is told", () => {
  it.effect("TL-2 with read-only, the unknown-tool error lists only the tools the run offers", () =>
    Effect.gen(function* () {
      const events = yield* collect({ ...baseOptions, readOnly: true })
      assertContract(events)
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.deepStrictEqual(requests[0]!.tools.map((t) => t.name).sort(), ["echo", "sleep"])
      assert.strictEqual(
        ofType(events, "tool_call_completed")[0]!.data.result,
        'Unknown tool "nope". Available tools: echo, sleep.'
      )
    }).pipe(
      Effect.provide(runnerLayer({ script: [Fake.callTools({ id: "c1", name: "nope", args: {} }), Fake.answer("ok")] }))
    )
  )

  it.effect("TL-2 an unknown tool names the one the model meant: its name after a prefix, or its spelling", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      const said = ofType(events, "tool_call_completed").map((e) => e.data.result.split(" Available tools")[0])
      assert.deepStrictEqual(said, [
        'Unknown tool "read_file". Did you mean "mcp__fs__read_file"?',
        'Unknown tool "Echo". Did you mean "echo"?',
        'Unknown tool "slep". Did you mean "sleep"?',
        'Unknown tool "zzzz".'
      ])
    }).pipe(
      Effect.provide(
        runnerLayer({
          tools: [
            ...testTools,
            defineTool({
              name: "mcp__fs__read_file",
              description: "Reads a file",
              effect: "read",
              input: Schema.Struct({}),
              run: () => Effect.succeed(textResult("contents"))
            })
          ],
          script: [
            Fake.callTools(
              { id: "c1", name: "read_file", args: {} },
              { id: "c2", name: "Echo", args: {} },
              { id: "c3", name: "slep", args: {} },
              { id: "c4", name: "zzzz", args: {} }
            ),
            Fake.answer("ok")
          ]
        })
      )
    )
  )

  it.effect("TL-2 a denial by the headless policy says so and names --yes, never that the user denied", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      const result = ofType(events, "tool_call_completed")[0]!.data.result
      assert.strictEqual(
        result,
        "Running note was denied by the headless policy: no one is here to approve it. " +
          "The person running Alisio can allow it with --yes."
      )
      assert.notInclude(result.toLowerCase(), "user")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.callTools({ id: "c1", name: "note", args: { text: "x" } }), Fake.answer("ok")],
          interaction: Interaction.layerHeadless({ approveAll: false })
        })
      )
    )
  )

  it.effect("TL-2 a person's denial still says the user denied it", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      assert.strictEqual(ofType(events, "tool_call_completed")[0]!.data.result, "Running note was denied by the user.")
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [Fake.callTools({ id: "c1", name: "note", args: { text: "x" } }), Fake.answer("ok")],
          interaction: Interaction.layerScripted({ approve: () => Effect.succeed(false) })
        })
      )
    )
  )
})

describe("TL-2 no one approves a call that cannot run", () => {
  const asked: Array<string | undefined> = []
  it.effect("TL-2 a call whose arguments the tool refuses gets the error at once; no approval is asked", () =>
    Effect.gen(function* () {
      const events = yield* collect(baseOptions)
      assertContract(events)
      const [bad, good] = ofType(events, "tool_call_completed").map((e) => e.data)
      assert.strictEqual(bad!.status, "error")
      assert.strictEqual(
        bad!.result,
        "Invalid arguments for note: text: expected string, got 3. Call it again with arguments that match its input schema."
      )
      // The valid call to the same tool still asks, and runs once approved.
      assert.deepStrictEqual([good!.status, good!.result], ["completed", "noted: fine"])
      assert.deepStrictEqual(
        ofType(events, "approval_requested").map((e) => e.data.toolCallId as string | undefined),
        ["c2"]
      )
      assert.deepStrictEqual(asked, ["c2"])
    }).pipe(
      Effect.provide(
        runnerLayer({
          script: [
            Fake.callTools({ id: "c1", name: "note", args: { text: 3 } }),
            Fake.callTools({ id: "c2", name: "note", args: { text: "fine" } }),
            Fake.answer("ok")
          ],
          interaction: Interaction.layerScripted({
            approve: (request) => {
              asked.push(request.toolCallId)
              return Effect.succeed(true)
            }
          })
        })
      )
    )
  )
})

describe("EV-3 a call's progress is bounded", () => {
  const line = `${"x".repeat(99)}\n`
  /** `flood`: streams `chunks` pieces of 62 500 characters at once, then the line a command ends with. */
  const flood = defineTool({
    name: "flood",
    description: "Prints a lot.",
    effect: "read",
    input: Schema.Struct({ chunks: Schema.Number }),
    run: ({ chunks }, context) =>
      Effect.gen(function* () {
        for (let i = 0; i < chunks; i++) yield* context.progress(line.repeat(625))
        yield* context.progress("build failed at step 9\n")
        return textResult("flooded")
      })
  })

  it.effect(
    "EV-3 a tool printing faster than anyone reads streams its start, a count of what it left out and its end",
    () =>
      Effect.gen(function* () {
        const events = yield* collect(baseOptions)
        assertContract(events)
        const progressOf = (id: string) =>
          ofType(events, "tool_progress")
            .filter((e) => e.data.toolCallId === id)
            .map((e) => e.data.text)
        const progress = progressOf("c1")
        // 50 pieces were printed at once: the burst of 1 000 000 characters passes (16 pieces), then
        // the end of what was left out, from a line's start, after a count of the rest.
        assert.deepStrictEqual(
          progress.slice(0, -1),
          Array.from({ length: 16 }, () => line.repeat(625))
        )
        const left = 34 * 62_500 + 23 - 39 * 100 - 23
        assert.strictEqual(
          progress.at(-1),
          `\n[… ${left} characters of output not streamed (too fast to follow) …]\n${line.repeat(39)}build failed at step 9\n`
        )
        assert.deepStrictEqual(
          ofType(events, "tool_call_completed").map((e) => e.data.result),
          ["flooded", "flooded"],
          "the results are the tool's own"
        )
        // A call that prints little streams all of it.
        assert.strictEqual(progressOf("c2").join(""), `${line.repeat(625)}build failed at step 9\n`)
      }).pipe(
        Effect.provide(
          runnerLayer({
            tools: [flood],
            script: [
              Fake.callTools({ id: "c1", name: "flood", args: { chunks: 50 } }),
              Fake.callTools({ id: "c2", name: "flood", args: { chunks: 1 } }),
              Fake.answer("ok")
            ]
          })
        )
      )
  )

  it("EV-3 once the burst is spent, output passes at the steady rate and says what it skipped", () => {
    const gate = new ProgressGate(100, 10, 20)
    assert.strictEqual(gate.offer("a".repeat(80), 0), "a".repeat(80))
    assert.strictEqual(gate.offer("b".repeat(30), 0), undefined, "over the burst")
    assert.strictEqual(gate.offer("c".repeat(31), 1_000), undefined, "20 + 10 characters a second is not yet 31")
    assert.strictEqual(
      gate.offer("d".repeat(30), 2_000),
      `\n[… 61 characters of output not streamed (too fast to follow) …]\n${"d".repeat(30)}`
    )
    assert.strictEqual(gate.end(), undefined, "nothing left out since")
    assert.strictEqual(gate.offer(`${"e".repeat(15)}\n`, 2_000), undefined, "10 characters are left")
    assert.strictEqual(gate.end(), `${"e".repeat(15)}\n`, "what was left out is shown whole when it fits the tail")
  })
})

describe("EV-1 bounded buffers: back-pressure, never a lost event", () => {
  /** Lets the forked run go as far as it can: until `progress` stops moving. */
  const settle = (progress: () => number) =>
    Effect.gen(function* () {
      let still = 0
      let last = progress()
      for (let i = 0; i < 20_000 && still < 200; i++) {
        yield* Effect.yieldNow()
        const now = progress()
        still = now === last ? still + 1 : 0
        last = now
      }
    })
  const contiguous = (events: ReadonlyArray<KnownRunEvent>) =>
    assert.deepStrictEqual(
      events.map((e) => e.seq),
      events.map((_, i) => i + 1)
    )

  const capacity = 4
  const busLayer = () =>
    Runner.layer.pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          RunEvents.layerWith({ capacity }),
          HumanWaits.layer,
          Tools.layer(testTools),
          Interaction.layerHeadless({ approveAll: true })
        )
      ),
      Layer.provideMerge(Fake.layer([[...Fake.text("x".repeat(40), { chunks: 40 }), Fake.finish("stop")]])),
      Layer.provideMerge(SessionStore.layerMemory)
    )
  it.scoped("EV-1 a subscriber that falls behind holds the bus back; it then gets every event in order", () =>
    Effect.gen(function* () {
      const feed = yield* Effect.flatMap(RunEvents.RunEvents, (bus) => bus.subscribe)
      const seen: Array<KnownRunEvent> = []
      const fiber = yield* Effect.fork(
        Effect.flatMap(Runner.Runner, (runner) =>
          runner.run({ ...baseOptions, onEvent: (event) => Effect.sync(() => seen.push(event)) })
        )
      )
      yield* settle(() => seen.length)
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)), "the run waits for the subscriber")
      assert.isAtMost(seen.length, capacity, "no more published than the subscriber can hold")
      const got: Array<KnownRunEvent> = []
      while (got.length === 0 || !isTerminalType(got.at(-1)!.type)) got.push(yield* Queue.take(feed))
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.status, "completed")
      assert.strictEqual(got.length, 45)
      contiguous(got)
      assert.deepStrictEqual(got, seen)
    }).pipe(Effect.provide(busLayer()))
  )

  const many = 3 * Runner.streamBuffer
  const manyDeltas = runnerLayer({
    script: [[...Fake.text("y".repeat(many), { chunks: many }), Fake.finish("stop")]]
  })
  it.scoped("EV-1 Runner.stream holds at most streamBuffer events for a consumer that does not read", () =>
    Effect.gen(function* () {
      const runner = yield* Runner.Runner
      let observed = 0
      const pull = yield* Stream.toPull(
        runner.stream({
          ...baseOptions,
          onEvent: () =>
            Effect.sync(() => {
              observed += 1
            })
        })
      )
      const got: Array<KnownRunEvent> = [...(yield* pull)]
      yield* settle(() => observed)
      assert.isAtMost(observed, Runner.streamBuffer + 2, "the run waits for the consumer")
      for (;;) {
        const next = yield* Effect.either(pull)
        if (next._tag === "Left") break
        got.push(...next.right)
      }
      assert.strictEqual(got.length, many + 5)
      contiguous(got)
      assert.strictEqual(got.at(-1)?.type, "run_completed")
    }).pipe(Effect.provide(manyDeltas))
  )

  it.effect("CLI-2 a Runner.stream consumer that stops early cancels the run, which still ends through finalize", () =>
    Effect.gen(function* () {
      const runner = yield* Runner.Runner
      const first = yield* Stream.runCollect(Stream.take(runner.stream(baseOptions), 5))
      assert.strictEqual(first.length, 5)
      const store = yield* SessionStore.SessionStore
      const sessionId = Chunk.unsafeHead(first).sessionId
      const runs = yield* store.runs!(sessionId)
      assert.deepStrictEqual(
        runs.map((r) => r.status),
        ["cancelled"]
      )
      const stored = yield* store.events(sessionId)
      assert.strictEqual(stored.at(-1)?.type, "run_cancelled")
    }).pipe(Effect.provide(manyDeltas))
  )
})
