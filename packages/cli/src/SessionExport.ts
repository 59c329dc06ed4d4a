import * as path from "node:path"
import type { StoreError } from "@alisio/domain/Errors"
import { encodeRunEvent } from "@alisio/domain/RunEvent"
import type { Session, SessionStoreService } from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { conversation, renderMarkdown } from "./Conversation.js"
import { checkFolder, writeAtomically } from "./OutputFile.js"
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

/** Every stored event of the sessions, in the order they were stored (their global eventId). */
const jsonl = (store: SessionStoreService, sessions: ReadonlyArray<Session>) =>
  Effect.map(
    Effect.forEach(sessions, (session) => store.events(session.id)),
    (events) =>
      events
        .flat()
        .sort((a, b) => Number(a.eventId) - Number(b.eventId))
        .map((event) => `${JSON.stringify(encodeRunEvent(event))}\n`)
        .join("")
  )

const markdown = (store: SessionStoreService, sessions: ReadonlyArray<Session>) =>
  Effect.map(
    Effect.forEach(sessions, (session, index) =>
      Effect.gen(function* () {
        const runs = store.runs === undefined ? [] : yield* store.runs(session.id)
        const messages = yield* store.messages(session.id)
        const title = displayTitle(session) ?? "Untitled session"
        const level = index === 0 ? 1 : 2
        return [
          ...(index === 0 ? [] : [""]),
          `${"#".repeat(level)} ${index === 0 ? "" : "Child session: "}${title}`,
          "",
          `- Session: \`${session.id}\`${session.parentId === undefined ? "" : ` (child of \`${shortId(session.parentId)}\`)`}`,
          `- Folder: \`${session.cwd}\``,
          `- Status: ${session.status} · ${runs.length} run${runs.length === 1 ? "" : "s"}`,
          `- Created ${localTime(session.createdAt)} · updated ${localTime(session.updatedAt)}`,
          ...renderMarkdown(conversation(messages, runs), localTime, level + 1)
        ]
      })
    ),
    (parts) => `${parts.flat().join("\n")}\n`
  )

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
        const text = format === "md" ? yield* markdown(store, sessions) : yield* jsonl(store, sessions)
        if (Option.isNone(flags.output)) {
          process.stdout.write(text)
          return
        }
        const file = path.resolve(flags.output.value)
        // A transcript may hold secrets a tool printed: only its owner reads it.
        yield* writeAtomically(file, text, 0o600)
        process.stderr.write(`alisio: exported ${shortId(session.id)} to ${file} (${format})\n`)
      }),
    { readOnly: true }
  )
