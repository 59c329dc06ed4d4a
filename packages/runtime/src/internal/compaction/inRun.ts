// Compaction inside a run (CTX-1): before a request that would pass the threshold of the context
// window, and once after a provider refused a request as too long. The summary request goes
// through `streamResponse` (LIM-4's first-token watchdog and resends apply, interruption stops it)
// with its deltas kept off the event stream; it counts as active time, never as a turn.

import { randomUUID } from "node:crypto"
import type { ContextExhaustedError, ProviderError, RunTimeoutError, StoreError } from "@alisio/domain/Errors"
import { RunId, type SessionId } from "@alisio/domain/Ids"
import type { LanguageModelService, ModelInfo, ModelRequest } from "@alisio/domain/LanguageModel"
import { type ContextWindow, type ResolvedLimits, resolveContextWindow, withLearnedWindow } from "@alisio/domain/Limits"
import type { CompactionReason } from "@alisio/domain/RunEvent"
import { addUsage, emptyUsage } from "@alisio/domain/Usage"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { RunEmitter } from "../../RunEvents.js"
import type { SessionStoreService } from "../../SessionStore.js"
import type { RunState } from "../runState.js"
import { type StreamedResponse, streamResponse } from "../streamResponse.js"
import { type EmptySummary, type NothingToCompact, store, summarize } from "./compact.js"
import { type Calibration, calibrate, estimateTokens, messageChars, requestChars } from "./estimate.js"
import { exhausted, windowTooSmall } from "./exhausted.js"
import type { CompactionHooksService } from "./hooks.js"
import { leaveOutOversized } from "./oversized.js"
import {
  type Budget,
  budgetOf,
  type CompactionSnapshot,
  type HistoryEntry,
  indexAfter,
  pinnedIndex,
  planCut
} from "./plan.js"

/** Makes a turn's request with the given compaction (the history step and the turn's notices). */
export type BuildRequest = (compaction: CompactionSnapshot | undefined) => ModelRequest

/** What a run knows of its context window (CTX-1). */
export interface ContextState {
  window: ContextWindow
  /** The latest compaction of the session: requests use its summary. */
  compaction: CompactionSnapshot | undefined
  readonly calibration: Calibration
  /** Lowered when a provider refused a request the estimate said would fit. */
  roomCap: number | undefined
  /**
   * A compaction at the threshold failed in this run: the run goes on uncompacted, and tries again
   * only when a request would no longer fit (no second summary request per turn for nothing).
   */
  thresholdFailed: boolean
  readonly hooks: CompactionHooksService | undefined
}

export const makeContextState = (input: {
  readonly limits: ResolvedLimits
  readonly modelInfo?: ModelInfo | undefined
  /** The window the provider named in an earlier run's refusal. */
  readonly learnedWindow?: number | undefined
  readonly compaction: CompactionSnapshot | undefined
  readonly hooks: CompactionHooksService | undefined
}): ContextState => ({
  window: withLearnedWindow(
    resolveContextWindow(input.limits.maxContextTokens, input.modelInfo?.contextWindow),
    input.learnedWindow
  ),
  compaction: input.compaction,
  calibration: { ratio: undefined },
  roomCap: undefined,
  thresholdFailed: false,
  hooks: input.hooks
})

/** The estimated tokens of a request. */
export const estimateRequest = (context: ContextState, request: ModelRequest): number =>
  estimateTokens(requestChars(request), context.calibration)

const isContextExceeded = (error: unknown): error is ProviderError =>
  typeof error === "object" &&
  error !== null &&
  (error as { _tag?: unknown })._tag === "ProviderError" &&
  (error as ProviderError).code === "context_length_exceeded"

/** The run's emitter without text and reasoning deltas: a summary is not the run's answer. */
const quietEmitter = (emitter: RunEmitter): RunEmitter => ({
  emit: (type, data) =>
    type === "text_delta" || type === "reasoning_delta" ? Effect.succeed(undefined as never) : emitter.emit(type, data),
  emitFinal: emitter.emitFinal,
  emitDeltas: () => Effect.void,
  emitUnstored: emitter.emitUnstored
})

