import * as Schema from "effect/Schema"
import { ExitCode } from "./ExitCode.js"

export { ExitCode } from "./ExitCode.js"

/** A mistake the user can fix: printed as one line on stderr, no stack trace. */
export class CliError extends Schema.TaggedError<CliError>()("CliError", {
  message: Schema.String,
  exitCode: Schema.Number
}) {}

export const usageError = (message: string) => new CliError({ message, exitCode: ExitCode.usage })

let requestedExitCode: number = ExitCode.completed

/** Records the exit code a finished command asks for; the edge exits with it. */
export const setExitCode = (code: number): void => {
  requestedExitCode = code
}
export const requestedExit = (): number => requestedExitCode
