import * as path from "node:path"
import type { StoreError } from "@alisio/domain/Errors"
import { encodeRunEvent } from "@alisio/domain/RunEvent"
import type { Session, SessionStoreService } from "@alisio/runtime/SessionStore"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as BrokenPipe from "./BrokenPipe.js"
import { markdownLines } from "./Conversation.js"
import { forEachConversationPage } from "./ConversationPages.js"
import { forEachStoredEvent, reportUnreadable } from "./EventPages.js"
import { jsonLine } from "./JsonLine.js"
import { checkFolder, writeAtomicallyWith } from "./OutputFile.js"
import { localTime } from "./RelativeTime.js"
import { displayTitle } from "./SessionRecords.js"
import { withStore } from "./SessionsCommand.js"
import { findSession, shortId } from "./ShortIds.js"

export type ExportFormat = "jsonl" | "md"

/** The session and its descendants, parents before children. */
const subtree = (store: SessionStoreService, session: Session): Effect.Effect<ReadonlyArray<Session>, StoreError> =>
  Effect.map(
    Effect.flatMap(store.sessions({ parentId: session.id }), (children) =>
      Effect.forEach([...children].reverse(), (child) => subtree(store, child))
    ),
    (below) => [session, ...below.flat()]
  )

/**
 * Every stored event of the sessions, in the order they were stored (their global eventId), given
 * to `write` a line at a time: an export may hold more than memory, or one string, can.
 */
const jsonl = <E>(
  store: SessionStoreService,
  sessions: ReadonlyArray<Session>,
  write: (line: string) => Effect.Effect<void, E>
) =>
  forEachStoredEvent(
    store,
    sessions.map((session) => session.id),
    (event) => write(jsonLine(encodeRunEvent(event))),
    reportUnreadable
  )

/**
 * The conversations of the sessions as Markdown, given to `write` a page of messages at a time. A
 * transcript to read, wherever it is read (a terminal, a viewer): what the model and the tools
 * wrote holds no escape sequence or bidi control there (the JSONL keeps every byte).
 */
const markdown = <E>(
  store: SessionStoreService,
  sessions: ReadonlyArray<Session>,
  write: (text: string) => Effect.Effect<void, E>
) => {
  const out = (lines: ReadonlyArray<string>) =>
    lines.length === 0 ? Effect.void : write(`${terminalSafe(lines.join("\n"))}\n`)
  return Effect.forEach(
    sessions,
    (session, index) =>
      Effect.gen(function* () {
        const runs = store.runs === undefined ? [] : yield* store.runs(session.id)
        const compactions = store.compactions === undefined ? [] : yield* store.compactions.list(session.id)
        const title = displayTitle(session) ?? "Untitled session"
        const level = index === 0 ? 1 : 2
        yield* out([
          ...(index === 0 ? [] : [""]),
          `${"#".repeat(level)} ${index === 0 ? "" : "Child session: "}${title}`,
          "",
          `- Session: \`${session.id}\`${session.parentId === undefined ? "" : ` (child of \`${shortId(session.parentId)}\`)`}`,
          `- Folder: \`${session.cwd}\``,
          `- Status: ${session.status} · ${runs.length} run${runs.length === 1 ? "" : "s"}`,
          `- Created ${localTime(session.createdAt)} · updated ${localTime(session.updatedAt)}`
        ])
        const lines = markdownLines(localTime, level + 1)
        yield* forEachConversationPage(store, session.id, { runs, compactions }, (pieces) => out(lines(pieces)))
      }),
    { discard: true }
  )
}

/**
 * `alisio sessions export <id>`: the session with its child sessions, as JSONL events (what
 * `run --json` streamed, every stored event) or as Markdown to read; on stdout or in `--output`.
 */
export const exportSession = (flags: {
  readonly sessionId: string
  readonly format: Option.Option<ExportFormat>
  readonly output: Option.Option<string>
}) =>
  withStore(
    (store) =>
      Effect.gen(function* () {
        if (Option.isSome(flags.output)) yield* checkFolder(flags.output.value, "--output")
        const session = yield* findSession(store, flags.sessionId)
        const format = Option.getOrElse(flags.format, () =>
          Option.isSome(flags.output) && /\.(md|markdown)$/i.test(flags.output.value) ? "md" : "jsonl"
        )
        const sessions = yield* subtree(store, session)
        if (Option.isNone(flags.output)) {
          yield* (format === "md" ? markdown : jsonl)(store, sessions, BrokenPipe.writeStdout).pipe(
            Effect.catchTag("StdoutGone", BrokenPipe.ended)
          )
          return
        }
        const file = path.resolve(flags.output.value)
        // A transcript may hold secrets a tool printed: only its owner reads it.
        yield* writeAtomicallyWith(file, 0o600, (append) =>
          (format === "md" ? markdown : jsonl)(store, sessions, append)
        )
        process.stderr.write(`alisio: exported ${shortId(session.id)} to ${file} (${format})\n`)
      }),
    { readOnly: true }
  )
