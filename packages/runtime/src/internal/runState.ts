import { formatDuration } from "@alisio/domain/Durations"
import { RunTimeoutError } from "@alisio/domain/Errors"
import type { RunId, SessionId } from "@alisio/domain/Ids"
import type { LanguageModelService } from "@alisio/domain/LanguageModel"
import type { ResolvedLimits, TimeoutInfo, TimeoutStage } from "@alisio/domain/Limits"
import type { AssistantMessage, Message } from "@alisio/domain/Message"
import type { Usage } from "@alisio/domain/Usage"
import * as Effect from "effect/Effect"
import type { RunEmitter } from "../RunEvents.js"
import type { RunOptions } from "../Runner.js"
import type { SessionNotices } from "../SessionNotices.js"
import type { SessionStoreService } from "../SessionStore.js"
import type { ContextState } from "./compaction/inRun.js"
import type { HistoryEntry } from "./compaction/plan.js"
import type { AssembledCall } from "./truncation.js"

/** Where a run is, for the `timeout` object of LIM-3. */
export interface Stage {
  readonly stage: TimeoutStage
  readonly tool?: string | undefined
}

/** What one run's steps share: set up by `Runner.run`, read and advanced by the loop's modules. */
export interface RunState {
  readonly options: RunOptions
  readonly runId: RunId
  readonly sessionId: SessionId
  readonly provider: LanguageModelService
  readonly limits: ResolvedLimits
  readonly store: SessionStoreService
  readonly emitter: RunEmitter
  /** Notices posted for the session between turns, when the runtime has them (internal/notices.ts). */
  readonly notices?: SessionNotices["Type"] | undefined
  /**
   * The session's conversation, read once when the run starts and kept as it is stored: this
   * process holds the session's lock, so nobody else appends to it meanwhile.
   */
  readonly conversation: Array<HistoryEntry>
  /** The context window, the session's latest compaction and the token estimate's calibration (CTX-1). */
  readonly context: ContextState
  stage: Stage
  turns: number
  usage: Usage
  /** Model requests sent (a resend of a silent one is the same request, LIM-4). */
  requests: number
  /** Sends of the current request. */
  attempts: number
}

const timeoutMessage = (info: TimeoutInfo): string => {
  switch (info.kind) {
    case "first_token":
      return (
        `The model ${info.model} (${info.provider}) sent nothing within ${formatDuration(info.ms)} of the request, ` +
        `${info.attempts === 1 ? "on the only attempt" : `on all ${info.attempts} attempts`}; the run stopped.`
      )
    case "stream_idle":
      return `The model ${info.model} (${info.provider}) went silent for ${formatDuration(info.ms)} in the middle of its response; the run stopped.`
    case "tool":
      return `The tool ${info.tool ?? ""} ran past its ${formatDuration(info.ms)} limit; the run stopped.`
    case "run": {
      const doing =
        info.stage === "tool"
          ? `running the tool ${info.tool ?? ""}`
          : info.stage === "streaming"
            ? "receiving the model's response"
            : "waiting for the model"
      return `The run used up its ${formatDuration(info.ms)} of active time while ${doing}; it stopped.`
    }
  }
}

/** The `run_failed` timeout of LIM-3, with a readable sentence. */
export const timeoutError = (state: RunState, kind: TimeoutInfo["kind"], ms: number, at: Stage): RunTimeoutError => {
  const info: TimeoutInfo = {
    kind,
    ms,
    model: state.options.model,
    provider: state.provider.provider,
    stage: at.stage,
    ...(at.tool === undefined ? {} : { tool: at.tool }),
    firstRequest: state.requests <= 1,
    attempts: state.attempts
  }
  return new RunTimeoutError({ message: timeoutMessage(info), timeout: info })
}

/** Stores messages in one transaction, then publishes them as `message` events. */
export const storeTurn = (state: RunState, messages: ReadonlyArray<Message>) =>
  Effect.gen(function* () {
    const stored = yield* state.store.appendMessages(state.sessionId, messages, state.runId)
    for (const { message, position } of stored) state.conversation.push({ position, message })
    for (const message of messages) yield* state.emitter.emit("message", { message })
  })

/** A turn's assistant message: its reasoning, its text and the calls it asked for, in that order. */
export const assistantMessage = (
  text: string,
  reasoning: string,
  calls: ReadonlyArray<AssembledCall>
): AssistantMessage => ({
  role: "assistant",
  content: [
    ...(reasoning === "" ? [] : [{ _tag: "reasoning" as const, text: reasoning }]),
    ...(text === "" ? [] : [{ _tag: "text" as const, text }]),
    ...calls.map((call) => ({ _tag: "tool_call" as const, id: call.id, name: call.name, arguments: call.arguments }))
  ]
})
