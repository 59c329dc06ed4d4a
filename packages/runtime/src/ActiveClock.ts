import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
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
 *
 * Whatever ends it (its own end, the budget, or an interruption from outside), it returns only once
 * `effect` has ended, finalizers included, as `Effect.timeout` does: a cancelled run's tool calls
 * are recorded before its terminal event (EV-1). The race waits uninterruptibly; an interruption
 * from outside reaches `effect` as the child fiber it is. `Effect.raceFirst` would return while
 * the loser is still being interrupted.
 */
export const timeoutActive = <A, E, R>(
  open: SubscriptionRef.SubscriptionRef<number>,
  ms: number | undefined,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<Option.Option<A>, E, R> =>
  ms === undefined
    ? Effect.map(effect, Option.some)
    : Effect.uninterruptibleMask((restore) =>
        Effect.raceWith(Effect.exit(restore(effect)), Effect.interruptible(sleepActive(open, ms)), {
          onSelfDone: (exit, timer) =>
            Effect.zipRight(Fiber.interrupt(timer), Effect.map(Effect.flatten(exit), Option.some)),
          onOtherDone: (exit, work) =>
            Effect.zipRight(
              Fiber.interrupt(work),
              Exit.isSuccess(exit) ? Effect.succeed(Option.none<A>()) : Effect.failCause(exit.cause)
            )
        })
      )
