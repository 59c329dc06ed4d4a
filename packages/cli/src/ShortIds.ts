import type { StoreError } from "@alisio/domain/Errors"
import { SessionId } from "@alisio/domain/Ids"
import type { Session, SessionStoreService } from "@alisio/runtime/SessionStore"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Effect from "effect/Effect"
import { type CliError, usageError } from "./CliError.js"

/** How many characters of a session id the CLI shows: enough to tell sessions apart in practice. */
export const SHORT_ID_LENGTH = 8

/** The id as lists show it; any unambiguous prefix of it is accepted wherever an id is. */
export const shortId = (id: string): string => id.slice(0, SHORT_ID_LENGTH)

/**
 * An id as the person typed it, for a message: cut past what any id holds, and quoted when it
 * holds a control character (an escape sequence typed or pasted by mistake reaches no terminal).
 */
export const typedId = (text: string): string => {
  const cut = text.length > 40 ? `${text.slice(0, 36)}…` : text
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  return /[\u0000-\u001f\u007f-\u009f]/.test(cut) ? JSON.stringify(cut) : cut
}

/** The message for an id that names no session. */
export const noSession = (text: string): string =>
  `No session ${typedId(text)}. \`alisio sessions list --all\` shows every session.`

// Enough candidates to show that a prefix is ambiguous and help pick; more would not fit a line.
const CANDIDATES = 5

const describe = (session: Session) => {
  const title = session.title === undefined ? "" : terminalSafe(session.title).replace(/\s+/g, " ").trim()
  return `${session.id}${title === "" ? "" : ` "${title.length > 30 ? `${title.slice(0, 29)}…` : title}"`}`
}

/**
 * The session `text` names: its whole id, or the first characters of exactly one session's id.
 * An unknown or ambiguous id is a usage error; an ambiguous one lists the candidates.
 */
export const findSession = (store: SessionStoreService, text: string): Effect.Effect<Session, CliError | StoreError> =>
  Effect.gen(function* () {
    const wanted = text.trim()
    if (wanted === "") return yield* usageError("An empty session id names no session.")
    const exact = yield* Effect.either(store.session(SessionId.make(wanted)))
    if (exact._tag === "Right") return exact.right
    if (exact.left._tag === "StoreError") return yield* Effect.fail(exact.left)
    const candidates = yield* store.sessionsByIdPrefix(wanted, CANDIDATES + 1)
    const [only] = candidates
    if (only !== undefined && candidates.length === 1) return only
    if (only === undefined) {
      return yield* usageError(noSession(wanted))
    }
    const shown = candidates.slice(0, CANDIDATES).map(describe).join(", ")
    const more = candidates.length > CANDIDATES ? " and more" : ""
    return yield* usageError(
      `${typedId(wanted)} is the start of several sessions' ids (${shown}${more}); give more of the id.`
    )
  })
