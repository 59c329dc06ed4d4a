import * as fs from "node:fs"
import * as Effect from "effect/Effect"
import { type CliError, usageError } from "./CliError.js"

/**
 * `--cwd` names the workspace: a folder that is not there is a mistake, not an empty workspace.
 * Its own module so the UI checks it before its first frame without loading the configuration.
 */
export const checkWorkspace = (given: string, cwd: string): Effect.Effect<void, CliError> => {
  const stat = fs.statSync(cwd, { throwIfNoEntry: false })
  if (stat === undefined) return Effect.fail(usageError(`--cwd ${given}: no such folder`))
  if (!stat.isDirectory()) return Effect.fail(usageError(`--cwd ${given}: not a folder`))
  return Effect.void
}
