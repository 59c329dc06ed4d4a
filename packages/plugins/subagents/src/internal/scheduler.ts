// Slots for subagents: at most `perParent` running for one session and `perRoot` for a session
// tree; up to `maxQueued` more wait in a tree's queue, first come first served. A queue that could
// never move (every running subagent of the tree waits on a subagent of its own, or on another
// one's lock) refuses instead of waiting forever.
import type { SessionId } from "@alisio/domain/Ids"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

export interface Slot {
  readonly id: string
  /** The session that asked for the subagent. */
  readonly parent: SessionId
  readonly root: SessionId
}

/** Why a subagent cannot have a slot. */
export interface Refusal {
  readonly reason: "queue_full" | "stuck"
  readonly message: string
}

export interface SchedulerLimits {
  readonly maxConcurrentPerParent: number
  readonly maxConcurrentPerRoot: number
  readonly maxQueued: number
}

interface Waiting {
  readonly slot: Slot
  readonly go: Deferred.Deferred<void, Refusal>
}

interface State {
  /** Running slots, each with who it is while blocked: its task id until it has a session. */
  readonly running: ReadonlyMap<string, Slot & { readonly waiter: string }>
  readonly queue: ReadonlyArray<Waiting>
  /** Sessions (or task ids) blocked on something another subagent must do first: how many waits each. */
  readonly blocked: ReadonlyMap<string, number>
}

export interface Scheduler {
  /** Takes a slot or a place in the queue; `caller` is blocked on it (a foreground call). */
  readonly enter: (
    slot: Slot,
    caller: SessionId | undefined
  ) => Effect.Effect<Deferred.Deferred<void, Refusal>, Refusal>
  /** Records the session a running slot's subagent got. */
  readonly started: (id: string, session: SessionId) => Effect.Effect<void>
  /** Frees the slot (or the place in the queue) and starts what can start. */
  readonly leave: (id: string) => Effect.Effect<void>
  /**
   * Runs `wait` with `waiter` (a session, or a task id before its subagent has one) counted as
   * blocked; a queue that can no longer move is refused.
   */
  readonly blockedWhile: <A, E, R>(waiter: string, wait: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly snapshot: Effect.Effect<{ readonly running: number; readonly queued: ReadonlyArray<string> }>
}

const count = <A>(items: Iterable<A>, test: (item: A) => boolean) => {
  let n = 0
  for (const item of items) if (test(item)) n++
  return n
}

export const makeScheduler = (limits: SchedulerLimits): Effect.Effect<Scheduler> =>
  Effect.gen(function* () {
    const state = yield* Ref.make<State>({ running: new Map(), queue: [], blocked: new Map() })

    const fits = (s: State, slot: Slot) =>
      count(s.running.values(), (r) => r.parent === slot.parent) < limits.maxConcurrentPerParent &&
      count(s.running.values(), (r) => r.root === slot.root) < limits.maxConcurrentPerRoot

    /** Nothing running in the tree can finish: each is blocked (`also` counts as blocked too). */
    const stuck = (s: State, root: SessionId, also: string | undefined) => {
      const running = [...s.running.values()].filter((r) => r.root === root)
      return running.length > 0 && running.every((r) => r.waiter === also || (s.blocked.get(r.waiter) ?? 0) > 0)
    }

    const stuckMessage = (_root: SessionId) =>
      `No subagent slot can free up: every running subagent of this session (${limits.maxConcurrentPerRoot} at most at once) ` +
      `waits on another one. Do this task yourself, or wait for a running subagent before delegating more.`

    /** Moves queued slots that now fit to running; returns whom to wake. */
    const promote = (s: State): [ReadonlyArray<Waiting>, State] => {
      const running = new Map(s.running)
      const queue: Array<Waiting> = []
      const woken: Array<Waiting> = []
      for (const waiting of s.queue) {
        if (fits({ ...s, running }, waiting.slot)) {
          running.set(waiting.slot.id, { ...waiting.slot, waiter: waiting.slot.id })
          woken.push(waiting)
        } else queue.push(waiting)
      }
      return [woken, { ...s, running, queue }]
    }

    /** Queued slots of trees that can no longer move, taken out of the queue to be refused. */
    const refuseStuck = (s: State): [ReadonlyArray<Waiting>, State] => {
      const refused = s.queue.filter((w) => stuck(s, w.slot.root, undefined))
      return refused.length === 0 ? [[], s] : [refused, { ...s, queue: s.queue.filter((w) => !refused.includes(w)) }]
    }

    const enter: Scheduler["enter"] = (slot, caller) =>
      Effect.flatMap(Deferred.make<void, Refusal>(), (go) =>
        Effect.flatten(
          Ref.modify(state, (s): [Effect.Effect<Deferred.Deferred<void, Refusal>, Refusal>, State] => {
            if (fits(s, slot)) {
              return [
                Effect.as(Deferred.succeed(go, undefined), go),
                { ...s, running: new Map(s.running).set(slot.id, { ...slot, waiter: slot.id }) }
              ]
            }
            const queued = count(s.queue, (w) => w.slot.root === slot.root)
            if (queued >= limits.maxQueued) {
              return [
                Effect.fail({
                  reason: "queue_full",
                  message:
                    `The subagent queue is full: ${queued} task${queued === 1 ? " waits" : "s wait"} for a slot already ` +
                    `(at most ${limits.maxConcurrentPerParent} run at once for one session and ${limits.maxConcurrentPerRoot} for a session tree). ` +
                    "Wait for one to finish (task_wait), or do it yourself."
                }),
                s
              ]
            }
            if (stuck(s, slot.root, caller)) {
              return [Effect.fail({ reason: "stuck", message: stuckMessage(slot.root) }), s]
            }
            return [Effect.succeed(go), { ...s, queue: [...s.queue, { slot, go }] }]
          })
        )
      )

    const wake = (woken: ReadonlyArray<Waiting>) =>
      Effect.forEach(woken, (w) => Deferred.succeed(w.go, undefined), { discard: true })
    const refuse = (refused: ReadonlyArray<Waiting>) =>
      Effect.forEach(
        refused,
        (w) => Deferred.fail(w.go, { reason: "stuck" as const, message: stuckMessage(w.slot.root) }),
        { discard: true }
      )

    const leave: Scheduler["leave"] = (id) =>
      Effect.flatten(
        Ref.modify(state, (s) => {
          const running = new Map(s.running)
          running.delete(id)
          const [woken, next] = promote({ ...s, running, queue: s.queue.filter((w) => w.slot.id !== id) })
          return [wake(woken), next]
        })
      )

    const adjustBlocked = (waiter: string, delta: number) =>
      Effect.flatten(
        Ref.modify(state, (s) => {
          const blocked = new Map(s.blocked)
          const n = (blocked.get(waiter) ?? 0) + delta
          if (n > 0) blocked.set(waiter, n)
          else blocked.delete(waiter)
          const [refused, next] = refuseStuck({ ...s, blocked })
          return [refuse(refused), next]
        })
      )

    return {
      enter,
      started: (id, session) =>
        Ref.update(state, (s) => {
          const slot = s.running.get(id)
          return slot === undefined ? s : { ...s, running: new Map(s.running).set(id, { ...slot, waiter: session }) }
        }),
      leave,
      blockedWhile: (waiter, wait) =>
        Effect.acquireUseRelease(
          adjustBlocked(waiter, 1),
          () => wait,
          () => adjustBlocked(waiter, -1)
        ),
      snapshot: Effect.map(Ref.get(state), (s) => ({
        running: s.running.size,
        queued: s.queue.map((w) => w.slot.id)
      }))
    }
  })