/** One summary request through the run's stream path, off the run's request count and deltas. */
export const summarizeWith = (state: RunState) => (request: ModelRequest) =>
  Effect.gen(function* () {
    const quiet: RunState = { ...state, emitter: quietEmitter(state.emitter) }
    const response = yield* streamResponse(quiet, request, { keepPartial: false })
    state.stage = { stage: "model_request" }
    return {
      text: response.text,
      cut: response.providerTruncated || response.finish === "length",
      ...(response.usage === undefined ? {} : { usage: response.usage })
    }
  })

type SummaryFailure = NothingToCompact | EmptySummary | RunTimeoutError | ProviderError

const failureText = (error: SummaryFailure): string => {
  switch (error._tag) {
    case "NothingToCompact":
    case "EmptySummary":
      return error.message
    case "RunTimeoutError":
    case "ProviderError":
      return `the summary request failed: ${error.message}`
  }
}

/**
 * What the last unit of the history may take and still be kept verbatim: the room less the system
 * prompt and tools, a summary at its full budget and the current prompt (sent whole after it).
 */
const lastRoomOf = (state: RunState, request: ModelRequest, budget: Budget): number => {
  const { context, conversation } = state
  const fixed = estimateRequest(context, { ...request, messages: [] })
  const pinned = pinnedIndex(conversation)
  const prompt = pinned < 0 ? 0 : estimateTokens(messageChars(conversation[pinned]!.message), context.calibration)
  return Math.floor(budget.room - fixed - budget.summaryTokens - prompt)
}

/**
 * Compacts older turns, with its events: `compaction_started`, then `compaction_completed` or
 * `compaction_failed` (also when the run stops meanwhile). Returns the request `build` makes
 * afterwards, or — when compacting failed and `before.request` still fits — that request;
 * otherwise fails with `ContextExhaustedError`.
 */
