// Which session a run or the UI goes on in. A session works in one folder (the runtime's
// `SessionFolder` words the rule): `-s` of another folder's session is refused unless `--cwd`
// names where it goes on, and then it moves there.

import type { SessionLockedError, SessionNotFoundError, StoreError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import * as Paths from "@alisio/runtime/Paths"
import { childSessionRefusal, resumedElsewhere } from "@alisio/runtime/SessionFolder"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Setup } from "./App.js"
import { CliError, ExitCode, usageError } from "./CliError.js"
import type { RunFlags } from "./Flags.js"
import { findSession, shortId } from "./ShortIds.js"

/**
 * Checks that `session` may be resumed in `cwd`: a subagent's child session never is
 * (`childSessionRefusal` names its root); another folder (`resumedElsewhere`) is a usage error
 * unless `--cwd` named it (`cwdGiven`): then the session, with its children, moves there and the
 * folder it left is returned.
 */
export const resumeIn = (
  store: SessionStore.SessionStoreService,
  session: SessionStore.Session,
  options: { readonly cwd: string; readonly cwdGiven: boolean; readonly start: string }
): Effect.Effect<string | undefined, CliError | StoreError | SessionNotFoundError | SessionLockedError> =>
  Effect.gen(function* () {
    const child = yield* childSessionRefusal(store, session, options.start)
    if (child !== undefined) return yield* usageError(child)
    const problem = resumedElsewhere(session, options.cwd, options.start)
    if (problem === undefined) return undefined
    if (options.cwdGiven) return yield* Effect.as(store.moveSession(session.id, options.cwd), session.cwd)
    return yield* usageError(problem)
  })

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

/**
 * The session to run in — `--session` (its id or the first characters of it), `--continue`, or a
 * new one — or, for a `--request-id` some root run already claimed, that run (found in one query,
 * in whatever session it ran: ST-3).
 */
export const chooseSession = (setup: Setup, flags: RunFlags) =>
  Effect.gen(function* () {
    const store = yield* SessionStore.SessionStore
    const start = (sessionId: Option.Option<SessionId>) => ({
      sessionId,
      existing: Option.none<SessionStore.RunRecord>()
    })
    if (Option.isSome(flags.session)) {
      const session = yield* findSession(store, flags.session.value)
      const left = yield* resumeIn(store, session, {
        cwd: setup.cwd,
        cwdGiven: Option.isSome(flags.cwd),
        start: "alisio run"
      })
      if (left !== undefined && !flags.quiet) {
        process.stderr.write(`alisio: session ${shortId(session.id)} moved from ${left} to ${setup.cwd}\n`)
      }
      return start(Option.some(session.id))
    }
    if (flags.continue) {
      const latest = yield* store.latestSession(setup.cwd)
      if (Option.isSome(latest)) return start(Option.some(latest.value.id))
      return { ...start(Option.none()), nothingToContinue: true }
    }
    if (Option.isSome(flags.requestId) && store.runForRequest !== undefined) {
      const existing = yield* store.runForRequest(flags.requestId.value)
      if (Option.isSome(existing)) return { sessionId: Option.some(existing.value.sessionId), existing }
    }
    return start(Option.none())
  })
