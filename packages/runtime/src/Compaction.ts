import type { SessionId } from "@alisio/domain/Ids"
import { LanguageModel, type LanguageModelService, type ModelInfo } from "@alisio/domain/LanguageModel"
import {
  type Limits,
  resolveContextWindow,
  resolveLimits,
  resolveOutputBudget,
  withLearnedWindow
} from "@alisio/domain/Limits"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { store as storeCompaction, summarize } from "./internal/compaction/compact.js"
import { estimateTokens, requestChars } from "./internal/compaction/estimate.js"
import { type CompactionHooksService, makeHooks } from "./internal/compaction/hooks.js"
import { summarizeDetached } from "./internal/compaction/inRun.js"
import { applyLeftOut, readLeftOut } from "./internal/compaction/oversized.js"
import { budgetOf, type CompactionSnapshot, type HistoryEntry } from "./internal/compaction/plan.js"
import { toRequestMessages } from "./internal/history.js"
import { currentOwner } from "./ProcessOwner.js"
import { Providers } from "./Providers.js"
import { SessionStore } from "./SessionStore.js"

export type { CompactionHook, CompactionHooksService } from "./internal/compaction/hooks.js"
export { HOOK_TIMEOUT_MS } from "./internal/compaction/hooks.js"
export { SUMMARY_SYSTEM_MARK } from "./internal/compaction/summary.js"

/** What one compaction did (CTX-1). */
export interface CompactionResult {
  /** Estimated tokens of the request history before and after. */
  readonly tokensBefore: number
  readonly tokensAfter: number
  /** How many stored messages the summary now stands for. */
  readonly messagesCompacted: number
}

/** A compaction that could not be done; `message` says why and what to do. */
export class CompactionError extends Schema.TaggedError<CompactionError>()("CompactionError", {
  sessionId: Schema.String,
  message: Schema.String
}) {}

/**
 * Long sessions (CTX-1): older turns summarised by the model into a compaction message that
 * requests use instead of them; the stored messages stay. The runner compacts on its own when a
 * request would pass the window; `compact` is the same by hand (`/compact [focus]`).
 */
export class Compaction extends Context.Tag("@alisio/runtime/Compaction")<
  Compaction,
  {
    /**
     * Compacts the session now, with the model and provider of its last run. It takes the
     * session's lock, so it never runs beside a run of the session; `limits` are the user's
     * (`maxContextTokens`, `maxOutputTokens`, the first-token timeout of the summary request).
     */
    readonly compact: (
      sessionId: SessionId,
      options?: { readonly focus?: string | undefined; readonly limits?: Limits | undefined }
    ) => Effect.Effect<CompactionResult, CompactionError>
  }
>() {}

/** The compaction hooks plugins register (`api.compaction.before` / `after`), run by every compaction. */
export class CompactionHooks extends Context.Tag("@alisio/runtime/CompactionHooks")<
  CompactionHooks,
  CompactionHooksService
>() {}

export const layerHooks: Layer.Layer<CompactionHooks> = Layer.effect(CompactionHooks, makeHooks)

interface Chosen {
  readonly service: LanguageModelService
  readonly model: string
  readonly info: ModelInfo | undefined
}

/**
 * `Compaction` over the session store: the model of a session's last run is found among the
 * registered `Providers`, else it is the context's `LanguageModel` when that is its provider.
 */
