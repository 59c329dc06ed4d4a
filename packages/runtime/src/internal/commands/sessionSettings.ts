// What `/model` and `/effort` set for a session, kept in the session database so that a later
// `alisio run -s <id>` (another process) runs with it. Stored as a state value of an owner no
// plugin can be (plugin ids have no `@` or `/`), so no plugin reads or overwrites it.

import type { StoreError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import { ReasoningEffort } from "@alisio/domain/LanguageModel"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { SessionStoreService } from "../../SessionStore.js"

export const SessionSettings = Schema.Struct({
  /** `provider/model`. */
  model: Schema.optional(Schema.String),
  effort: Schema.optional(ReasoningEffort)
})
export type SessionSettings = typeof SessionSettings.Type

const OWNER = "@alisio/session-settings"
const decode = onFirstCall(() => Schema.decodeUnknownOption(SessionSettings))

/** The session's settings; none when nothing was set (or what is stored no longer reads). */
export const readSettings = (
  store: SessionStoreService,
  sessionId: SessionId
): Effect.Effect<SessionSettings, StoreError> =>
  Effect.map(store.pluginState.get(OWNER, sessionId), (stored) =>
    Option.getOrElse(Option.flatMap(stored, decode), () => ({}))
  )

/** Changes some settings of a session; a field given as `undefined` is cleared. */
export const updateSettings = (
  store: SessionStoreService,
  sessionId: SessionId,
  change: { readonly [K in keyof SessionSettings]?: SessionSettings[K] | undefined }
): Effect.Effect<SessionSettings, StoreError> =>
  Effect.gen(function* () {
    const next: Record<string, unknown> = { ...(yield* readSettings(store, sessionId)), ...change }
    for (const key of Object.keys(next)) if (next[key] === undefined) delete next[key]
    yield* store.pluginState.set(OWNER, sessionId, Object.keys(next).length === 0 ? undefined : next)
    return next as SessionSettings
  })
