import * as Effect from "effect/Effect"

// When the reader of stdout goes away (`alisio run --json | head -1`), writes fail with EPIPE. A
// run then has nobody to report to: it is cancelled (CLI-2) by whoever waits on `stdoutClosed`;
// a command that waits on nothing (a listing) just stops, quietly, as `head` expects.

let closed = false
const waiters = new Set<() => void>()

const isClosedPipe = (error: NodeJS.ErrnoException) =>
  error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED" || error.code === "ECONNRESET"

// A closed terminal fails writes with EIO: that is the hang-up, which main.ts handles (it cancels
// the run like SIGHUP). Throwing here, before main.ts's listener runs, crashed the CLI instead.
const isClosedTerminal = (error: NodeJS.ErrnoException) => error.code === "EIO"

/** Installs the handlers once, at the edge: stdout's reader leaving is news, a failing stderr is not. */
export const watch = (): void => {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (isClosedTerminal(error)) return
    if (!isClosedPipe(error)) throw error
    if (closed) return
    closed = true
    if (waiters.size === 0) process.exit(0)
    for (const wake of waiters) wake()
  })
  process.stderr.on("error", (error: NodeJS.ErrnoException) => {
    if (!isClosedPipe(error) && !isClosedTerminal(error)) throw error
  })
}

/** Succeeds once stdout's reader has gone away. */
export const stdoutClosed: Effect.Effect<void> = Effect.async<void>((resume) => {
  if (closed) return resume(Effect.void)
  const wake = () => resume(Effect.void)
  waiters.add(wake)
  return Effect.sync(() => {
    waiters.delete(wake)
  })
})
