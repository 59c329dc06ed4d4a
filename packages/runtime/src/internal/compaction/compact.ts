// One compaction (CTX-1), shared by the runner and `/compact`: choose the older units to
// summarise, ask plugins what to keep, summarise them (in several requests when they do not fit
// one), then store the result in one statement. The stored messages are never touched.

import type { StoreError } from "@alisio/domain/Errors"
import type { RunId, SessionId } from "@alisio/domain/Ids"
import type { ModelRequest } from "@alisio/domain/LanguageModel"
import { addUsage, type Usage } from "@alisio/domain/Usage"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type { SessionStoreService } from "../../SessionStore.js"
import { type Calibration, CHARS_PER_TOKEN, estimateTokens, messageChars } from "./estimate.js"
import type { CompactionHooksService } from "./hooks.js"
import { type Budget, type CompactionSnapshot, type HistoryEntry, indexAfter, planCut } from "./plan.js"
import { summaryRequest, transcriptChunks } from "./summary.js"

/** Why a compaction runs: inside a run (`threshold`, `context_length_exceeded`) or by hand. */
export type CompactReason = "threshold" | "context_length_exceeded" | "manual"

/** Every older unit is already summarised, or the history is a single unit. */
export class NothingToCompact extends Data.TaggedError("NothingToCompact")<{ readonly message: string }> {}

/** The model answered the summary request with no text. */
export class EmptySummary extends Data.TaggedError("EmptySummary")<{ readonly message: string }> {}

export interface CompactInput<E> {
  readonly sessionId: SessionId
  readonly runId?: RunId | undefined
  readonly reason: CompactReason
  readonly focus?: string | undefined
  readonly model: string
  /** The stored messages, in order: all of them, or those after the current compaction. */
  readonly history: ReadonlyArray<HistoryEntry>
  readonly current: CompactionSnapshot | undefined
  readonly budget: Budget
  /** The most the last unit may take and still be kept verbatim (`planCut`); `budget.keep` if absent. */
  readonly lastRoom?: number | undefined
  readonly calibration: Calibration
  /** Sends one summary request and returns the text of its answer. */
  /** `cut`: the answer stopped at its output budget (a reasoning model can spend it all thinking). */
  readonly summarize: (
    request: ModelRequest
  ) => Effect.Effect<{ readonly text: string; readonly usage?: Usage; readonly cut?: boolean }, E>
  readonly hooks: CompactionHooksService | undefined
}

/** A summary ready to be stored. */
export interface Summarized {
  readonly snapshot: CompactionSnapshot
  /** Messages summarised by this compaction (the snapshot counts all of them). */
  readonly newlyCompacted: number
  readonly usage: Usage | undefined
}

/** At most this many summary requests in one compaction; each takes what fits the window. */
const MAX_PASSES = 16

/** Plans and writes the summary; nothing is stored yet. */
export const summarize = <E>(input: CompactInput<E>): Effect.Effect<Summarized, NothingToCompact | EmptySummary | E> =>
  Effect.gen(function* () {
    const { budget, calibration, current, history } = input
    const from = current === undefined ? 0 : indexAfter(history, current.lastPosition)
    const cut = planCut(
      history,
      from,
      budget.keep,
      (entry) => estimateTokens(messageChars(entry.message), calibration),
      undefined,
      input.lastRoom
    )
    if (cut === undefined) {
      return yield* new NothingToCompact({
        message:
          from >= history.length
            ? "there is nothing after the last summary to compact"
            : "what is left after the last summary is the current prompt or a single turn, which are kept whole"
      })
    }
    const entries = history.slice(from, cut)
    const fromPlugins =
      input.hooks === undefined
        ? []
        : yield* input.hooks.before({
            sessionId: input.sessionId,
            runId: input.runId,
            reason: input.reason,
            messages: entries.length,
            focus: input.focus
          })
    // What one summary request may hold, in characters, as the calibrated estimate counts them.
    const roomTokens = Math.floor((budget.window.tokens - budget.summaryTokens) * 0.9)
    const roomChars = Math.floor((roomTokens * CHARS_PER_TOKEN) / (calibration.ratio ?? 1))
    const chunks = transcriptChunks(entries, roomChars, budget.summaryTokens * CHARS_PER_TOKEN)
    if (chunks.length > MAX_PASSES) {
      return yield* new EmptySummary({
        message: `the turns to summarise need ${chunks.length} summary requests, more than ${MAX_PASSES}`
      })
    }
    let previous = current?.summary
    let usage: Usage | undefined
    for (const transcript of chunks) {
      const answer = yield* input.summarize(
        summaryRequest({
          model: input.model,
          previous,
          transcript,
          instructions: { focus: input.focus, fromPlugins },
          maxOutputTokens: budget.summaryTokens
        })
      )
      if (answer.usage !== undefined) usage = usage === undefined ? answer.usage : addUsage(usage, answer.usage)
      const text = answer.text.trim()
      if (text === "") {
        return yield* new EmptySummary({
          message:
            answer.cut === true
              ? `the model ${input.model} wrote no summary within its output budget of ${budget.summaryTokens} tokens ` +
                "(a reasoning model may spend it all thinking): a lower reasoning effort (/effort) or a model that reasons less can summarise"
              : `the model ${input.model} wrote an empty summary`
        })
      }
      previous = text
    }
    return {
      snapshot: {
        summary: previous ?? "",
        firstPosition: current?.firstPosition ?? entries[0]!.position,
        lastPosition: history[cut - 1]!.position,
        messagesCompacted: (current?.messagesCompacted ?? 0) + entries.length
      },
      newlyCompacted: entries.length,
      usage
    }
  })

/** Stores a summary as the session's latest compaction (one statement); no-op for a store without them. */
export const store = (
  sessions: SessionStoreService,
  input: {
    readonly sessionId: SessionId
    readonly runId?: RunId | undefined
    readonly focus?: string | undefined
    readonly snapshot: CompactionSnapshot
    readonly tokensBefore: number
    readonly tokensAfter: number
  }
): Effect.Effect<void, StoreError> =>
  sessions.compactions === undefined
    ? Effect.void
    : Effect.asVoid(
        sessions.compactions.add({
          sessionId: input.sessionId,
          runId: input.runId,
          firstPosition: input.snapshot.firstPosition,
          lastPosition: input.snapshot.lastPosition,
          summary: input.snapshot.summary,
          tokensBefore: input.tokensBefore,
          tokensAfter: input.tokensAfter,
          messagesCompacted: input.snapshot.messagesCompacted,
          focus: input.focus
        })
      )
