// `sessions show` and the Markdown export read a conversation a page at a time (ST-3): a tool call
// is still shown with its result when the result is in a later page, also when the provider gave
// the calls of different turns the same id, and a call with no result stays "no result stored".

import type { Message } from "@alisio/domain/Message"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { conversation, type Piece } from "../src/Conversation.js"
import { forEachConversationPage } from "../src/ConversationPages.js"

const user = (text: string): Message => ({ role: "user", content: [{ _tag: "text", text }] })
const calls = (...commands: ReadonlyArray<readonly [string, string]>): Message => ({
  role: "assistant",
  content: commands.map(([id, command]) => ({
    _tag: "tool_call" as const,
    id: id as never,
    name: "bash",
    arguments: JSON.stringify({ command })
  }))
})
const result = (id: string, text: string, isError = false): Message => ({
  role: "tool",
  toolCallId: id as never,
  toolName: "bash",
  content: [{ _tag: "text", text }],
  isError
})

// Stored at positions 1…10, two a page: [1 2] [3 4] [5 6] [7 8] [9 10]. The call at 2 has its result
// in the next page; the two calls at 4 have theirs one and two pages on; the call at 8 has none; the
// id `call_0` is given to calls of four turns.
const messages: ReadonlyArray<Message> = [
  user("go"),
  calls(["call_0", "echo a"]),
  result("call_0", "a out"),
  calls(["call_0", "echo b"], ["call_1", "echo c"]),
  result("call_1", "c out"),
  user("and then"),
  result("call_0", "b out"),
  calls(["call_9", "echo lost"]),
  calls(["call_0", "echo d"]),
  result("call_0", "d out", true)
]

const tools = (pieces: ReadonlyArray<Piece>) =>
  pieces.flatMap((piece) => (piece.kind === "tool" ? [`${piece.args} ${piece.outcome} ${piece.result}`] : []))

describe("forEachConversationPage", () => {
  it.effect("ST-3 pairs each tool call with its result across page boundaries, with reused call ids", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore.SessionStore
      const session = yield* store.createSession({ cwd: "/w" })
      yield* store.appendMessages(session.id, messages)
      const pages: Array<string> = []
      // Read whole, a large session does not fit in memory: only pages may be used.
      const paged: SessionStore.SessionStoreService = {
        ...store,
        messages: () => Effect.die("read whole"),
        messagesPage: (id, page) => {
          pages.push(page.cursor ?? "start")
          return store.messagesPage!(id, page)
        }
      }
      const shown: Array<Piece> = []
      yield* forEachConversationPage(
        paged,
        session.id,
        { runs: [], compactions: [] },
        (pieces) => Effect.sync(() => shown.push(...pieces)),
        2
      )
      assert.deepStrictEqual(tools(shown), [
        "echo a ok a out",
        "echo b ok b out",
        "echo c ok c out",
        "echo lost pending (no result stored)",
        "echo d error d out"
      ])
      const whole = conversation(yield* store.messages(session.id), []).flatMap((section) => [
        { kind: "section" as const, run: section.run, index: section.index },
        ...section.entries
      ])
      assert.deepStrictEqual(shown, whole)
      // Each page once, and [7 8] again: it was read from [3 4] on, looking for `b out`.
      assert.deepStrictEqual(pages, ["start", "2", "4", "6", "6", "8"])
    }).pipe(Effect.provide(SessionStore.layerMemory))
  )

  it.effect("ST-3 calls a crash left without a result cost one read of the rest of the session, not one each", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore.SessionStore
      const session = yield* store.createSession({ cwd: "/w" })
      // 20 pages of two: a question, and a call never answered, each with an id of its own.
      yield* store.appendMessages(
        session.id,
        Array.from({ length: 20 }, (_, i) => [user(`q ${i}`), calls([`lost_${i}`, `echo ${i}`])]).flat()
      )
      let reads = 0
      const counting: SessionStore.SessionStoreService = {
        ...store,
        messagesPage: (id, page) => Effect.sync(() => reads++).pipe(Effect.zipRight(store.messagesPage!(id, page)))
      }
      const shown: Array<Piece> = []
      yield* forEachConversationPage(
        counting,
        session.id,
        { runs: [], compactions: [] },
        (pieces) => Effect.sync(() => shown.push(...pieces)),
        2
      )
      assert.deepStrictEqual(
        tools(shown),
        Array.from({ length: 20 }, (_, i) => `echo ${i} pending (no result stored)`)
      )
      // The 20 pages, and the 18 after the first one read again when their turn comes.
      assert.strictEqual(reads, 20 + 18)
    }).pipe(Effect.provide(SessionStore.layerMemory))
  )
})
