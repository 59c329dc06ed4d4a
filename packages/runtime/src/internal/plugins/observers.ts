// `api.events.on`: a plugin observes run events without ever holding a run up. The run event bus
// is bounded and pushes back on slow subscribers, so an observer never reads it at its handler's
// pace: one fiber drains the bus as fast as events come, keeping the types the plugin asked for in
// the observer's own sliding queue (the oldest event is dropped when it is full); a second fiber
// runs the handler on that queue. Drops and failures are reported, never thrown.

import type { KnownRunEvent, RunEventType } from "@alisio/domain/RunEvent"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

export interface ObserverOptions {
  /** A subscription to every event published from now on, closed with the scope. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<KnownRunEvent>, never, Scope.Scope>
  readonly type: RunEventType
  readonly handler: (event: KnownRunEvent) => Effect.Effect<void, unknown>
  /** How many events may wait for the handler before the oldest are dropped. */
  readonly capacity: number
  /** Told once when the observer starts dropping, and with the count once it has caught up. */
  readonly onDropped: (dropped: { readonly count: number; readonly caughtUp: boolean }) => Effect.Effect<void>
  readonly onFailure: (cause: Cause.Cause<unknown>, event: KnownRunEvent) => Effect.Effect<void>
}

/** Failures reported per observer; a handler failing on every event would flood stderr. */
const REPORTED_FAILURES = 3

/** Starts an observer for the life of the scope. */
export const observe = (options: ObserverOptions): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const bus = yield* options.subscribe
    const pending = yield* Effect.acquireRelease(Queue.sliding<KnownRunEvent>(options.capacity), Queue.shutdown)
    let dropped = 0
    let failures = 0

    const keep = (events: Iterable<KnownRunEvent>) =>
      Effect.suspend(() => {
        const wanted: Array<KnownRunEvent> = []
        for (const event of events) if (event.type === options.type) wanted.push(event)
        if (wanted.length === 0) return Effect.void
        return Effect.flatMap(Queue.size(pending), (size) => {
          const lost = Math.max(0, size + wanted.length - options.capacity)
          const first = dropped === 0 && lost > 0
          dropped += lost
          const offered = Queue.offerAll(pending, wanted)
          return first ? Effect.zipRight(offered, options.onDropped({ count: lost, caughtUp: false })) : offered
        })
      })
    // Wait for one event (so the drain sleeps while the bus is quiet), then take all that came.
    const drain = Effect.flatMap(Queue.take(bus), (first) =>
      Effect.flatMap(Queue.takeAll(bus), (rest) => keep([first, ...rest]))
    )
    yield* Effect.forkScoped(Effect.interruptible(Effect.forever(drain)))

    const caughtUp = Effect.flatMap(Queue.isEmpty(pending), (empty) => {
      if (!empty || dropped === 0) return Effect.void
      const count = dropped
      dropped = 0
      return options.onDropped({ count, caughtUp: true })
    })
    const handleNext = Effect.flatMap(Queue.take(pending), (event) =>
      Effect.suspend(() => options.handler(event)).pipe(
        Effect.catchAllCause((cause) => {
          if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
          return ++failures <= REPORTED_FAILURES ? options.onFailure(cause, event) : Effect.void
        }),
        Effect.zipRight(caughtUp)
      )
    )
    yield* Effect.forkScoped(Effect.interruptible(Effect.forever(handleNext)))
  })
