// The agent loop: turns (LIM-8), the output budget (LIM-5), truncation recovery (LIM-6, LIM-7),
// the context window (CTX-1: compaction before a request, and after a provider's refusal) and the
// tool calls of each turn (TL-4).
import {
  type ContextExhaustedError,
  OutputBudgetExhaustedError,
  type ProviderError,
  type RunTimeoutError,
  type StoreError
} from "@alisio/domain/Errors"
import type { ModelRequest, ReasoningEffort } from "@alisio/domain/LanguageModel"
import { resolveOutputBudget } from "@alisio/domain/Limits"
import type { AssistantMessage, Message, ToolCallPart, ToolResultMessage } from "@alisio/domain/Message"
import type { Tool, ToolSpec } from "@alisio/domain/Tool"
import { addUsage } from "@alisio/domain/Usage"
import * as Effect from "effect/Effect"
import type { CurrentRun } from "../CurrentRun.js"
import type { HumanWaits } from "../HumanWaits.js"
import type { Interaction } from "../Interaction.js"
import type { SessionStore } from "../SessionStore.js"
import { boundCalls } from "./callBound.js"
import { fitWindow, sendWithinWindow } from "./compaction/inRun.js"
import type { CompactionSnapshot } from "./compaction/plan.js"
import { continuationNotice, toRequestMessages } from "./history.js"
import { awaitNotices, takeNotices } from "./notices.js"
import { assistantMessage, type RunState, storeTurn } from "./runState.js"
import { cancelledResult, executeToolCall } from "./toolCalls.js"
import { type AssembledCall, classify, classifyProviderTruncated } from "./truncation.js"

export type LoopResult = { readonly _tag: "Completed"; readonly text: string } | { readonly _tag: "TurnsExceeded" }

export type RunFailure =
  | RunTimeoutError
  | OutputBudgetExhaustedError
  | ProviderError
  | StoreError
  | ContextExhaustedError

/** The tools of a run and the services its calls run with. */
export interface RunTools {
  readonly specs: ReadonlyArray<ToolSpec>
  readonly byName: ReadonlyMap<string, Tool>
  readonly provide: <A, E>(
    effect: Effect.Effect<A, E, CurrentRun | SessionStore | HumanWaits | Interaction>
  ) => Effect.Effect<A, E>
}

const efforts: ReadonlyArray<ReasoningEffort> = ["minimal", "low", "medium", "high"]
const lowerEffort = (effort: ReasoningEffort | undefined): ReasoningEffort | undefined => {
  if (effort === undefined) return undefined
  const index = efforts.indexOf(effort)
  return index > 1 ? efforts[index - 1] : undefined
}

const callsOf = (message: AssistantMessage) =>
  message.content.filter((part): part is ToolCallPart => part._tag === "tool_call")

/**
 * Runs the calls of an assistant message, then stores it with their results in one transaction;
 * on interruption every call still gets a (cancelled) result, so no stored call lacks one. The
 * last call is answered with `refusal`, without running, when the response had too many.
 */
const runTools = (state: RunState, tools: RunTools, assistant: AssistantMessage, refusal: string | undefined) =>
  Effect.gen(function* () {
    const calls = callsOf(assistant)
    const results: Array<ToolResultMessage | undefined> = calls.map(() => undefined)
    const persist = Effect.suspend(() =>
      storeTurn(state, [assistant, ...calls.map((call, i) => results[i] ?? cancelledResult(call))])
    )
    yield* Effect.forEach(
      calls,
      (call, i) =>
        Effect.suspend(() => {
          state.stage = { stage: "tool", tool: call.name }
          return executeToolCall(
            call,
            tools.byName,
            refusal !== undefined && i === calls.length - 1 ? refusal : undefined,
            (cancelled) => {
              results[i] = cancelled
            }
          )
        }).pipe(
          Effect.tap((result) =>
            Effect.sync(() => {
              results[i] = result
            })
          )
        ),
      { concurrency: state.limits.toolConcurrency, discard: true }
    ).pipe(
      tools.provide,
      Effect.onInterrupt(() => Effect.ignore(persist))
    )
    yield* persist
  })

