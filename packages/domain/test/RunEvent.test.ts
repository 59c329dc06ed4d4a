import { EventId, RunId, SessionId, ToolCallId } from "@alisio/domain/Ids"
import {
  decodeRunEvent,
  encodeRunEvent,
  isEphemeralType,
  isTerminalType,
  KnownRunEvent,
  RunEventData,
  type RunEventDataMap,
  type RunEventOf,
  RunEventSchemas,
  type RunEventType,
  runEventTypes
} from "@alisio/domain/RunEvent"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"

const header = {
  schemaVersion: 1 as const,
  runId: RunId.make("run-1"),
  sessionId: SessionId.make("ses-1"),
  time: "2026-11-30T12:00:00.000Z"
}
const callId = ToolCallId.make("call_1")
const usage = { inputTokens: 12, outputTokens: 7 }

/** One sample payload per type; the `satisfies` makes this list fail to compile when a type is missing. */
const samples = {
  run_started: { provider: "openai", model: "gpt-4o", requestId: "req-1", readOnly: false },
  message: {
    message: {
      role: "assistant",
      content: [
        { _tag: "reasoning", text: "thinking" },
        { _tag: "text", text: "hi" },
        { _tag: "tool_call", id: callId, name: "bash", arguments: '{"command":"ls"}' }
      ]
    }
  },
  text_delta: { text: "he" },
  reasoning_delta: { text: "hm" },
  tool_call_started: { toolCallId: callId, name: "bash", arguments: "{}", effect: "external" },
  tool_progress: { toolCallId: callId, text: "line\n" },
  tool_call_completed: { toolCallId: callId, name: "bash", status: "completed", result: "ok", durationMs: 3 },
  approval_requested: {
    approvalId: "a1",
    kind: "tool",
    toolCallId: callId,
    tool: "bash",
    effect: "external",
    summary: "run ls"
  },
  approval_resolved: { approvalId: "a1", approved: true, by: "person" },
  turn_completed: { turn: 1, durationMs: 120, ttftMs: 40, usage, finishReason: "stop" },
  request_retry: { attempt: 1, of: 1, reason: "first_token_timeout", afterMs: 30000 },
  truncation_recovery: { attempt: 1, of: 2, reason: "tool_call_cut", maxOutputTokens: 16384, effort: "low" },
  response_truncated: { maxOutputTokens: 16384, source: "default", model: "gpt-4o" },
  compaction_started: {
    reason: "threshold",
    tokens: 9200,
    contextWindow: 16000,
    source: "model",
    threshold: 8000
  },
  compaction_completed: {
    tokensBefore: 9200,
    tokensAfter: 3100,
    messagesCompacted: 48,
    newlyCompacted: 48,
    durationMs: 4200,
    usage
  },
  compaction_failed: { error: "Compacting older turns failed: the model wrote an empty summary.", continued: true },
  run_completed: { text: "done", turns: 2, usage },
  run_failed: {
    code: "timeout",
    error: "The run stopped after 10s of active time.",
    timeout: {
      kind: "run",
      ms: 10000,
      model: "gpt-4o",
      provider: "openai",
      stage: "model_request",
      firstRequest: true,
      attempts: 1
    }
  },
  run_cancelled: { reason: "interrupted" },
  turns_exceeded: { maxTurns: 3, turns: 3 },
  child_session_started: {
    childSessionId: SessionId.make("ses-2"),
    childRunId: RunId.make("run-2"),
    narrowed: ["bash"]
  },
  child_session_ended: {
    childSessionId: SessionId.make("ses-2"),
    childRunId: RunId.make("run-2"),
    status: "cancelled"
  },
  decision_completed: {
    decisionId: "d1",
    pack: "triage",
    provider: "local",
    latencyMs: 12,
    decisionCount: 3,
    rejectedCount: 1,
    confidenceMin: 0.5
  },
  decision_fallback: { decisionId: "d2", provider: "local", latencyMs: 40, reason: "timeout" },
  plugin_failed: { pluginId: "weather", stage: "tool", message: "The tool crashed: boom", tool: "forecast" },
  mcp_server_failed: {
    server: "github",
    stage: "start",
    message: "exited with code 1 before answering: GITHUB_TOKEN is not set",
    log: "/home/ada/.local/state/alisio/mcp/github.log"
  }
} satisfies { readonly [K in RunEventType]: RunEventDataMap[K] }

const eventOf = <K extends RunEventType>(type: K, seq: number): RunEventOf<K> => ({
  ...header,
  seq,
  ...(isEphemeralType(type) ? {} : { eventId: EventId.make(String(seq + 100)) }),
  correlationId: "http-42",
  type,
  data: samples[type] as RunEventDataMap[K]
})

