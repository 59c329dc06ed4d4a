// Checks on the requests a compacting runner sends (CTX-1).

import type { Message } from "@alisio/domain/Message"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { said, user } from "./messages.js"

/** Every call is answered right after its message and every result follows its call. */
export const assertCallsWithResults = (messages: ReadonlyArray<Message>, label = ""): void => {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    if (message.role === "tool") {
      let j = i - 1
      while (j >= 0 && messages[j]!.role === "tool") j--
      const caller = messages[j]
      assert.isTrue(
        caller?.role === "assistant" &&
          caller.content.some((part) => part._tag === "tool_call" && part.id === message.toolCallId),
        `${label} the result of ${message.toolCallId} does not follow its call`
      )
    }
    if (message.role === "assistant") {
      const ids = message.content.flatMap((part) => (part._tag === "tool_call" ? [part.id] : []))
      const answered = new Set<string>()
      for (let j = i + 1; j < messages.length && messages[j]!.role === "tool"; j++) {
        answered.add((messages[j] as Extract<Message, { role: "tool" }>).toolCallId)
      }
      for (const id of ids) assert.isTrue(answered.has(id), `${label} the call ${id} has no result after it`)
    }
  }
}

/** A session that already holds `runs` exchanges of a prompt and a long answer, written through the store. */
export const seeded = (answers: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const store = yield* SessionStore.SessionStore
    const session = yield* store.createSession({ cwd: "/tmp", status: "completed" })
    const run = yield* store.beginRun!({
      id: `seed-${session.id}` as never,
      sessionId: session.id,
      model: "fake-model",
      provider: "fake",
      owner: { pid: process.pid, token: "seed" }
    })
    yield* store.endRun!(run.run.id, { status: "completed" })
    const messages = answers.flatMap((answer, i) => [user(`earlier task ${i}`), said(answer)])
    yield* store.appendMessages(session.id, messages, run.run.id)
    return { sessionId: session.id, messages }
  })
