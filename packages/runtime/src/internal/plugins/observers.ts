// `api.events.on`: a plugin observes run events without ever holding a run up. The observer is
// told of the events of its type as they are published (`RunEvents.listen`, synchronous, so the
// events of other types, a run's deltas above all, cost it nothing) and keeps them in its own
// sliding buffer (the oldest event is dropped when it is full); one fiber runs the handler on that
// buffer. Drops and failures are reported, never thrown, by a second fiber, in order.

import type { KnownRunEvent, RunEventType } from "@alisio/domain/RunEvent"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

export interface ObserverOptions {
  /** Calls the listener with every event of the type published from now on, until the scope closes. */
  readonly listen: (
    type: RunEventType,
    listener: (event: KnownRunEvent) => void
  ) => Effect.Effect<void, never, Scope.Scope>
  readonly type: RunEventType
  readonly handler: (event: KnownRunEvent) => Effect.Effect<void, unknown>
  /** How many events may wait for the handler before the oldest are dropped. */
  readonly capacity: number
  /** Told once when the observer starts dropping, and with the count once it has caught up. */
  readonly onDropped: (dropped: { readonly count: number; readonly caughtUp: boolean }) => Effect.Effect<void>
  readonly onFailure: (cause: Cause.Cause<unknown>, event: KnownRunEvent) => Effect.Effect<void>
}

/**
 * Failures reported per observer, at most one per run: a handler failing on every event (each
 * delta of an answer) would flood stderr.
 */
const REPORTED_FAILURES = 3

/** Starts an observer for the life of the scope. */
export const observe = (options: ObserverOptions): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const pending: Array<KnownRunEvent> = []
    // The handler's fiber while it waits for an event.
    let wake: (() => void) | undefined
    let dropped = 0
    let failures = 0
    let lastFailedRun: string | undefined
    const reports = yield* Effect.acquireRelease(
      Queue.unbounded<{ readonly count: number; readonly caughtUp: boolean }>(),
      Queue.shutdown
    )

    yield* options.listen(options.type, (event) => {
      pending.push(event)
      if (pending.length > options.capacity) {
        pending.shift()
        if (dropped++ === 0) reports.unsafeOffer({ count: 1, caughtUp: false })
      }
      const waiting = wake
      wake = undefined
      waiting?.()
    })
    yield* Effect.forkScoped(
      Effect.interruptible(Effect.forever(Effect.flatMap(Queue.take(reports), options.onDropped)))
    )

    const next: Effect.Effect<KnownRunEvent> = Effect.suspend(() =>
      pending.length > 0
        ? Effect.succeed(pending.shift()!)
        : Effect.async<KnownRunEvent>((resume) => {
            wake = () => resume(next)
            return Effect.sync(() => {
              wake = undefined
            })
          })
    )
    const caughtUp = Effect.sync(() => {
      if (pending.length > 0 || dropped === 0) return
      reports.unsafeOffer({ count: dropped, caughtUp: true })
      dropped = 0
    })
    const handleNext = Effect.flatMap(next, (event) =>
      Effect.suspend(() => options.handler(event)).pipe(
        Effect.catchAllCause((cause) => {
          if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
          if (event.runId === lastFailedRun) return Effect.void
          lastFailedRun = event.runId
          return ++failures <= REPORTED_FAILURES ? options.onFailure(cause, event) : Effect.void
        }),
        Effect.zipRight(caughtUp)
      )
    )
    yield* Effect.forkScoped(Effect.interruptible(Effect.forever(handleNext)))
  })