const compactNow = (
  state: RunState,
  reason: CompactionReason,
  build: BuildRequest,
  before: { readonly request: ModelRequest; readonly tokens: number; readonly fits: boolean },
  providerCode?: string
): Effect.Effect<ModelRequest, ContextExhaustedError | StoreError> =>
  Effect.gen(function* () {
    const { context, emitter } = state
    const budget = budgetOf(context.window, before.request.maxOutputTokens, context.roomCap)
    const startedAt = yield* Clock.currentTimeMillis
    state.stage = { stage: "model_request" }
    // From `compaction_started` to its closing event nothing but the summary is interruptible: a
    // compaction started is a compaction ended, and a compaction stored is a compaction reported.
    const ended = yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        yield* emitter.emit("compaction_started", {
          reason,
          tokens: before.tokens,
          contextWindow: budget.window.tokens,
          source: budget.window.source,
          threshold: budget.threshold
        })
        const outcome = yield* restore(
          summarize({
            sessionId: state.sessionId,
            runId: state.runId,
            reason,
            model: state.options.model,
            history: state.conversation,
            current: context.compaction,
            budget,
            // After a provider's refusal the estimate is known to be off: no room is left to spare.
            lastRoom: reason === "threshold" ? lastRoomOf(state, before.request, budget) : undefined,
            calibration: context.calibration,
            summarize: summarizeWith(state),
            hooks: context.hooks
          })
        ).pipe(
          Effect.either,
          Effect.onInterrupt(() =>
            Effect.ignore(
              emitter.emit("compaction_failed", {
                error: "The run stopped while older turns were being summarised.",
                continued: false,
                cancelled: true
              })
            )
          )
        )
        if (Either.isLeft(outcome)) {
          if (outcome.left._tag === "StoreError") {
            yield* Effect.ignore(emitter.emit("compaction_failed", { error: outcome.left.message, continued: false }))
            return yield* Effect.fail(outcome.left)
          }
          const why = failureText(outcome.left)
          yield* emitter.emit("compaction_failed", {
            error: `Compacting older turns failed: ${why}.`,
            continued: before.fits
          })
          return { _tag: "Failed", why } as const
        }
        const { newlyCompacted, snapshot, usage } = outcome.right
        const request = build(snapshot)
        const tokensAfter = estimateRequest(context, request)
        // A summary no shorter than what it replaces (a server that ignores `max_tokens`, a model
        // that echoes the transcript) would make every later request of the session longer: the
        // history stays as it is, as `/compact` keeps it.
        if (tokensAfter >= before.tokens) {
          const why = `the summary (about ${tokensAfter} tokens with the rest of the request) is no shorter than the history it would replace (about ${before.tokens})`
          yield* emitter.emit("compaction_failed", {
            error: `Compacting older turns failed: ${why}.`,
            continued: before.fits
          })
          return { _tag: "Failed", why } as const
        }
        const saved = yield* Effect.either(
          store(state.store, {
            sessionId: state.sessionId,
            runId: state.runId,
            snapshot,
            tokensBefore: before.tokens,
            tokensAfter
          })
        )
        if (Either.isLeft(saved)) {
          const why = `its summary could not be stored (${saved.left.message})`
          yield* emitter.emit("compaction_failed", {
            error: `Compacting older turns failed: ${why}.`,
            continued: before.fits
          })
          return { _tag: "Failed", why } as const
        }
        context.compaction = snapshot
        if (usage !== undefined) state.usage = addUsage(state.usage, usage)
        yield* emitter.emit("compaction_completed", {
          tokensBefore: before.tokens,
          tokensAfter,
          messagesCompacted: snapshot.messagesCompacted,
          newlyCompacted,
          durationMs: (yield* Clock.currentTimeMillis) - startedAt,
          ...(usage === undefined ? {} : { usage })
        })
        return { _tag: "Completed", request, snapshot, tokensAfter } as const
      })
    )
    if (ended._tag === "Failed") {
      if (reason === "threshold") context.thresholdFailed = true
      if (before.fits) return before.request
      return yield* exhausted(state, before.tokens, budget, `compacting older turns failed: ${ended.why}`, providerCode)
    }
    const { request, snapshot, tokensAfter } = ended
    if (context.hooks !== undefined) {
      yield* context.hooks.after({
        sessionId: state.sessionId,
        runId: state.runId,
        reason,
        summary: snapshot.summary,
        tokensBefore: before.tokens,
        tokensAfter,
        messagesCompacted: snapshot.messagesCompacted
      })
    }
    if (tokensAfter > budget.room) {
      return yield* exhausted(
        state,
        tokensAfter,
        budget,
        "even with older turns compacted, the current prompt, the recent turns, the system prompt and the tools take more",
        providerCode
      )
    }
    return request
  })

/**
 * The request `build` makes, compacted first when its estimate passes the threshold of the
 * window (CTX-1). Fails with `ContextExhaustedError` when it cannot be made to fit.
 */
export const fitWindow = (
  state: RunState,
  build: BuildRequest
): Effect.Effect<ModelRequest, ContextExhaustedError | StoreError> =>
  Effect.gen(function* () {
    const { context } = state
    let request = build(context.compaction)
    let tokens = estimateRequest(context, request)
    const budget = budgetOf(context.window, request.maxOutputTokens, context.roomCap)
    if (tokens <= budget.threshold) return request
    if (yield* leaveOutOversized(state, request, budget)) {
      request = build(context.compaction)
      tokens = estimateRequest(context, request)
      if (tokens <= budget.threshold) return request
    }
    const fits = tokens <= budget.room
    if (!fits) {
      const fixed = estimateRequest(context, { ...request, messages: [] })
      if (fixed >= budget.room) return yield* windowTooSmall(state, tokens, fixed, budget)
    }
    if (fits && context.thresholdFailed) return request
    // Nothing older than the current prompt and the last turn: go on while it fits, without a
    // compaction that could only fail.
    const from = context.compaction === undefined ? 0 : indexAfter(state.conversation, context.compaction.lastPosition)
    const tokensOf = (entry: HistoryEntry) => estimateTokens(messageChars(entry.message), context.calibration)
    if (fits && planCut(state.conversation, from, budget.keep, tokensOf) === undefined) return request
    return yield* compactNow(state, "threshold", build, { request, tokens, fits })
  })

