import type { SessionId } from "@alisio/domain/Ids"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

interface Entry {
  readonly notices: ReadonlyArray<string>
  /** Scopes open that promise a notice (background children of the session). */
  readonly expected: number
}

const empty: Entry = { notices: [], expected: 0 }

/**
 * Notices for a session's next model request: text that reaches a run between its turns, such as
 * the end of a background child (`api.sessions.notify`). The runner stores what it takes as a user
 * message beginning `[notice]`, so the conversation keeps what the model was told. While a notice
 * is expected (`expect`), a run that would end waits for it and goes on.
 */
export class SessionNotices extends Context.Tag("@alisio/runtime/SessionNotices")<
  SessionNotices,
  {
    readonly post: (session: SessionId, text: string) => Effect.Effect<void>
    /** The notices posted for `session` since the last call, oldest first; they are removed. */
    readonly take: (session: SessionId) => Effect.Effect<ReadonlyArray<string>>
    /** Promises a notice for `session` while the scope is open. */
    readonly expect: (session: SessionId) => Effect.Effect<void, never, Scope.Scope>
    /**
     * Waits while `session` expects a notice and has none: `true` when notices are waiting,
     * `false` when none is (or will be) posted.
     */
    readonly next: (session: SessionId) => Effect.Effect<boolean>
  }
>() {}

export const make = Effect.gen(function* () {
  const entries = yield* SubscriptionRef.make<ReadonlyMap<SessionId, Entry>>(new Map())

  const update = (session: SessionId, change: (entry: Entry) => Entry) =>
    SubscriptionRef.update(entries, (map) => {
      const next = change(map.get(session) ?? empty)
      const copy = new Map(map)
      if (next.notices.length === 0 && next.expected === 0) copy.delete(session)
      else copy.set(session, next)
      return copy
    })

  return SessionNotices.of({
    post: (session, text) => update(session, (entry) => ({ ...entry, notices: [...entry.notices, text] })),
    take: (session) =>
      SubscriptionRef.modifyEffect(entries, (map) => {
        const entry = map.get(session)
        if (entry === undefined || entry.notices.length === 0) return Effect.succeed([[], map] as const)
        const copy = new Map(map)
        if (entry.expected === 0) copy.delete(session)
        else copy.set(session, { ...entry, notices: [] })
        return Effect.succeed([entry.notices, copy] as const)
      }),
    expect: (session) =>
      Effect.asVoid(
        Effect.acquireRelease(
          update(session, (entry) => ({ ...entry, expected: entry.expected + 1 })),
          () => update(session, (entry) => ({ ...entry, expected: entry.expected - 1 }))
        )
      ),
    next: (session) =>
      entries.changes.pipe(
        Stream.map((map) => map.get(session) ?? empty),
        Stream.filter((entry) => entry.notices.length > 0 || entry.expected === 0),
        Stream.take(1),
        Stream.runHead,
        Effect.map((entry) => entry._tag === "Some" && entry.value.notices.length > 0)
      )
  })
})

export const layer = Layer.effect(SessionNotices, make)