describe("RunEvent", () => {
  it("EV-5 has a sample for every type the schema knows", () => {
    assert.deepStrictEqual([...runEventTypes].sort(), Object.keys(samples).sort())
  })

  for (const type of runEventTypes) {
    it(`EV-2 ${type} round-trips through JSON and carries schemaVersion 1`, () => {
      const event = eventOf(type, 3) as KnownRunEvent
      const line = JSON.stringify(encodeRunEvent(event))
      const json = JSON.parse(line) as Record<string, unknown>
      assert.strictEqual(json.schemaVersion, 1)
      assert.strictEqual(json.type, type)
      const decoded = decodeRunEvent(json)
      assert.isTrue(Either.isRight(decoded))
      if (Either.isRight(decoded)) {
        assert.strictEqual(decoded.right._tag, "Known")
        assert.deepStrictEqual(decoded.right.event, event)
      }
      assert.isTrue(Schema.is(KnownRunEvent)(event))
    })
  }

  // The module makes its Schemas on first read (a run meets a few types): each once, and the
  // union still closed to unknown types and bad payloads.
  it("EV-5 payload and event Schemas are made on first read, once each, every type listed in order", () => {
    assert.deepStrictEqual(Object.keys(RunEventData), [...runEventTypes])
    assert.deepStrictEqual(Object.keys(RunEventSchemas), [...runEventTypes])
    assert.strictEqual(RunEventData.run_failed, RunEventData.run_failed)
    assert.strictEqual(RunEventSchemas.tool_call_started, RunEventSchemas.tool_call_started)
    const decode = Schema.decodeUnknownEither(KnownRunEvent)
    assert.isTrue(Either.isRight(decode(encodeRunEvent(eventOf("run_completed", 2) as KnownRunEvent))))
    assert.isTrue(Either.isLeft(decode({ ...header, seq: 1, type: "turn_completed", data: { turn: 0 } })))
    assert.isTrue(Either.isLeft(decode({ ...header, seq: 1, type: "memory_consolidated", data: {} })))
    // Its JSON Schema (`alisio events schema`) is the union's, made at once.
    const union = Schema.Union(...runEventTypes.map((type) => RunEventSchemas[type]))
    assert.deepStrictEqual(JSONSchema.make(KnownRunEvent), JSONSchema.make(union))
    assert.strictEqual(String(KnownRunEvent), String(union))
  })

  it("EV-2 a line with extra fields decodes, the extras dropped", () => {
    const json = { ...(encodeRunEvent(eventOf("text_delta", 1) as KnownRunEvent) as object), futureField: { a: 1 } }
    const decoded = Either.getOrThrow(decodeRunEvent(json))
    assert.strictEqual(decoded._tag, "Known")
    assert.notProperty(decoded.event, "futureField")
  })

  it("EV-2 a line with an unknown type decodes as Unknown so consumers can skip it", () => {
    const json = { ...header, seq: 9, type: "memory_consolidated", data: { reason: "context" }, extra: true }
    const decoded = Either.getOrThrow(decodeRunEvent(json))
    assert.strictEqual(decoded._tag, "Unknown")
    assert.strictEqual(decoded.event.type, "memory_consolidated")
  })

  it("EV-2 a known type with a bad payload or a wrong schemaVersion fails", () => {
    assert.isTrue(Either.isLeft(decodeRunEvent({ ...header, seq: 1, type: "turn_completed", data: { turn: 0 } })))
    assert.isTrue(
      Either.isLeft(decodeRunEvent({ ...header, schemaVersion: 2, seq: 1, type: "text_delta", data: { text: "" } }))
    )
    assert.isTrue(Either.isLeft(decodeRunEvent("not an event")))
  })

  it("EV-2 request_retry grew additively: a provider's 429 carries its status and wait; the LIM-4 form still decodes", () => {
    const decode = (data: unknown) => decodeRunEvent({ ...header, seq: 4, eventId: "7", type: "request_retry", data })
    const rateLimited = Either.getOrThrow(
      decode({ attempt: 1, of: 2, reason: "rate_limited", status: 429, afterMs: 1500 })
    )
    assert.strictEqual(rateLimited._tag, "Known")
    if (rateLimited._tag === "Known" && rateLimited.event.type === "request_retry")
      assert.strictEqual(rateLimited.event.data.status, 429)
    assert.isTrue(Either.isRight(decode({ attempt: 1, of: 1, reason: "first_token_timeout", afterMs: 120000 })))
    assert.isTrue(Either.isRight(decode({ attempt: 2, of: 2, reason: "network", afterMs: 800 })))
    assert.isTrue(Either.isLeft(decode({ attempt: 1, of: 2, reason: "bored", afterMs: 1 })))
  })

  it("EV-3 only text_delta, reasoning_delta and tool_progress are ephemeral", () => {
    assert.deepStrictEqual(runEventTypes.filter(isEphemeralType), ["text_delta", "reasoning_delta", "tool_progress"])
    assert.deepStrictEqual(runEventTypes.filter(isTerminalType).sort(), [
      "run_cancelled",
      "run_completed",
      "run_failed",
      "turns_exceeded"
    ])
  })
})
