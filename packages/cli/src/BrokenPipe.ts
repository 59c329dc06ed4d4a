import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { CliError, ExitCode } from "./CliError.js"

// When the reader of stdout goes away (`alisio run --json | head -1`), writes fail with EPIPE. A
// run then has nobody to report to: it is cancelled (CLI-2) by whoever waits on `stdoutClosed`;
// a command that waits on nothing (a listing) just stops, quietly, as `head` expects.
// Any other failure of stdout (`> out.jsonl` on a full disk: ENOSPC) loses the output just the
// same: the run is cancelled too, and the person is told why in one line, never a stack trace.

/** Why stdout takes no more output: its reader left, or writing to it failed (`code`: `ENOSPC`…). */
export type StdoutLoss = { readonly _tag: "closed" } | { readonly _tag: "failed"; readonly reason: string }

let lost: StdoutLoss | undefined
const waiters = new Set<(loss: StdoutLoss) => void>()

const isClosedPipe = (error: NodeJS.ErrnoException) =>
  error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED" || error.code === "ECONNRESET"

// A closed terminal fails writes with EIO: that is the hang-up, which main.ts handles (it cancels
// the run like SIGHUP). Throwing here, before main.ts's listener runs, crashed the CLI instead.
const isClosedTerminal = (error: NodeJS.ErrnoException) => error.code === "EIO"

const describe = (error: NodeJS.ErrnoException): string =>
  error.code === "ENOSPC" || error.code === "EDQUOT"
    ? "the disk is full"
    : error.code === "EFBIG"
      ? "the file is too large"
      : (error.message || String(error.code)).replace(/, write$/, "")

/** The one line saying stdout failed, for a command that has no run to cancel. */
export const failureLine = (loss: StdoutLoss & { readonly _tag: "failed" }): string =>
  `alisio: could not write to stdout (${loss.reason})\n`

/** Installs the handlers once, at the edge: stdout's reader leaving is news, a failing stderr is not. */
export const watch = (): void => {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (isClosedTerminal(error)) return
    if (lost !== undefined) return
    const loss: StdoutLoss = isClosedPipe(error) ? { _tag: "closed" } : { _tag: "failed", reason: describe(error) }
    lost = loss
    if (waiters.size === 0) {
      if (loss._tag === "failed") process.stderr.write(failureLine(loss))
      process.exit(loss._tag === "closed" ? 0 : 1)
    }
    for (const wake of waiters) wake(loss)
  })
  // A failing stderr (`2>/dev/full`) leaves nobody to tell: the run goes on, stdout says the rest.
  process.stderr.on("error", () => {})
}

/** Succeeds once stdout takes no more output: its reader has gone away, or writing to it failed. */
export const stdoutClosed: Effect.Effect<StdoutLoss> = Effect.async<StdoutLoss>((resume) => {
  if (lost !== undefined) return resume(Effect.succeed(lost))
  const wake = (loss: StdoutLoss) => resume(Effect.succeed(loss))
  waiters.add(wake)
  return Effect.sync(() => {
    waiters.delete(wake)
  })
})

/** Stdout took no more output (`loss` says why): what a command writing a page at a time stops on. */
export class StdoutGone extends Data.TaggedError("StdoutGone")<{ readonly loss: StdoutLoss }> {}

// A write to a pipe whose reader left fails with an `error` event, delivered when the event loop
// gets a turn, and stdout to a pipe or a file writes synchronously on Linux, so a loop that only
// writes would never hear of it: after this many bytes it gives the event loop a turn.
const BYTES_BETWEEN_TURNS = 64 * 1024
let sinceTurn = 0

const nextTurn = Effect.async<void>((resume) => {
  const timer = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(timer))
})

const drained = Effect.async<void>((resume) => {
  const onDrain = () => resume(Effect.void)
  process.stdout.once("drain", onDrain)
  return Effect.sync(() => {
    process.stdout.off("drain", onDrain)
  })
})

/**
 * Writes `text` to stdout as fast as its reader takes it: it waits while stdout's buffer is full,
 * and fails with `StdoutGone` once stdout takes no more, so the writer stops reading and rendering.
 */
export const writeStdout = (text: string): Effect.Effect<void, StdoutGone> =>
  Effect.suspend(() => {
    if (lost !== undefined) return Effect.fail(new StdoutGone({ loss: lost }))
    const full = !process.stdout.write(text)
    sinceTurn += text.length
    if (!full && sinceTurn < BYTES_BETWEEN_TURNS) return Effect.void
    sinceTurn = 0
    return Effect.raceFirst(
      full ? drained : nextTurn,
      Effect.flatMap(stdoutClosed, (loss) => Effect.fail(new StdoutGone({ loss })))
    )
  })

/** How a command writing to stdout ends when it took no more: quietly when its reader left (`| head`), else in one line. */
export const ended = ({ loss }: StdoutGone): Effect.Effect<void, CliError> =>
  loss._tag === "closed"
    ? Effect.void
    : Effect.fail(new CliError({ message: `could not write to stdout (${loss.reason})`, exitCode: ExitCode.failed }))
