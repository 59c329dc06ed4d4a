// What the core commands share: finding the session they act on, errors, sizes and ages in words.

import { CommandError, type CommandOutput } from "@alisio/domain/Command"
import type { StoreError } from "@alisio/domain/Errors"
import { SessionId } from "@alisio/domain/Ids"
import * as Effect from "effect/Effect"
import { type Session, SessionStore } from "../../../SessionStore.js"
import type { CoreInvocation } from "../entry.js"

export const text = (value: string): CommandOutput => ({ _tag: "Text", text: value })

export const usage = (command: string, message: string) => new CommandError({ reason: "usage", command, message })
export const failed = (command: string, message: string) => new CommandError({ reason: "failed", command, message })

/** A store failure as the command's failure. */
export const storeFailure =
  (command: string) =>
  (error: StoreError): CommandError =>
    failed(command, error.message)

export const SHORT_ID = 8
export const shortId = (id: string): string => id.slice(0, SHORT_ID)

/** A session's id and title as lists show them. */
export const describeSession = (session: Session): string =>
  `${shortId(session.id)}${session.title === undefined ? "" : ` "${session.title}"`}`

/** The session `text` names: its whole id, or the start of exactly one session's id. */
export const findSession = (command: string, wanted: string) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const exact = yield* Effect.either(store.session(SessionId.make(wanted)))
    if (exact._tag === "Right") return exact.right
    if (exact.left._tag === "StoreError") return yield* Effect.fail(failed(command, exact.left.message))
    const candidates = yield* Effect.mapError(store.sessionsByIdPrefix(wanted, 6), storeFailure(command))
    const [only] = candidates
    if (only !== undefined && candidates.length === 1) return only
    if (only === undefined) return yield* Effect.fail(usage(command, `No session ${wanted}; /sessions lists them.`))
    return yield* Effect.fail(
      usage(
        command,
        `${wanted} is the start of several sessions' ids (${candidates.slice(0, 5).map(describeSession).join(", ")}); give more of it.`
      )
    )
  })

/** The session the command acts on; without one, a usage error saying how to give it. */
export const requireSession = (invocation: CoreInvocation) =>
  invocation.sessionId === undefined
    ? Effect.fail(
        usage(
          invocation.name,
          `/${invocation.name} acts on a session, and there is none yet ${
            invocation.surface === "tui"
              ? "(send a message to start one, or /resume one)."
              : "(in `alisio run`, give -s <id> or -c)."
          }`
        )
      )
    : findSession(invocation.name, invocation.sessionId)

/** `512 B`, `1.5 KiB`. */
export const formatBytes = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/** How long ago, coarsely: `just now`, `5m ago`, `3h ago`, `2d ago`. */
export const age = (now: number, then: number): string => {
  const minutes = Math.floor((now - then) / 60_000)
  if (minutes < 1) return "just now"
  if (minutes < 60) return `${minutes}m ago`
  const hours = Math.floor(minutes / 60)
  return hours < 24 ? `${hours}h ago` : `${Math.floor(hours / 24)}d ago`
}

/** `12 345`: thousands apart, as token counts read best. */
export const formatCount = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, " ")

/** Lines padded into columns. */
export const columns = (rows: ReadonlyArray<ReadonlyArray<string>>, indent = ""): ReadonlyArray<string> => {
  const widths: Array<number> = []
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length)
  }
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd()
  )
}