/** Turns until an answer, the turn limit, or a failure; `currentTools` is read before each turn. */
export const turnLoop = (
  state: RunState,
  currentTools: Effect.Effect<RunTools>
): Effect.Effect<LoopResult, RunFailure> =>
  Effect.gen(function* () {
    const { emitter, limits, options } = state
    // Recoveries count in a row: a good turn resets them and restores a lowered effort (LIM-6).
    let recoveries = 0
    let effort = options.effort
    let notices: ReadonlyArray<Message> = []
    for (;;) {
      if (state.turns >= limits.maxTurns) return { _tag: "TurnsExceeded" } as const
      yield* takeNotices(state)
      const tools = yield* currentTools
      const budget = resolveOutputBudget(limits.maxOutputTokens, options.modelInfo?.maxOutputTokens)
      const requestNotices = notices
      const requestEffort = effort
      // Rebuilt after a compaction: the history step is the one place history becomes messages.
      const build = (compaction: CompactionSnapshot | undefined): ModelRequest => ({
        model: options.model,
        messages: [...toRequestMessages(state.conversation, compaction), ...requestNotices],
        tools: tools.specs,
        maxOutputTokens: budget.maxOutputTokens,
        ...(options.system === undefined ? {} : { system: options.system }),
        ...(requestEffort === undefined ? {} : { effort: requestEffort })
      })
      const request = yield* fitWindow(state, build)
      const response = yield* sendWithinWindow(state, request, build)
      if (response.usage !== undefined) state.usage = addUsage(state.usage, response.usage)
      const assembled: ReadonlyArray<AssembledCall> = [...response.calls].map(([id, call]) => ({
        id: id as ToolCallPart["id"],
        ...call
      }))
      const classified = response.providerTruncated
        ? classifyProviderTruncated(assembled)
        : classify(response.finish ?? "other", response.text, assembled)
      const { classification } = classified
      const { calls: complete, refusal } = boundCalls(classified.complete)

      if (classification._tag === "Cut") {
        recoveries += 1
        if (recoveries > limits.truncationRecoveries) {
          return yield* new OutputBudgetExhaustedError({
            message:
              `The model ${options.model} ran out of its ${budget.maxOutputTokens}-token output budget ` +
              `${recoveries} times in a row without a usable response; raise --max-output-tokens or ask for smaller steps.`,
            truncation: {
              attempts: recoveries,
              maxOutputTokens: budget.maxOutputTokens,
              source: budget.source,
              model: options.model
            }
          })
        }
        const kept = assistantMessage(response.text, response.reasoning, complete)
        if (complete.length > 0) yield* runTools(state, tools, kept, refusal)
        else if (response.text.trim() !== "") yield* storeTurn(state, [kept])
        const lowered = lowerEffort(effort)
        effort = lowered ?? effort
        yield* emitter.emit("truncation_recovery", {
          attempt: recoveries,
          of: limits.truncationRecoveries,
          reason: classification.reason,
          maxOutputTokens: budget.maxOutputTokens,
          ...(lowered === undefined ? {} : { effort: lowered })
        })
        notices = [continuationNotice(budget.maxOutputTokens)]
        continue
      }

      recoveries = 0
      effort = options.effort
      notices = []
      state.turns += 1
      yield* emitter.emit("turn_completed", {
        turn: state.turns,
        durationMs: response.durationMs,
        ...(response.ttftMs === undefined ? {} : { ttftMs: response.ttftMs }),
        ...(response.usage === undefined ? {} : { usage: response.usage }),
        finishReason: response.finish ?? "other"
      })
      const message = assistantMessage(response.text, response.reasoning, complete)
      if (classification._tag === "UsefulText") {
        yield* storeTurn(state, [message])
        yield* emitter.emit("response_truncated", {
          maxOutputTokens: budget.maxOutputTokens,
          source: budget.source,
          model: options.model
        })
        return { _tag: "Completed", text: response.text } as const
      }
      if (complete.length === 0) {
        if (message.content.length > 0) yield* storeTurn(state, [message])
        if (yield* awaitNotices(state)) continue
        return { _tag: "Completed", text: response.text } as const
      }
      yield* runTools(state, tools, message, refusal)
    }
  })
