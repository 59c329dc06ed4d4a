import type { SessionNotFoundError, StoreError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import * as Paths from "@alisio/runtime/Paths"
import { resumedElsewhere } from "@alisio/runtime/SessionFolder"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import { CliError, ExitCode, usageError } from "./CliError.js"
import { findSession } from "./ShortIds.js"

/**
 * Checks that `session` may be resumed in `cwd` (`resumedElsewhere`). Another folder is a usage
 * error unless `--cwd` named it (`cwdGiven`): then the session, with its children, moves there
 * and the folder it left is returned.
 */
export const resumeIn = (
  store: SessionStore.SessionStoreService,
  session: SessionStore.Session,
  options: { readonly cwd: string; readonly cwdGiven: boolean; readonly start: string }
): Effect.Effect<string | undefined, CliError | StoreError | SessionNotFoundError> => {
  const problem = resumedElsewhere(session, options.cwd, options.start)
  if (problem === undefined) return Effect.succeed(undefined)
  if (options.cwdGiven) return Effect.as(store.moveSession(session.id, options.cwd), session.cwd)
  return Effect.fail(usageError(problem))
}

/**
 * The session `alisio -s` names, found (and moved by `--cwd`) before the UI draws anything, so a
 * wrong id or folder is an error on a terminal left as it was. Opens the database for this alone.
 */
export const sessionToResume = (
  paths: Paths.AlisioPaths,
  wanted: string,
  options: { readonly cwd: string; readonly cwdGiven: boolean }
): Effect.Effect<{ readonly id: SessionId; readonly movedFrom: string | undefined }, CliError> =>
  Effect.gen(function* () {
    const store = yield* SessionStore.SessionStore
    const session = yield* findSession(store, wanted)
    const movedFrom = yield* resumeIn(store, session, { ...options, start: "alisio" })
    return { id: session.id, movedFrom }
  }).pipe(
    Effect.provide(SessionStore.layer({ filename: Paths.databaseFile(paths.stateHome) })),
    Effect.mapError((error) =>
      error._tag === "CliError" ? error : new CliError({ message: error.message, exitCode: ExitCode.failed })
    )
  )
