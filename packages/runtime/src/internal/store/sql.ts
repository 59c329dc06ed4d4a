// What every part of the session store shares: the connection, typed statements through
// SqlSchema (requests encoded, rows decoded), the owner columns and the common failures.
// Reads that do not decode fail as `corrupt`; a write whose request does not encode is a bug
// in the caller and dies.

import { onFirstCall as madeOnFirstCall } from "@alisio/domain/OnFirstUse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { ProcessOwner } from "../../ProcessOwner.js"
import { type Database, MEMORY, storeError } from "../sessionDatabase.js"

/** The statuses of a run or session that some process still answers for. */
export const unfinished = "('queued', 'running')"

export const Id = Schema.Struct({ id: Schema.String })

export const Owner = {
  owner_pid: Schema.Int,
  owner_token: Schema.String,
  owner_host: Schema.NullOr(Schema.String)
}

export const ownerColumns = (owner: ProcessOwner) => ({
  owner_pid: owner.pid,
  owner_token: owner.token,
  owner_host: owner.host ?? null
})

export const ownerOf = (row: {
  readonly pid: number
  readonly token: string
  readonly host: string | null
}): ProcessOwner => ({ pid: row.pid, token: row.token, ...(row.host === null ? {} : { host: row.host }) })

/**
 * A part's statements, each built (its Schemas made, its encoder and decoder compiled) on its first
 * call rather than when the store opens: a run calls a dozen of the ~50, and building them all cost
 * every open ~7.5 ms and ~1.5 MB of garbage.
 */
export const onFirstCall = <M extends Record<string, () => (input: never) => unknown>>(
  make: M
): { readonly [K in keyof M]: ReturnType<M[K]> } => {
  const statements: Record<string, (input: never) => unknown> = {}
  for (const [name, build] of Object.entries(make)) statements[name] = madeOnFirstCall(build)
  return statements as { readonly [K in keyof M]: ReturnType<M[K]> }
}

/** The first problem of a decoding, on one line (an error is one line): `[3].payload: Expected …`. */
export const firstProblem = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const where =
    issue === undefined
      ? ""
      : issue.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("")
  const text = `${where === "" ? "" : `${where.replace(/^\./, "")}: `}${issue?.message ?? error.message}`
  return text.replace(/\s+/g, " ").trim().slice(0, 300)
}

export const makeSql = (db: Database) => {
  const file = db.filename === MEMORY ? "the in-memory session database" : db.filename

  const reading =
    <I, A, E, R>(what: string, query: (input: I) => Effect.Effect<A, E | ParseResult.ParseError, R>) =>
    (input: I) =>
      Effect.catchIf(query(input), ParseResult.isParseError, (error) =>
        Effect.fail(
          storeError(
            db.filename,
            "corrupt",
            `${what} in ${file} is not in the shape Alisio wrote (${firstProblem(error)}).`
          )
        )
      )
  const writing =
    <I, A, E, R>(query: (input: I) => Effect.Effect<A, E | ParseResult.ParseError, R>) =>
    (input: I) =>
      Effect.catchIf(query(input), ParseResult.isParseError, (error) => Effect.die(error))
  /** `SqlSchema.single` on a statement that always returns a row. */
  const always =
    <I, A, E, R>(query: (input: I) => Effect.Effect<A, E | Cause.NoSuchElementException, R>) =>
    (input: I) =>
      Effect.catchIf(query(input), Cause.isNoSuchElementException, (error) => Effect.die(error))

  const notFound = (what: string) => storeError(db.filename, "not_found", `${what} does not exist in ${file}.`)

  return { db, run: db.run, file, reading, writing, always, notFound }
}

export type Sql = ReturnType<typeof makeSql>
