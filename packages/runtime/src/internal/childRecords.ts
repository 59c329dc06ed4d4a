// A child session as its rows tell it, for a child this process no longer holds: its outcome once
// ended, where it stands, its journal and the tree of sessions below a session.
import type { ChildHandle, ChildOutcome, ChildToolCall } from "@alisio/domain/ChildSession"
import type { SessionNotFoundError, StoreError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { RunStatus } from "@alisio/domain/RunEvent"
import { emptyUsage } from "@alisio/domain/Usage"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { SessionTreeNode } from "../ChildSessions.js"
import type { SessionStoreService } from "../SessionStore.js"

const isEnded = (status: RunStatus) => status !== "queued" && status !== "running"

/** The outcome of a child that ended and was released, from its rows. */
export const storedOutcome = (
  store: SessionStoreService,
  child: ChildHandle
): Effect.Effect<Option.Option<ChildOutcome>, StoreError> =>
  Effect.gen(function* () {
    const record =
      store.runs === undefined ? undefined : (yield* store.runs(child.sessionId)).find((r) => r.id === child.runId)
    const status =
      record?.status ?? (yield* Effect.orElseSucceed(store.session(child.sessionId), () => undefined))?.status
    if (status === undefined || !isEnded(status)) return Option.none()
    let text = ""
    if (status === "completed") {
      const messages = yield* store.messages(child.sessionId)
      for (let i = messages.length - 1; i >= 0; i--) {
        const { message, runId } = messages[i]!
        if (runId !== child.runId || message.role !== "assistant") continue
        text = message.content.flatMap((part) => (part._tag === "text" ? [part.text] : [])).join("")
        break
      }
    }
    return Option.some({
      ...child,
      status,
      text,
      usage: record?.usage ?? emptyUsage,
      ...(record?.error === undefined ? {} : { error: record.error })
    })
  })

/** Where a child stands, from its rows: its outcome once ended, else its session's status. */
export const storedStatus = (store: SessionStoreService, child: ChildHandle): Effect.Effect<ChildOutcome, StoreError> =>
  Effect.gen(function* () {
    const stored = yield* storedOutcome(store, child)
    if (Option.isSome(stored)) return stored.value
    const row = yield* Effect.orElseSucceed(store.session(child.sessionId), () => undefined)
    // A child's session is stored as it is spawned: no row means it was deleted since, not queued.
    if (row === undefined) {
      return { ...child, status: "cancelled", text: "", usage: emptyUsage, error: "Its session was deleted." }
    }
    return { ...child, status: row.status, text: "", usage: emptyUsage }
  })

/** The journal of a child's run. */
export const childToolCalls = (store: SessionStoreService, child: ChildHandle) =>
  Effect.map(store.toolCalls(child.sessionId), (calls) =>
    calls
      .filter((call) => call.runId === undefined || call.runId === child.runId)
      .map(
        (call): ChildToolCall => ({
          name: call.name,
          ...(call.effect === undefined ? {} : { effect: call.effect }),
          status: call.status,
          arguments: call.arguments
        })
      )
  )

/** The tree of sessions below `root`, from the store. */
export const sessionTree = (
  store: SessionStoreService,
  root: SessionId
): Effect.Effect<SessionTreeNode, StoreError | SessionNotFoundError> => {
  const build = (id: SessionId): Effect.Effect<SessionTreeNode, StoreError | SessionNotFoundError> =>
    Effect.gen(function* () {
      const session = yield* store.session(id)
      const kids = yield* store.sessions({ parentId: id })
      const nodes = yield* Effect.forEach(kids, (kid) => build(kid.id))
      return {
        sessionId: session.id,
        status: session.status,
        ...(session.title === undefined ? {} : { title: session.title }),
        children: nodes
      }
    })
  return build(root)
}
