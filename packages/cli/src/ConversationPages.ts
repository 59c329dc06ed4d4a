// A stored conversation read a page at a time (ST-3), so `sessions show` and a Markdown export of
// a session with more messages (or tool output) than memory holds go out as they are read, and
// stop reading when their reader goes away (`| head`).

import type { StoreError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { ToolResultMessage } from "@alisio/domain/Message"
import type {
  CompactionRecord,
  Page,
  RunRecord,
  SessionStoreService,
  StoredMessage
} from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import { type Call, makeConversation, type Piece } from "./Conversation.js"

/** Messages a page holds: few enough that a page of large tool results (megabytes each) stays small. */
const PAGE = 50

const callKey = (call: Call) => `${call.position}:${call.id}`

/**
 * Calls `each` with the pieces of the session's conversation, a page of messages at a time. A call
 * whose result is not in its page is answered by looking at the pages after it until every such
 * call has its result, or to the end for one that has none; the first of those pages is then
 * shown next, the others read again when their turn comes. A look that reached the end leaves
 * where each id's last result is, so a later call with no result costs no other look (a session
 * a crash left with many such calls would else be read once for each). A store without pages is
 * read whole.
 */
export const forEachConversationPage = <E, R>(
  store: SessionStoreService,
  sessionId: SessionId,
  history: { readonly runs: ReadonlyArray<RunRecord>; readonly compactions: ReadonlyArray<CompactionRecord> },
  each: (pieces: ReadonlyArray<Piece>) => Effect.Effect<void, E, R>,
  pageSize: number = PAGE
): Effect.Effect<void, E | StoreError, R> =>
  Effect.gen(function* () {
    const shown = makeConversation(history.runs, history.compactions)
    const messagesPage = store.messagesPage
    if (messagesPage === undefined) {
      yield* each(shown.page(yield* store.messages(sessionId)))
      return yield* each(shown.end())
    }
    const read = (cursor: string | undefined): Effect.Effect<Page<StoredMessage>, StoreError> =>
      messagesPage(sessionId, cursor === undefined ? { limit: pageSize } : { limit: pageSize, cursor })

    // Once a look has read to the end: the position of the last result of each id from there on.
    let lastResultAt: Map<string, number> | undefined
    const mayHaveResult = (call: Call) =>
      lastResultAt === undefined || (lastResultAt.get(call.id) ?? Number.NEGATIVE_INFINITY) > call.position

    /** The results of `calls` in the pages from `cursor` on, and the first of those pages. */
    const lookAhead = (calls: ReadonlyArray<Call>, cursor: string) =>
      Effect.gen(function* () {
        const waiting = new Map<string, Array<Call>>()
        for (const call of calls) waiting.set(call.id, [...(waiting.get(call.id) ?? []), call])
        const found = new Map<string, ToolResultMessage>()
        const lastAt = new Map<string, number>()
        let first: Page<StoredMessage> | undefined
        let next: string | undefined = cursor
        while (next !== undefined && waiting.size > 0) {
          const page: Page<StoredMessage> = yield* read(next)
          first ??= page
          for (const { message, position } of page.items) {
            if (message.role !== "tool") continue
            lastAt.set(message.toolCallId, position)
            for (const call of waiting.get(message.toolCallId) ?? []) found.set(callKey(call), message)
            waiting.delete(message.toolCallId)
          }
          next = page.next
        }
        if (next === undefined) lastResultAt = lastAt
        return { found, first }
      })

    let page = yield* read(undefined)
    for (;;) {
      const calls = page.next === undefined ? [] : shown.unanswered(page.items).filter(mayHaveResult)
      const ahead = calls.length === 0 ? undefined : yield* lookAhead(calls, page.next!)
      yield* each(shown.page(page.items, (call) => ahead?.found.get(callKey(call))))
      if (page.next === undefined) break
      page = ahead?.first ?? (yield* read(page.next))
    }
    yield* each(shown.end())
  })