export const make = Effect.gen(function* () {
  const sessions = yield* SessionStore
  const hooks = yield* CompactionHooks
  const providers = yield* Effect.serviceOption(Providers)
  const fallback = yield* Effect.serviceOption(LanguageModel)

  const modelOf = (sessionId: SessionId, fail: (message: string) => CompactionError) =>
    Effect.gen(function* () {
      const runs = sessions.runs === undefined ? [] : yield* sessions.runs(sessionId)
      const last = runs.at(-1)
      if (last === undefined) return yield* fail("The session has no run yet, so there is no model to summarise with.")
      if (Option.isSome(providers)) {
        const registered = (yield* providers.value.list).find((entry) => entry.id === last.provider)
        if (registered !== undefined) {
          const resolved = yield* Effect.option(providers.value.resolve(`${last.provider}/${last.model}`))
          const info = Option.isSome(resolved) ? Option.getOrUndefined(resolved.value.info) : undefined
          return { service: registered.service, model: last.model, info } satisfies Chosen
        }
      }
      if (Option.isSome(fallback) && fallback.value.provider === last.provider) {
        const models = yield* Effect.orElseSucceed(fallback.value.models, () => [])
        const info = models.find((model) => model.id === last.model)
        return { service: fallback.value, model: last.model, info } satisfies Chosen
      }
      return yield* fail(
        `The provider ${last.provider} of the session's last run is not configured; add it to use ${last.provider}/${last.model}.`
      )
    })

  const compact: Compaction["Type"]["compact"] = (sessionId, options = {}) => {
    const fail = (message: string) => new CompactionError({ sessionId, message })
    return Effect.scoped(
      Effect.gen(function* () {
        yield* sessions.session(sessionId)
        yield* sessions.lockSession(sessionId, currentOwner)
        const chosen = yield* modelOf(sessionId, fail)
        const current: CompactionSnapshot | undefined =
          sessions.compactions === undefined
            ? undefined
            : Option.getOrUndefined(yield* sessions.compactions.latest(sessionId))
        const limits = resolveLimits(options.limits)
        const window = withLearnedWindow(
          resolveContextWindow(limits.maxContextTokens, chosen.info?.contextWindow),
          chosen.service.learnedWindows === undefined
            ? undefined
            : yield* chosen.service.learnedWindows.read(chosen.model)
        )
        // A message left out of requests for its size is left out of the summary's too.
        const history: ReadonlyArray<HistoryEntry> = applyLeftOut(
          (yield* sessions.messages(sessionId, { afterPosition: current?.lastPosition })).map(
            ({ message, position }) => ({ position, message })
          ),
          yield* readLeftOut(sessions, sessionId),
          window
        )
        const output = resolveOutputBudget(limits.maxOutputTokens, chosen.info?.maxOutputTokens).maxOutputTokens
        const calibration = { ratio: undefined }
        const measure = (snapshot: CompactionSnapshot | undefined) =>
          estimateTokens(
            requestChars({
              model: chosen.model,
              messages: toRequestMessages(history, snapshot),
              tools: [],
              maxOutputTokens: output
            }),
            calibration
          )
        const summarized = yield* summarize({
          sessionId,
          reason: "manual",
          focus: options.focus,
          model: chosen.model,
          history,
          current,
          budget: budgetOf(window, output),
          calibration,
          summarize: summarizeDetached({
            sessionId,
            provider: chosen.service,
            model: chosen.model,
            limits,
            store: sessions
          }),
          hooks
        })
        const tokensBefore = measure(current)
        const tokensAfter = measure(summarized.snapshot)
        // A summary no shorter than what it replaces (a short session, a wordy model) would only
        // make every later request longer: keep the history as it is.
        if (tokensAfter >= tokensBefore) {
          return yield* fail(
            `Nothing compacted: the summary (about ${tokensAfter} tokens with the rest of the history) is no shorter than the history it would replace (about ${tokensBefore}), so the history is kept as it is.`
          )
        }
        yield* Effect.uninterruptible(
          storeCompaction(sessions, {
            sessionId,
            focus: options.focus,
            snapshot: summarized.snapshot,
            tokensBefore,
            tokensAfter
          })
        )
        yield* hooks.after({
          sessionId,
          reason: "manual",
          summary: summarized.snapshot.summary,
          tokensBefore,
          tokensAfter,
          messagesCompacted: summarized.snapshot.messagesCompacted
        })
        return { tokensBefore, tokensAfter, messagesCompacted: summarized.snapshot.messagesCompacted }
      })
    ).pipe(
      Effect.catchTags({
        SessionNotFoundError: (error) => Effect.fail(fail(error.message)),
        SessionLockedError: (error) =>
          Effect.fail(
            fail(`The session is in use by a run (process ${error.holderPid}); compact it when that run has ended.`)
          ),
        StoreError: (error) => Effect.fail(fail(error.message)),
        NothingToCompact: (error) => Effect.fail(fail(`Nothing to compact: ${error.message}.`)),
        EmptySummary: (error) => Effect.fail(fail(`Compacting failed: ${error.message}.`)),
        ProviderError: (error) => Effect.fail(fail(`Compacting failed: the summary request failed: ${error.message}`)),
        RunTimeoutError: (error) => Effect.fail(fail(`Compacting failed: the summary request failed: ${error.message}`))
      })
    )
  }

  return Compaction.of({ compact })
})

/** `Compaction`; needs `SessionStore` and `CompactionHooks`, uses `Providers` and `LanguageModel` when present. */
export const layer: Layer.Layer<Compaction, never, SessionStore | CompactionHooks> = Layer.effect(Compaction, make)
