// `alisio sessions show <id> --json` written as it is read (ST-3): the head of the record, then
// the messages a page at a time, then its tail. The same bytes as the record encoded whole.

import type { StoreError } from "@alisio/domain/Errors"
import type { RunRecord, Session, SessionStoreService, StoredMessage } from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as BrokenPipe from "./BrokenPipe.js"
import { jsonText } from "./JsonLine.js"
import { MessageJson, messageJson, runJson, SessionDetail, type SessionNode, sessionRecord } from "./SessionRecords.js"

/** Messages a page holds: few enough that a page of large tool results (megabytes each) stays small. */
const PAGE = 50

const encodeDetail = Schema.encodeSync(SessionDetail)
const encodeMessage = Schema.encodeSync(MessageJson)

// Only the record itself has a `messages` key, and a key's quotes are never inside a string.
const NO_MESSAGES = ',"messages":[]'

/** The session's record, its messages read and written a page at a time. */
export const writeSessionJson = (
  store: SessionStoreService,
  session: Session,
  history: {
    readonly runs: ReadonlyArray<RunRecord>
    readonly children: ReadonlyArray<SessionNode>
  }
): Effect.Effect<void, StoreError | BrokenPipe.StdoutGone> =>
  Effect.gen(function* () {
    const whole = jsonText(
      encodeDetail({
        ...sessionRecord(session),
        runs: history.runs.map(runJson),
        messages: [],
        children: history.children
      })
    )
    const at = whole.indexOf(`${NO_MESSAGES},"children":`)
    yield* BrokenPipe.writeStdout(`${whole.slice(0, at)},"messages":[`)
    let first = true
    const write = (items: ReadonlyArray<StoredMessage>) => {
      if (items.length === 0) return Effect.void
      const text = items.map((stored) => jsonText(encodeMessage(messageJson(stored)))).join(",")
      const out = first ? text : `,${text}`
      first = false
      return BrokenPipe.writeStdout(out)
    }
    const messagesPage = store.messagesPage
    if (messagesPage === undefined) yield* write(yield* store.messages(session.id))
    else {
      let cursor: string | undefined
      do {
        const page = yield* messagesPage(session.id, cursor === undefined ? { limit: PAGE } : { limit: PAGE, cursor })
        yield* write(page.items)
        cursor = page.next
      } while (cursor !== undefined)
    }
    yield* BrokenPipe.writeStdout(`]${whole.slice(at + NO_MESSAGES.length)}\n`)
  })
