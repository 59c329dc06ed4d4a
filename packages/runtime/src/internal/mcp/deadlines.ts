// The call timeouts of one connection, kept by one fiber that sleeps on the Effect clock until the
// earliest deadline of the calls under way. A fiber forked per call to sleep for it, interrupted
// when the call ended, cost a call about 0.2 ms of CPU, as much as the SDK's whole call
// (`pnpm bench mcp`); here a call links itself into a list and takes itself out.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/**
 * One call's deadline: the call's own object (a subclass), linked into the connection's list while
 * it waits, so adding one allocates nothing (an entry and an `expire` closure a call were garbage
 * on the path of every MCP call; a Set before them rehashed its table as calls came and went).
 */
export abstract class Deadline {
  /** When it expires, on the watcher's clock; set by `add`. */
  at = 0
  previous: Deadline | undefined = undefined
  next: Deadline | undefined = undefined
  linked = false
  /** Called once, from the watcher, when the deadline passed (unless removed before). */
  abstract expire(): void
}

export interface Deadlines {
  /** Links `deadline` to expire after `ms` on the clock, unless `remove` comes first. Once per deadline. */
  readonly add: (deadline: Deadline, ms: number) => void
  /** Forgets a deadline (once it expired, or was removed already, this does nothing). */
  readonly remove: (deadline: Deadline) => void
}

/** Starts the watcher in the scope (on the clock of the fiber that makes it). */
export const make: Effect.Effect<Deadlines, never, Scope.Scope> = Effect.gen(function* () {
  const clock = yield* Effect.clock
  let first: Deadline | undefined
  const link = (entry: Deadline) => {
    entry.next = first
    if (first !== undefined) first.previous = entry
    first = entry
  }
  const unlink = (entry: Deadline) => {
    if (!entry.linked) return
    entry.linked = false
    if (entry.previous === undefined) first = entry.next
    else entry.previous.next = entry.next
    if (entry.next !== undefined) entry.next.previous = entry.previous
    entry.previous = undefined
    entry.next = undefined
  }
  // The deadline the watcher sleeps until; undefined while it waits for a first entry.
  let sleepingUntil: number | undefined
  // A wake asked for before the watcher waits (it may not have started yet) is kept, not lost.
  let signalled = false
  let wake: (() => void) | undefined
  const signal = () => {
    signalled = true
    wake?.()
  }

  const woken = Effect.async<void>((resume) => {
    if (signalled) {
      signalled = false
      return resume(Effect.void)
    }
    wake = () => {
      wake = undefined
      signalled = false
      resume(Effect.void)
    }
    return Effect.sync(() => {
      wake = undefined
    })
  })

  const watch = Effect.gen(function* () {
    for (;;) {
      if (first === undefined) {
        sleepingUntil = undefined
        yield* woken
        continue
      }
      signalled = false
      const now = clock.unsafeCurrentTimeMillis()
      let earliest = Number.POSITIVE_INFINITY
      let entry: Deadline | undefined = first
      while (entry !== undefined) {
        const next: Deadline | undefined = entry.next
        if (entry.at <= now) {
          unlink(entry)
          entry.expire()
        } else if (entry.at < earliest) {
          earliest = entry.at
        }
        entry = next
      }
      if (first === undefined) continue
      sleepingUntil = earliest
      // Woken early only by a call whose deadline comes before this one.
      yield* Effect.raceFirst(clock.sleep(Duration.millis(earliest - now)), woken)
    }
  })
  yield* Effect.forkScoped(watch)

  return {
    add: (deadline, ms) => {
      deadline.at = clock.unsafeCurrentTimeMillis() + ms
      deadline.linked = true
      link(deadline)
      if (sleepingUntil === undefined || deadline.at < sleepingUntil) signal()
    },
    remove: unlink
  }
})
