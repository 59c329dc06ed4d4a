import * as Effect from "effect/Effect"
import { makeMutex } from "../../internal/mutex.js"

interface Lock {
  readonly guard: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  users: number
}

// Process-wide: the calls of one response run at once (`limits.toolConcurrency`), and so do child
// sessions; they all change the same files.
const locks = new Map<string, Lock>()

/**
 * Runs `effect` holding the lock of the file at `real` (a checked real path): `edit` reads, changes
 * and writes a file as one step, so two edits of one file in one response both land, where each
 * would otherwise write its change over the file the other had not yet written.
 */
export const withFileLock =
  (real: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let lock = locks.get(real)
      if (lock === undefined) {
        lock = { guard: makeMutex(), users: 0 }
        locks.set(real, lock)
      }
      const held = lock
      held.users++
      return Effect.ensuring(
        held.guard(effect),
        Effect.sync(() => {
          if (--held.users === 0) locks.delete(real)
        })
      )
    })
