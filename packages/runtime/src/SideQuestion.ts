// A side question (`/ask`, CMD-2): one request to the session's model with the conversation as the
// next run would send it, the question after it, and no tools; the answer is shown, never stored.
import type { SessionId } from "@alisio/domain/Ids"
import type { LanguageModelService } from "@alisio/domain/LanguageModel"
import type { Message } from "@alisio/domain/Message"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { HistoryEntry } from "./internal/compaction/plan.js"
import { toRequestMessages } from "./internal/history.js"
import { SessionStore } from "./SessionStore.js"

/** How long an answer may take, and how long it may be. */
export const SIDE_QUESTION_TIMEOUT = Duration.minutes(2)
const MAX_OUTPUT_TOKENS = 4_096

const system =
  "Answer the person's side question briefly, from the conversation so far and what you know. " +
  "You cannot use tools now, and this exchange is not kept in the conversation."

export class SideQuestionError extends Schema.TaggedError<SideQuestionError>()("SideQuestionError", {
  message: Schema.String
}) {}

/** The messages a side question sends: the session's history (its compaction applied), then the question. */
export const sideQuestionMessages = (sessionId: SessionId | undefined, question: string) =>
  Effect.gen(function* () {
    const asked: Message = { role: "user", content: [{ _tag: "text", text: question }] }
    if (sessionId === undefined) return [asked]
    const store = yield* SessionStore
    const compaction =
      store.compactions === undefined ? undefined : Option.getOrUndefined(yield* store.compactions.latest(sessionId))
    const history: ReadonlyArray<HistoryEntry> = (yield* store.messages(sessionId, {
      afterPosition: compaction?.lastPosition
    })).map(({ message, position }) => ({ position, message }))
    return [...toRequestMessages(history, compaction), asked]
  })

/** The model's answer to `question` about the session, streamed to `onText` as it comes; nothing is stored. */
export const ask = (options: {
  readonly sessionId: SessionId | undefined
  readonly question: string
  readonly service: LanguageModelService
  readonly model: string
  readonly onText?: (text: string) => void
}) =>
  Effect.gen(function* () {
    const messages = yield* sideQuestionMessages(options.sessionId, options.question)
    let answer = ""
    yield* options.service
      .stream({ model: options.model, system, messages, tools: [], maxOutputTokens: MAX_OUTPUT_TOKENS })
      .pipe(
        Stream.runForEach((part) =>
          Effect.sync(() => {
            if (part._tag !== "TextDelta") return
            answer += part.text
            options.onText?.(answer)
          })
        ),
        Effect.timeoutFail({
          duration: SIDE_QUESTION_TIMEOUT,
          onTimeout: () =>
            new SideQuestionError({
              message: `The model did not answer within ${Duration.format(SIDE_QUESTION_TIMEOUT)}.`
            })
        })
      )
    return answer.trim() === "" ? "(the model gave no answer)" : answer.trim()
  })
