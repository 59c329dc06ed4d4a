// The real runner composed with the FakeProvider, a real in-memory SQLite store and test tools.

import {
  decodeRunEvent,
  encodeRunEvent,
  isEphemeralType,
  isTerminalType,
  type KnownRunEvent
} from "@alisio/domain/RunEvent"
import type { Tool } from "@alisio/domain/Tool"
import * as FakeProvider from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import type { ChildSessionLimits } from "@alisio/runtime/ChildSessions"
import * as Interaction from "@alisio/runtime/Interaction"
import * as Runner from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

export { echoTool, noteTool, peekTool, pingTool, sleepTool, testTools } from "./tools.js"

import { testTools } from "./tools.js"

export const storeLayer = SessionStore.layerMemory

/** The whole runtime (runner, child sessions, events, waits, tools) on the FakeProvider and a store. */
export const runnerLayer = (options: {
  readonly script: FakeProvider.Script
  readonly interaction?: Layer.Layer<Interaction.Interaction>
  readonly tools?: ReadonlyArray<Tool>
  readonly store?: Layer.Layer<SessionStore.SessionStore>
  readonly childSessions?: Partial<ChildSessionLimits>
}) =>
  AgentRuntime.layer({
    tools: options.tools ?? testTools,
    interaction: options.interaction ?? Interaction.layerHeadless({ approveAll: true }),
    ...(options.childSessions === undefined ? {} : { childSessions: options.childSessions })
  }).pipe(Layer.provideMerge(FakeProvider.layer(options.script)), Layer.provideMerge(options.store ?? storeLayer))

/** Runs to the end and returns every event the run's stream produced. */
export const collect = (options: Runner.RunOptions) =>
  Effect.flatMap(Runner.Runner, (runner) => Stream.runCollect(runner.stream(options))).pipe(
    Effect.map(Chunk.toReadonlyArray)
  )

export const baseOptions: Runner.RunOptions = { cwd: "/tmp", prompt: "do the task", model: "fake-model" }

/**
 * Tool calls and approvals pair up: every `tool_call_started` gets one `tool_call_completed`
 * after it, every `approval_requested` one `approval_resolved`, an approval is asked and resolved
 * while its call is open, and nothing completes or resolves that was not started or asked.
 */
export const assertPairs = (events: ReadonlyArray<KnownRunEvent>): void => {
  const openCalls = new Set<string>()
  const endedCalls = new Set<string>()
  const openApprovals = new Map<string, string | undefined>()
  const resolved = new Set<string>()
  for (const event of events) {
    switch (event.type) {
      case "tool_call_started": {
        const id = event.data.toolCallId
        assert.isFalse(openCalls.has(id) || endedCalls.has(id), `tool call ${id} started twice`)
        openCalls.add(id)
        break
      }
      case "tool_call_completed": {
        const id = event.data.toolCallId
        assert.isTrue(openCalls.has(id), `tool call ${id} completed without being started, or twice`)
        const pending = [...openApprovals].filter(([, call]) => call === id)
        assert.deepStrictEqual(pending, [], `tool call ${id} completed with an approval still open`)
        openCalls.delete(id)
        endedCalls.add(id)
        break
      }
      case "approval_requested": {
        const { approvalId, toolCallId } = event.data
        assert.isFalse(openApprovals.has(approvalId) || resolved.has(approvalId), `approval ${approvalId} asked twice`)
        if (toolCallId !== undefined)
          assert.isTrue(openCalls.has(toolCallId), `approval ${approvalId} outside its call`)
        openApprovals.set(approvalId, toolCallId)
        break
      }
      case "approval_resolved": {
        const { approvalId } = event.data
        assert.isTrue(openApprovals.has(approvalId), `approval ${approvalId} resolved without being asked, or twice`)
        openApprovals.delete(approvalId)
        resolved.add(approvalId)
        break
      }
    }
  }
  assert.deepStrictEqual([...openCalls], [], "tool calls started and never completed")
  assert.deepStrictEqual([...openApprovals.keys()], [], "approvals asked and never resolved")
}

/**
 * CTX-1: every `compaction_started` ends with one `compaction_completed` or `compaction_failed`
 * before anything else starts a compaction or ends the run; none ends without having started.
 */
