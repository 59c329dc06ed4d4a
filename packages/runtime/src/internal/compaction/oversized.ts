// Messages larger than the context window (CTX-1, CLI-1). A prompt that alone cannot fit beside
// the system prompt, the tools and the answer's reserve is refused before it is stored when the
// window is known. One stored anyway (an older session, a window learned only from a refusal)
// would make every later run of its session fail the same way, since the current prompt is never
// compacted: it is left out of requests instead, replaced by a short note with its size. The
// stored message stays (`sessions show`, export, the UI's transcript); which ones are left out is
// kept in the session database as a state value of an owner no plugin can be.

import { ContextExhaustedError, PromptTooLargeError, type StoreError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { ModelInfo, ModelRequest } from "@alisio/domain/LanguageModel"
import {
  type ContextWindow,
  type ResolvedLimits,
  resolveContextWindow,
  resolveOutputBudget,
  withLearnedWindow
} from "@alisio/domain/Limits"
import type { Message } from "@alisio/domain/Message"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import type { ToolSpec } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { SessionStoreService } from "../../SessionStore.js"
import type { RunState } from "../runState.js"
import { estimateTokens, messageChars, requestChars } from "./estimate.js"
import { sourceText, windowTooSmallRemedy, windowTooSmallText } from "./exhausted.js"
import { type Budget, budgetOf, type HistoryEntry, pinnedIndex } from "./plan.js"

const OWNER = "@alisio/left-out-messages"

const LeftOut = Schema.Struct({
  position: Schema.Int,
  tokens: Schema.NonNegativeInt,
  /** The window it did not fit: with a larger one it is sent again. */
  contextWindow: Schema.Int
})
export type LeftOut = typeof LeftOut.Type
const decode = onFirstCall(() => Schema.decodeUnknownOption(Schema.Array(LeftOut)))

/** The session's messages left out of requests. */
export const readLeftOut = (
  store: SessionStoreService,
  sessionId: SessionId
): Effect.Effect<ReadonlyArray<LeftOut>, StoreError> =>
  Effect.map(store.pluginState.get(OWNER, sessionId), (stored) =>
    Option.getOrElse(Option.flatMap(stored, decode), () => [])
  )

const markLeftOut = (store: SessionStoreService, sessionId: SessionId, mark: LeftOut) =>
  Effect.gen(function* () {
    const marks = (yield* readLeftOut(store, sessionId)).filter((m) => m.position !== mark.position)
    yield* store.pluginState.set(OWNER, sessionId, [...marks, mark])
  })

const count = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, " ")

/** What a request holds in place of a message left out. */
const noteFor = (mark: LeftOut): Message => ({
  role: "user",
  content: [
    {
      _tag: "text",
      text:
        `[A message of about ${count(mark.tokens)} tokens was left out here: it is larger than the model's ` +
        `context window of ${count(mark.contextWindow)} tokens can hold. The person was told; it is kept in the session's record.]`
    }
  ]
})

/**
 * `history` with the messages left out replaced by notes, unless the window is now known to be
 * larger than the one they did not fit (a window only assumed, the default, does not count).
 */
export const applyLeftOut = (
  history: ReadonlyArray<HistoryEntry>,
  marks: ReadonlyArray<LeftOut>,
  window: ContextWindow
): Array<HistoryEntry> => {
  const larger = (mark: LeftOut) => window.source !== "default" && window.tokens > mark.contextWindow
  const applying = new Map(marks.filter((mark) => !larger(mark)).map((mark) => [mark.position, mark]))
  return history.map((entry) => {
    const mark = applying.get(entry.position)
    return mark === undefined || entry.message.role !== "user"
      ? entry
      : { position: entry.position, message: noteFor(mark) }
  })
}

const remedy = (window: ContextWindow): string =>
  "send a shorter prompt, put the text in a file in the workspace and ask the model to read it, or " +
  (window.source === "user"
    ? "raise --max-context-tokens (limits.maxContextTokens)"
    : "use a model with a larger context window")

/** What a prompt of `tokens` is measured against: the window, and what is left of it for a prompt. */
const sizes = (model: string, tokens: number, window: ContextWindow, left: number) =>
  `about ${count(tokens)} tokens, more than ${model} can take: its context window is ${count(window.tokens)} tokens ` +
  `(${sourceText[window.source]}), and about ${count(Math.max(0, left))} of them are left for a prompt beside the system prompt, ` +
  "the tools and the answer"

