import type { StoreError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { Session, SessionStoreService } from "@alisio/runtime/SessionStore"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as BrokenPipe from "./BrokenPipe.js"
import { textLines } from "./Conversation.js"
import { forEachConversationPage } from "./ConversationPages.js"
import { relativeTime } from "./RelativeTime.js"
import { displayTitle, type SessionNode, sessionRecord } from "./SessionRecords.js"
import { writeSessionJson } from "./SessionShowJson.js"
import { homeRelative, withStore } from "./SessionsCommand.js"
import { findSession, shortId } from "./ShortIds.js"

/** The child sessions of `id`, each with its own children, oldest first as they were spawned. */
export const childTree = (
  store: SessionStoreService,
  id: SessionId
): Effect.Effect<ReadonlyArray<SessionNode>, StoreError> =>
  Effect.flatMap(store.sessions({ parentId: id }), (children) =>
    Effect.forEach([...children].reverse(), (child) =>
      Effect.map(childTree(store, child.id), (grandchildren) => ({
        ...sessionRecord(child),
        children: grandchildren
      }))
    )
  )

/** The tree drawn with guides: `├─ 1a2b3c4d  completed  title`. */
export const treeLines = (nodes: ReadonlyArray<SessionNode>, prefix = ""): ReadonlyArray<string> =>
  nodes.flatMap((node, index) => {
    const last = index === nodes.length - 1
    return [
      `${prefix}${last ? "└─" : "├─"} ${node.shortId}  ${node.status}${node.title === undefined ? "" : `  ${node.title}`}`,
      ...treeLines(node.children, `${prefix}${last ? "   " : "│  "}`)
    ]
  })

const header = (session: Session, runs: number, now: number): ReadonlyArray<string> => [
  displayTitle(session) ?? "(untitled)",
  `${session.id} · ${session.status} · ${runs} run${runs === 1 ? "" : "s"} · updated ${relativeTime(session.updatedAt, now)}`,
  `folder ${homeRelative(session.cwd)}`,
  ...(session.parentId === undefined ? [] : [`parent ${shortId(session.parentId)}`])
]

/**
 * `alisio sessions show <id>`: the whole conversation, readable, written a page at a time as it is
 * read; `--json` with the messages themselves.
 */
export const showSession = (flags: { readonly json: boolean; readonly sessionId: string }) =>
  withStore(
    (store) =>
      Effect.gen(function* () {
        const session = yield* findSession(store, flags.sessionId)
        const runs = store.runs === undefined ? [] : yield* store.runs(session.id)
        const children = yield* childTree(store, session.id)
        const compactions = store.compactions === undefined ? [] : yield* store.compactions.list(session.id)
        if (flags.json) {
          return yield* writeSessionJson(store, session, { runs, children })
        }
        const now = yield* Clock.currentTimeMillis
        // What the model and the tools wrote, to read: never an escape sequence (--json keeps it all).
        const write = (lines: ReadonlyArray<string>) =>
          lines.length === 0 ? Effect.void : BrokenPipe.writeStdout(`${terminalSafe(lines.join("\n"))}\n`)
        const text = textLines((ms) => relativeTime(ms, now))
        yield* write(header(session, runs.length, now))
        yield* forEachConversationPage(store, session.id, { runs, compactions }, (pieces) => write(text(pieces)))
        yield* write(children.length === 0 ? [] : ["", "child sessions", ...treeLines(children)])
      }).pipe(Effect.catchTag("StdoutGone", BrokenPipe.ended)),
    { readOnly: true }
  )
