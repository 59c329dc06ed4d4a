import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

const whenIdle = (open: SubscriptionRef.SubscriptionRef<number>) =>
  open.changes.pipe(
    Stream.filter((n) => n === 0),
    Stream.take(1),
    Stream.runDrain
  )

const whenBusy = (open: SubscriptionRef.SubscriptionRef<number>) =>
  open.changes.pipe(
    Stream.filter((n) => n > 0),
    Stream.take(1),
    Stream.runDrain
  )

/**
 * Sleeps `ms` of active time: time counts only while no wait on a person is open (LIM-1). It sleeps
 * in slices that end when a wait opens, and resumes counting when none is open again.
 */
export const sleepActive = (open: SubscriptionRef.SubscriptionRef<number>, ms: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    let left = ms
    while (left > 0) {
      // A change stream costs about 1.5 ms of CPU to set up: only wait on one when a wait is open.
      if ((yield* SubscriptionRef.get(open)) > 0) yield* whenIdle(open)
      const start = yield* Clock.currentTimeMillis
      yield* Effect.raceFirst(Effect.sleep(left), whenBusy(open))
      left -= (yield* Clock.currentTimeMillis) - start
    }
  })

/**
 * Runs `effect` with a budget of `ms` active time; `None` when the budget ran out first (the effect
 * is then interrupted), `Some` with its value otherwise. Without a budget it just runs.
 */
export const timeoutActive = <A, E, R>(
  open: SubscriptionRef.SubscriptionRef<number>,
  ms: number | undefined,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<Option.Option<A>, E, R> =>
  ms === undefined
    ? Effect.map(effect, Option.some)
    : Effect.raceFirst(Effect.map(effect, Option.some), Effect.as(sleepActive(open, ms), Option.none<A>()))
