import type { SessionId } from "@alisio/domain/Ids"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as SynchronizedRef from "effect/SynchronizedRef"

/** What a person is being waited on for (LIM-1). */
export type WaitKind = "tool_approval" | "external_directory" | "question" | "plan_review"

interface Node {
  readonly parent: SessionId | undefined
  /** Waits open in this session or any descendant. */
  readonly openBelow: SubscriptionRef.SubscriptionRef<number>
  /** The runs tracking the session now; its node is released when the last one ends. */
  holders: number
}

/**
 * The single registry of waits on a person (LIM-1, LIM-2). A wait opened in a session counts for
 * that session and every ancestor, so their active clocks pause; a parent waiting on its child is
 * not a wait on a person and counts for nobody.
 */
export class HumanWaits extends Context.Tag("@alisio/runtime/HumanWaits")<
  HumanWaits,
  {
    /** Runs `wait` as a wait on a person in `session`: the clocks of the session and its ancestors pause meanwhile. */
    readonly around: <A, E, R>(
      session: SessionId,
      kind: WaitKind,
      wait: Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E, R>
    /** The number of waits open in `session` or below it. */
    readonly openBelow: (session: SessionId) => Effect.Effect<SubscriptionRef.SubscriptionRef<number>>
    /** Records that `child` descends from `parent`, so the child's waits pause the parent. */
    readonly link: (child: SessionId, parent: SessionId) => Effect.Effect<void>
    /**
     * Tracks `session` (linked to `parent`) for the life of the scope, as a run does: its entry is
     * released when the last scope tracking it closes, so a long-lived process keeps no entry per
     * finished run. Returns the session's count of open waits.
     */
    readonly track: (
      session: SessionId,
      parent?: SessionId
    ) => Effect.Effect<SubscriptionRef.SubscriptionRef<number>, never, Scope.Scope>
    /** How many sessions have an entry now. */
    readonly size: Effect.Effect<number>
  }
>() {}

export const make = Effect.gen(function* () {
  const nodes = yield* SynchronizedRef.make(new Map<SessionId, Node>())

  const nodeOf = (session: SessionId, parent?: SessionId, hold = 0): Effect.Effect<Node> =>
    SynchronizedRef.modifyEffect(nodes, (map) => {
      const existing = map.get(session)
      if (existing !== undefined && (parent === undefined || existing.parent === parent)) {
        existing.holders += hold
        return Effect.succeed([existing, map] as const)
      }
      return Effect.map(
        existing === undefined ? SubscriptionRef.make(0) : Effect.succeed(existing.openBelow),
        (openBelow) => {
          const node: Node = {
            parent: parent ?? existing?.parent,
            openBelow,
            holders: (existing?.holders ?? 0) + hold
          }
          return [node, new Map(map).set(session, node)] as const
        }
      )
    })

  const untrack = (session: SessionId) =>
    SynchronizedRef.update(nodes, (map) => {
      const node = map.get(session)
      if (node === undefined) return map
      node.holders -= 1
      if (node.holders > 0) return map
      const next = new Map(map)
      next.delete(session)
      return next
    })

  const lineage = (session: SessionId): Effect.Effect<ReadonlyArray<Node>> =>
    Effect.gen(function* () {
      const chain: Array<Node> = []
      const seen = new Set<SessionId>()
      let current: SessionId | undefined = session
      while (current !== undefined && !seen.has(current)) {
        seen.add(current)
        const node: Node = yield* nodeOf(current)
        chain.push(node)
        current = node.parent
      }
      return chain
    })

  const adjust = (chain: ReadonlyArray<Node>, delta: number) =>
    Effect.forEach(chain, (node) => SubscriptionRef.update(node.openBelow, (n) => n + delta), { discard: true })

  const around = <A, E, R>(session: SessionId, _kind: WaitKind, wait: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.tap(lineage(session), (chain) => adjust(chain, 1)),
      () => wait,
      (chain) => adjust(chain, -1)
    )

  return HumanWaits.of({
    around,
    openBelow: (session) => Effect.map(nodeOf(session), (node) => node.openBelow),
    link: (child, parent) => Effect.asVoid(nodeOf(child, parent)),
    track: (session, parent) =>
      Effect.map(
        Effect.acquireRelease(nodeOf(session, parent, 1), () => untrack(session)),
        (node) => node.openBelow
      ),
    size: Effect.map(SynchronizedRef.get(nodes), (map) => map.size)
  })
})

export const layer = Layer.effect(HumanWaits, make)
