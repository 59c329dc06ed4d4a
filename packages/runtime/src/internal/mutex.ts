import * as Effect from "effect/Effect"

/**
 * A FIFO mutex whose uncontended path is synchronous. `Effect.Semaphore#withPermits` costs about
 * 11 µs a call here, which is the whole per-delta budget of the event emitter; contention is rare
 * there (only concurrent tool calls), so waiting goes through `Effect.async` and the free path does not.
 *
 * With `uninterruptible`, the guarded effect runs uninterruptibly once the lock is held (waiting for
 * it stays interruptible): the event emitter's commit-then-publish must not be cut between the two,
 * and this costs nothing more, as the lock is taken inside an uninterruptible region anyway.
 */
export const makeMutex = (options?: { readonly uninterruptible?: boolean }) => {
  let locked = false
  const waiters: Array<() => void> = []
  const shielded = options?.uninterruptible === true
  const releaseNow = () => {
    const next = waiters.shift()
    if (next === undefined) locked = false
    else next()
  }
  const release = Effect.sync(releaseNow)
  const wait = Effect.async<void>((resume) => {
    let handed = false
    const wake = () => {
      handed = true
      resume(Effect.void)
    }
    waiters.push(wake)
    // Interrupted while waiting: leave the queue, or pass on a lock handed over just now.
    return Effect.sync(() => {
      if (handed) releaseNow()
      else waiters.splice(waiters.indexOf(wake), 1)
    })
  })
  return <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const guarded = shielded ? effect : restore(effect)
        if (!locked) {
          locked = true
          return Effect.ensuring(guarded, release)
        }
        return Effect.zipRight(restore(wait), Effect.ensuring(guarded, release))
      })
    )
}
