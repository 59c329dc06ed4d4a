import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as BrokenPipe from "./BrokenPipe.js"
import { type CliError, ExitCode, requestedExit } from "./CliError.js"
import * as Logging from "./Logging.js"

// The edge every command runs at: signals, the terminal going away, one line for a user's mistake,
// the exit code. main.ts runs the parsed command line here; TuiMain.ts the interactive UI, without
// loading the command tree.

const isCliError = (error: unknown): error is CliError => Predicate.isTagged(error, "CliError")

const exitCodeOf = (exit: Exit.Exit<unknown, unknown>, signalled: boolean): number => {
  if (signalled || (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause))) return ExitCode.cancelled
  if (Exit.isSuccess(exit)) return requestedExit()
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure) && isCliError(failure.value)) return failure.value.exitCode
  return ExitCode.failed
}

/** Prints a user's mistake as one line; anything else is a bug and keeps its details. */
const reportFailure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapErrorCause(effect, (cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.void
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure) && isCliError(failure.value)) {
      // It may quote a server, a file or a plugin: no escape sequence reaches the terminal.
      const message = terminalSafe(failure.value.message)
      return Effect.sync(() => process.stderr.write(`alisio: ${message}\n`))
    }
    return Effect.sync(() => process.stderr.write(`alisio: internal error\n${Cause.pretty(cause)}\n`))
  })

/**
 * Runs a command's program over the platform services it needs and exits with its code. Ctrl-C
 * once cancels, twice exits. SIGTERM and SIGHUP (the terminal closed) cancel like Ctrl-C (TL-7).
 * The command tree and the UI take `NodeContext.layer`; `alisio run` only the file system: the
 * whole context's terminal reads `process.stdin` as it is built (~8 ms for a run that never reads
 * it), and its worker and command executor modules cost a run's start their Schemas.
 */
export const runAtEdge = <A, E, R>(program: Effect.Effect<A, E, R>, platform: Layer.Layer<R>): void => {
  BrokenPipe.watch()
  let signalled = false
  const onSignal = () => {
    signalled = true
    process.once("SIGINT", () => process.exit(ExitCode.cancelled))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  let hungUp = false
  const onHangUp = () => {
    if (hungUp) return
    hungUp = true
    // runMain interrupts the program on SIGTERM only; a closed terminal takes the same path.
    process.emit("SIGTERM", "SIGTERM")
  }
  process.once("SIGHUP", onHangUp)
  for (const stream of [process.stdout, process.stderr]) {
    // Writing to a closed terminal fails with EIO, often before SIGHUP is handled: that is the
    // hang-up too, and must not crash the cancellation. Other errors keep their default (a crash).
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EIO" || hungUp) onHangUp()
      else if (stream.listenerCount("error") === 1) throw error
    })
  }
  program.pipe(
    reportFailure,
    Effect.provide(Layer.merge(platform, Logging.layer)),
    NodeRuntime.runMain({
      disableErrorReporting: true,
      disablePrettyLogger: true,
      teardown: (exit, onExit) => onExit(exitCodeOf(exit, signalled))
    })
  )
}