/** What a new prompt is checked with before it is stored. */
export interface PromptCheck {
  readonly model: string
  readonly modelInfo?: ModelInfo | undefined
  readonly limits: ResolvedLimits
  /** The window the provider named in an earlier refusal. */
  readonly learnedWindow?: number | undefined
  readonly system?: string | undefined
  readonly tools: ReadonlyArray<ToolSpec>
  readonly prompt: Message
}

/** Whether the model's window is known (not the default): only then is a prompt measured before it is stored. */
export const windowKnown = (check: Pick<PromptCheck, "limits" | "modelInfo" | "learnedWindow">): boolean =>
  withLearnedWindow(
    resolveContextWindow(check.limits.maxContextTokens, check.modelInfo?.contextWindow),
    check.learnedWindow
  ).source !== "default"

/**
 * The refusal of a prompt that cannot fit the model's window whatever is compacted, or of any
 * prompt when the system prompt and the tools alone fill it; `undefined` when it fits or when the
 * window is not known (the default). `tools` are every tool the run offers, MCP servers' included
 * (the runner starts them first).
 */
export const promptTooLarge = (check: PromptCheck): PromptTooLargeError | undefined => {
  const window = withLearnedWindow(
    resolveContextWindow(check.limits.maxContextTokens, check.modelInfo?.contextWindow),
    check.learnedWindow
  )
  if (window.source === "default") return undefined
  const calibration = { ratio: undefined }
  const output = resolveOutputBudget(check.limits.maxOutputTokens, check.modelInfo?.maxOutputTokens)
  const budget = budgetOf(window, output.maxOutputTokens)
  const fixed = estimateTokens(
    requestChars({
      model: check.model,
      messages: [],
      tools: check.tools,
      maxOutputTokens: 0,
      ...(check.system === undefined ? {} : { system: check.system })
    }),
    calibration
  )
  const left = budget.room - fixed
  const tokens = estimateTokens(messageChars(check.prompt), calibration)
  const context = { tokens, contextWindow: window.tokens, source: window.source, model: check.model }
  if (left <= 0) {
    const why = windowTooSmallText(check.model, window, fixed, budget.room)
    return new PromptTooLargeError({
      message: `t${why.slice(1, -1)}; nothing was stored: ${windowTooSmallRemedy(window)
        .slice(0, -1)
        .replace(/^./, (c) => c.toLowerCase())}`,
      context,
      room: 0
    })
  }
  if (tokens <= left) return undefined
  return new PromptTooLargeError({
    message: `the prompt is ${sizes(check.model, tokens, window, left)}; nothing was stored: ${remedy(window)}`,
    context,
    room: left
  })
}

/**
 * Before a request: the user messages that alone pass what the request has room for are left out
 * (replaced in the run's conversation, and marked so later runs leave them out too). When one is
 * the current prompt, the run ends with `ContextExhaustedError` saying so. True when any was left
 * out, so that the request is built again.
 */
export const leaveOutOversized = (
  state: RunState,
  request: ModelRequest,
  budget: Budget,
  providerCode?: string
): Effect.Effect<boolean, ContextExhaustedError | StoreError> =>
  Effect.gen(function* () {
    const { context, conversation } = state
    const fixed = estimateTokens(requestChars({ ...request, messages: [] }), context.calibration)
    const left = budget.room - fixed
    if (left <= 0) return false
    const pinned = pinnedIndex(conversation)
    let promptTokens: number | undefined
    let replaced = false
    for (let i = 0; i < conversation.length; i++) {
      const entry = conversation[i]!
      if (entry.message.role !== "user") continue
      const tokens = estimateTokens(messageChars(entry.message), context.calibration)
      if (tokens <= left) continue
      const mark: LeftOut = { position: entry.position, tokens, contextWindow: budget.window.tokens }
      yield* markLeftOut(state.store, state.sessionId, mark)
      conversation[i] = { position: entry.position, message: noteFor(mark) }
      replaced = true
      if (i === pinned) promptTokens = tokens
    }
    if (promptTokens === undefined) return replaced
    return yield* new ContextExhaustedError({
      message:
        `Your prompt is ${sizes(state.options.model, promptTokens, budget.window, left)}. ` +
        `It stays in the session but is left out of its later requests: ${remedy(budget.window)}.`,
      context: {
        tokens: promptTokens,
        contextWindow: budget.window.tokens,
        source: budget.window.source,
        model: state.options.model
      },
      ...(providerCode === undefined ? {} : { providerCode })
    })
  })
