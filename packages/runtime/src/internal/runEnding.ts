// The end of a run (EV-5, CLI-2): its one terminal event and its rows, whatever the exit.
import type { RunEventDataMap, RunStatus } from "@alisio/domain/RunEvent"
import type { Usage } from "@alisio/domain/Usage"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as Option from "effect/Option"
import type { RunState } from "./runState.js"
import type { LoopResult, RunFailure } from "./turnLoop.js"

/** How a run ended: its terminal event and the status of its rows. */
export interface Ending {
  readonly type: "run_completed" | "run_failed" | "run_cancelled" | "turns_exceeded"
  readonly data: RunEventDataMap[Ending["type"]]
  readonly status: RunStatus
  readonly error?: string
}

export const describeEnd = (
  exit: Exit.Exit<LoopResult, RunFailure>,
  state: { readonly turns: number; readonly usage: Usage; readonly maxTurns: number }
): Ending => {
  if (Exit.isSuccess(exit)) {
    return exit.value._tag === "Completed"
      ? {
          type: "run_completed",
          data: { text: exit.value.text, turns: state.turns, usage: state.usage },
          status: "completed"
        }
      : {
          type: "turns_exceeded",
          data: { maxTurns: state.maxTurns, turns: state.turns },
          status: "turns_exceeded",
          error: `The run reached its limit of ${state.maxTurns} turns.`
        }
  }
  if (Cause.isInterruptedOnly(exit.cause)) {
    return { type: "run_cancelled", data: { reason: "The run was cancelled." }, status: "cancelled" }
  }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    switch (error._tag) {
      case "RunTimeoutError":
        return {
          type: "run_failed",
          data: { code: "timeout", error: error.message, timeout: error.timeout },
          status: "failed",
          error: error.message
        }
      case "OutputBudgetExhaustedError":
        return {
          type: "run_failed",
          data: { code: "output_truncated", error: error.message, truncation: error.truncation },
          status: "failed",
          error: error.message
        }
      case "ContextExhaustedError":
        return {
          type: "run_failed",
          data: {
            code: "context_exhausted",
            error: error.message,
            context: error.context,
            ...(error.providerCode === undefined ? {} : { providerCode: error.providerCode })
          },
          status: "failed",
          error: error.message
        }
      case "ProviderError":
        return {
          type: "run_failed",
          data: { code: "provider_error", error: error.message, providerCode: error.code },
          status: "failed",
          error: error.message
        }
      default:
        return {
          type: "run_failed",
          data: { code: "internal", error: error.message },
          status: "failed",
          error: error.message
        }
    }
  }
  const message = `Internal error: ${Cause.pretty(exit.cause).split("\n")[0] ?? "unknown"}`
  return { type: "run_failed", data: { code: "internal", error: message }, status: "failed", error: message }
}

/**
 * Ends a run whatever its exit (run uninterruptibly, from `onExit`): every child run first
 * (CH-2), then exactly one terminal event, published even when the store refuses it, then the
 * run's row and its session's status. A store failure here is logged, never a second ending.
 */
export const finalize = (
  state: RunState,
  children: FiberMap.FiberMap<string, unknown, unknown>,
  exit: Exit.Exit<LoopResult, RunFailure>
) =>
  Effect.gen(function* () {
    yield* FiberMap.clear(children)
    const ending = describeEnd(exit, { turns: state.turns, usage: state.usage, maxTurns: state.limits.maxTurns })
    const stored = yield* Effect.either(state.emitter.emitFinal(ending.type, ending.data as never))
    const { store } = state
    const ended = yield* Effect.either(
      store.endRun === undefined
        ? store.setSessionStatus(state.sessionId, ending.status)
        : store.endRun(state.runId, {
            status: ending.status,
            usage: state.usage,
            ...(ending.error === undefined ? {} : { error: ending.error })
          })
    )
    // One line for what could not be stored, none when it is the run's own failure (a full disk
    // that failed the run fails its ending too, and the user was told once).
    const problem = Either.isLeft(stored) ? stored.left : Either.isLeft(ended) ? ended.left : undefined
    if (problem !== undefined && !(ending.error ?? "").includes(problem.message)) {
      const what = Either.isLeft(stored) ? `its ${ending.type} event was published but` : `its end (${ending.status})`
      yield* Effect.logError(`Run ${state.runId}: ${what} could not be stored: ${problem.message}`)
    }
  })
