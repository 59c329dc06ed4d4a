import * as path from "node:path"
import type { SessionLockedError, SessionNotFoundError, StoreError } from "@alisio/domain/Errors"
import { encodeRunEvent } from "@alisio/domain/RunEvent"
import { userHome } from "@alisio/runtime/PathLayout"
import { SessionStore, type SessionSummary, type StoredEvent } from "@alisio/runtime/SessionStore"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { loadSetup, type Setup, storeLayer } from "./App.js"
import * as BrokenPipe from "./BrokenPipe.js"
import { CliError, ExitCode, usageError } from "./CliError.js"
import { forEachStoredEvent, reportUnreadable } from "./EventPages.js"
import { jsonLine } from "./JsonLine.js"
import { relativeTime } from "./RelativeTime.js"
import { displayTitle, SessionListItem, sessionRecord, writeRecord } from "./SessionRecords.js"
import { findSession, noSession, shortId } from "./ShortIds.js"

/**
 * Runs `body` with the session database of this state home, after reconciling what dead
 * processes left running (ST-4); store failures become one line. A database that cannot be
 * written (read-only, or a full disk) is still read: reconciling is then left to a later start,
 * and with `readOnly` (the command only reads) a database on a read-only folder opens read-only.
 */
export const withStore = (
  body: (
    store: SessionStore["Type"],
    setup: Setup
  ) => Effect.Effect<void, CliError | SessionNotFoundError | SessionLockedError | StoreError>,
  options: { readonly cwd?: string | undefined; readonly readOnly?: boolean } = {}
) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup(options.cwd === undefined ? {} : { cwd: options.cwd, cwdMayBeGone: true })
    const reconciled = (store: SessionStore["Type"]) =>
      store.interruptRuns === undefined
        ? Effect.void
        : Effect.asVoid(store.interruptRuns()).pipe(
            Effect.catchIf(
              (error) => error.reason === "read_only" || error.reason === "disk_full",
              () => Effect.void
            )
          )
    yield* Effect.flatMap(SessionStore, (store) => Effect.zipRight(reconciled(store), body(store, setup))).pipe(
      Effect.provide(storeLayer(setup, options.readOnly === true ? { readOnly: true } : {})),
      Effect.catchTags({
        SessionNotFoundError: (error) => Effect.fail(usageError(noSession(error.sessionId))),
        SessionLockedError: (error) => Effect.fail(usageError(error.message)),
        StoreError: (error) => Effect.fail(new CliError({ message: error.message, exitCode: ExitCode.failed }))
      })
    )
  })

/** A folder as a person reads it: `~/src/app`. */
export const homeRelative = (folder: string): string => {
  const home = userHome()
  return folder === home || folder.startsWith(`${home}${path.sep}`) ? `~${folder.slice(home.length)}` : folder
}

const pad = (text: string, width: number) => text.padEnd(width)

const table = (sessions: ReadonlyArray<SessionSummary>, now: number, withFolder: boolean): string => {
  const rows = sessions.map((session) => {
    const title = displayTitle(session) ?? ""
    const children =
      session.childCount === 0 ? "" : ` (+${session.childCount} child session${session.childCount > 1 ? "s" : ""})`
    return [
      shortId(session.id),
      relativeTime(session.updatedAt, now),
      session.status,
      String(session.runCount),
      `${title}${children}`,
      ...(withFolder ? [homeRelative(session.cwd)] : [])
    ]
  })
  const header = ["ID", "UPDATED", "STATUS", "RUNS", "TITLE", ...(withFolder ? ["FOLDER"] : [])]
  const widths = header.map((name, column) => Math.max(name.length, ...rows.map((row) => row[column]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) =>
        column === 3 ? cell.padStart(widths[column]!) : column === cells.length - 1 ? cell : pad(cell, widths[column]!)
      )
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

export interface ListFlags {
  readonly json: boolean
  readonly all: boolean
  readonly limit: Option.Option<number>
  readonly cwd: Option.Option<string>
}

export const DEFAULT_LIST_LIMIT = 20

/**
 * `alisio sessions list`: the root sessions of this folder (or `--cwd`), newest first; with
 * `--all` those of every folder, this one's first.
 */
export const listSessions = (flags: ListFlags) =>
  withStore(
    (store, setup) =>
      Effect.gen(function* () {
        const limit = Option.getOrElse(flags.limit, () => DEFAULT_LIST_LIMIT)
        const found = yield* store.sessionSummaries({
          parentId: null,
          limit: limit + 1,
          ...(flags.all ? { firstCwd: setup.cwd } : { cwd: setup.cwd })
        })
        const sessions = found.slice(0, limit)
        if (flags.json) {
          for (const session of sessions) {
            writeRecord(SessionListItem, {
              ...sessionRecord(session),
              runs: session.runCount,
              children: session.childCount
            })
          }
          return
        }
        if (sessions.length === 0) {
          process.stderr.write(
            flags.all
              ? "No sessions yet.\n"
              : `No sessions in ${homeRelative(setup.cwd)} (--all lists those of every folder).\n`
          )
          return
        }
        const now = yield* Clock.currentTimeMillis
        process.stdout.write(`${terminalSafe(table(sessions, now, flags.all))}\n`)
        if (found.length > limit) {
          process.stderr.write(`alisio: more sessions than these ${limit}; --limit <n> shows more\n`)
        }
      }),
    { cwd: Option.getOrUndefined(flags.cwd), readOnly: true }
  )

/** `alisio sessions events <id>`: the stored events, as JSONL with --json. */
export const sessionEvents = (flags: { readonly json: boolean; readonly sessionId: string }) =>
  withStore(
    (store) =>
      Effect.gen(function* () {
        const session = yield* findSession(store, flags.sessionId)
        // What another program stored (a hand edit, a damaged disk) is text only on a terminal.
        const line = (event: StoredEvent) =>
          flags.json
            ? jsonLine(encodeRunEvent(event))
            : `${terminalSafe(`${event.eventId.padStart(6)} ${event.time} ${event.runId.slice(0, 8)} ${event.type}`)}\n`
        yield* forEachStoredEvent(
          store,
          [session.id],
          (event) => BrokenPipe.writeStdout(line(event)),
          reportUnreadable
        ).pipe(Effect.catchTag("StdoutGone", BrokenPipe.ended))
      }),
    { readOnly: true }
  )

const MAX_TITLE = 200

/** `alisio sessions rename <id> <title…>`. */
export const renameSession = (flags: { readonly sessionId: string; readonly title: ReadonlyArray<string> }) =>
  withStore((store) =>
    Effect.gen(function* () {
      // A title is plain text wherever it is shown (the UI, --json, other programs): no escape sequence is kept.
      const title = terminalSafe(flags.title.join(" ")).replace(/\s+/g, " ").trim()
      if (title === "") return yield* usageError("The new title is empty: give it after the session id.")
      if (title.length > MAX_TITLE) {
        return yield* usageError(`The title has ${title.length} characters; keep it to ${MAX_TITLE}.`)
      }
      const session = yield* findSession(store, flags.sessionId)
      yield* store.renameSession(session.id, title)
      process.stdout.write(`${shortId(session.id)}  ${title}\n`)
    })
  )