/**
 * Sends a request (`streamResponse`). When the provider refuses it as too long for the context
 * window, the window is corrected from what the provider said, older turns are compacted once and
 * the request is sent again; a second refusal fails the run with `ContextExhaustedError`.
 */
export const sendWithinWindow = (
  state: RunState,
  request: ModelRequest,
  build: BuildRequest
): Effect.Effect<StreamedResponse, RunTimeoutError | ProviderError | StoreError | ContextExhaustedError> =>
  Effect.gen(function* () {
    const { context } = state
    const first = yield* Effect.either(streamResponse(state, request))
    if (Either.isRight(first)) {
      learn(state, request, first.right)
      return first.right
    }
    const error = first.left
    if (!isContextExceeded(error)) return yield* Effect.fail(error)
    const tokens = estimateRequest(context, request)
    if (error.contextWindow !== undefined && error.contextWindow < context.window.tokens) {
      context.window = { tokens: Math.floor(error.contextWindow), source: "provider" }
      const learned = state.provider.learnedWindows
      if (learned !== undefined) yield* learned.write(request.model, context.window.tokens)
    }
    // The estimate said it fits and the provider said it does not: the room is below it.
    context.roomCap = Math.min(context.roomCap ?? Number.POSITIVE_INFINITY, Math.floor(tokens * 0.85))
    const corrected = budgetOf(context.window, request.maxOutputTokens, context.roomCap)
    // A message that alone passes the corrected room is left out first (the prompt ends the run).
    const smaller = (yield* leaveOutOversized(state, request, corrected, error.code))
      ? build(context.compaction)
      : undefined
    const retry =
      smaller !== undefined && estimateRequest(context, smaller) <= corrected.threshold
        ? smaller
        : yield* compactNow(
            state,
            "context_length_exceeded",
            build,
            { request: smaller ?? request, tokens: estimateRequest(context, smaller ?? request), fits: false },
            error.code
          )
    const second = yield* Effect.either(streamResponse(state, retry))
    if (Either.isRight(second)) {
      learn(state, retry, second.right)
      return second.right
    }
    if (!isContextExceeded(second.left)) return yield* Effect.fail(second.left)
    const budget = budgetOf(context.window, retry.maxOutputTokens, context.roomCap)
    return yield* exhausted(
      state,
      estimateRequest(context, retry),
      budget,
      `the provider refused it again after older turns were compacted (${second.left.message})`,
      second.left.code
    )
  })

/** Calibrates the estimate with the prompt tokens the provider reported. */
const learn = (state: RunState, request: ModelRequest, response: StreamedResponse) => {
  if (response.usage !== undefined && response.usage.inputTokens > 0) {
    calibrate(state.context.calibration, requestChars(request), response.usage.inputTokens)
  }
}

const silentEmitter: RunEmitter = {
  emit: () => Effect.succeed(undefined as never),
  emitFinal: () => Effect.succeed(undefined as never),
  emitDeltas: () => Effect.void,
  emitUnstored: () => Effect.succeed(undefined as never)
}

/**
 * The summary path outside a run (`/compact`): the same stream path and watchdog (LIM-4) with the
 * given limits, reporting nothing.
 */
export const summarizeDetached = (input: {
  readonly sessionId: SessionId
  readonly provider: LanguageModelService
  readonly model: string
  readonly limits: ResolvedLimits
  readonly store: SessionStoreService
}) => {
  const state: RunState = {
    options: { cwd: "", prompt: "", model: input.model },
    runId: RunId.make(`compaction-${randomUUID()}`),
    sessionId: input.sessionId,
    provider: input.provider,
    limits: input.limits,
    store: input.store,
    emitter: silentEmitter,
    conversation: [],
    context: makeContextState({ limits: input.limits, compaction: undefined, hooks: undefined }),
    stage: { stage: "model_request" },
    turns: 0,
    usage: emptyUsage,
    requests: 0,
    attempts: 0
  }
  return summarizeWith(state)
}
