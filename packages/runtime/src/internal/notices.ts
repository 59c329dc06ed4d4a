// Notices between turns (SessionNotices): text posted for a session, such as the end of a
// background child, reaches the run's next request as a stored user message.
import type { StoreError } from "@alisio/domain/Errors"
import type { Message } from "@alisio/domain/Message"
import * as Effect from "effect/Effect"
import { type RunState, storeTurn } from "./runState.js"

const noticeMessage = (texts: ReadonlyArray<string>): Message => ({
  role: "user",
  content: [{ _tag: "text", text: texts.map((text) => `[notice] ${text}`).join("\n\n") }]
})

/** Stores the notices posted for the run's session, as one user message, before the next request. */
export const takeNotices = (state: RunState): Effect.Effect<void, StoreError> =>
  state.notices === undefined
    ? Effect.void
    : Effect.flatMap(state.notices.take(state.sessionId), (texts) =>
        texts.length === 0 ? Effect.void : storeTurn(state, [noticeMessage(texts)])
      )

/** At an answer: whether the run goes on with a notice (one is waiting, or was expected and came). */
export const awaitNotices = (state: RunState): Effect.Effect<boolean> =>
  state.notices === undefined ? Effect.succeed(false) : state.notices.next(state.sessionId)