export const assertCompactionPairs = (events: ReadonlyArray<KnownRunEvent>): void => {
  let open = false
  for (const event of events) {
    switch (event.type) {
      case "compaction_started":
        assert.isFalse(open, "a compaction started while another was open")
        open = true
        break
      case "compaction_completed":
      case "compaction_failed":
        assert.isTrue(open, `${event.type} without compaction_started`)
        open = false
        break
      default:
        if (isTerminalType(event.type)) assert.isFalse(open, `${event.type} while a compaction was open`)
    }
  }
  assert.isFalse(open, "a compaction started and never ended")
}

/** Events after which the runner sends a new request (or resends one); a summary request is one. */
const requestBoundaries: ReadonlySet<string> = new Set([
  "run_started",
  "turn_completed",
  "truncation_recovery",
  "request_retry",
  "compaction_started",
  "compaction_completed",
  "compaction_failed"
])

/**
 * LIM-4: a request is sent again (`request_retry`, the runner's resend or the provider's own
 * retry) only while nothing of it had arrived: no delta of that request comes before the retry.
 */
export const assertRetriesBeforeContent = (events: ReadonlyArray<KnownRunEvent>): void => {
  let streamed: string | undefined
  for (const event of events) {
    if (event.type === "request_retry") {
      assert.isUndefined(streamed, `request_retry after a ${streamed} of the same request`)
    }
    if (requestBoundaries.has(event.type)) streamed = undefined
    else if (event.type === "text_delta" || event.type === "reasoning_delta") streamed = event.type
  }
}

/**
 * The EV-5 contract: every event decodes as a KnownRunEvent after a JSON round trip, seq counts
 * up from 1 without gaps, persisted events have increasing eventIds and ephemeral ones none,
 * tool calls and approvals pair up (`assertPairs`), so do compactions (`assertCompactionPairs`),
 * retries come before any content of their request (`assertRetriesBeforeContent`), and exactly
 * one terminal event comes last.
 */
export const assertContract = (events: ReadonlyArray<KnownRunEvent>): void => {
  assert.isAbove(events.length, 0)
  let lastEventId = 0
  events.forEach((event, index) => {
    const decoded = decodeRunEvent(JSON.parse(JSON.stringify(encodeRunEvent(event))))
    assert.isTrue(Either.isRight(decoded), `event ${index} (${event.type}) does not decode`)
    if (Either.isRight(decoded)) assert.strictEqual(decoded.right._tag, "Known")
    assert.strictEqual(event.schemaVersion, 1)
    assert.strictEqual(event.seq, index + 1, `seq of ${event.type}`)
    assert.strictEqual(event.runId, events[0]!.runId)
    if (isEphemeralType(event.type)) {
      assert.isUndefined(event.eventId, `${event.type} must not have an eventId`)
    } else {
      assert.isDefined(event.eventId, `${event.type} must have an eventId`)
      const id = Number(event.eventId)
      assert.isAbove(id, lastEventId)
      lastEventId = id
    }
  })
  const terminals = events.filter((event) => isTerminalType(event.type))
  assert.strictEqual(terminals.length, 1, `terminal events: ${terminals.map((e) => e.type).join(", ")}`)
  assert.strictEqual(events.at(-1), terminals[0])
  assert.strictEqual(events[0]!.type, "run_started")
  assertPairs(events)
  assertCompactionPairs(events)
  assertRetriesBeforeContent(events)
}

export const typesOf = (events: ReadonlyArray<KnownRunEvent>) => events.map((event) => event.type)

export const ofType = <K extends KnownRunEvent["type"]>(events: ReadonlyArray<KnownRunEvent>, type: K) =>
  events.filter((event): event is Extract<KnownRunEvent, { type: K }> => event.type === type)

/** Runs until the first event of type `type`, interrupts the run, and returns every event it emitted. */
export const interruptAt = (options: Runner.RunOptions, type: KnownRunEvent["type"]) =>
  Effect.gen(function* () {
    const seen: Array<KnownRunEvent> = []
    const reached = yield* Deferred.make<void>()
    const runner = yield* Runner.Runner
    const fiber = yield* Effect.fork(
      runner.run({
        ...options,
        onEvent: (event) => {
          seen.push(event)
          return event.type === type ? Deferred.succeed(reached, undefined) : Effect.void
        }
      })
    )
    yield* Deferred.await(reached)
    yield* Fiber.interrupt(fiber)
    return seen as ReadonlyArray<KnownRunEvent>
  })
