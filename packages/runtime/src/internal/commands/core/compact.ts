// /compact [focus]: summarise the session's older turns now (CTX-1), through the Compaction
// service when this build has one.

import { CommandError } from "@alisio/domain/Command"
import { SessionId } from "@alisio/domain/Ids"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Compaction } from "../../../Compaction.js"
import type { CoreCommand } from "../entry.js"
import { failed, formatCount, requireSession, shortId, text } from "./shared.js"

export const compact: CoreCommand = {
  name: "compact",
  description: "Summarise the session's older turns now, optionally focused on a topic",
  argumentHint: "[focus]",
  run: (invocation) =>
    Effect.gen(function* () {
      const session = yield* requireSession(invocation)
      const compaction = yield* Effect.serviceOption(Compaction)
      if (Option.isNone(compaction)) {
        return yield* new CommandError({
          reason: "unavailable",
          command: invocation.name,
          message: "Compaction is not available in this build of Alisio."
        })
      }
      const result = yield* compaction.value
        .compact(SessionId.make(session.id), {
          ...(invocation.args === "" ? {} : { focus: invocation.args }),
          ...(invocation.limits === undefined ? {} : { limits: invocation.limits })
        })
        .pipe(Effect.mapError((error) => failed(invocation.name, error.message)))
      return text(
        result.messagesCompacted === 0
          ? `Session ${shortId(session.id)}: nothing to compact.`
          : `Session ${shortId(session.id)}: ${result.messagesCompacted} messages summarised; the history went from about ${formatCount(
              result.tokensBefore
            )} to ${formatCount(result.tokensAfter)} tokens.`
      )
    })
}
