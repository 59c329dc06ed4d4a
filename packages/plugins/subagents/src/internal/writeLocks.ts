// One writing subagent at a time in a shared workspace (when worktrees are wanted but cannot be
// had, or `parallelWrites: serial`). A subagent of the holder's own line runs inside the lock: it
// is working for the holder, which waits on it.
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"

interface Lock {
  readonly holder: string
  readonly waiting: ReadonlyArray<{ readonly task: string; readonly go: Deferred.Deferred<void> }>
}

export interface WriteLocks {
  /**
   * Holds the lock of `workspace` for the scope; `line` is the task and its ancestors. Waits while
   * another line holds it.
   */
  readonly hold: (workspace: string, task: string, line: ReadonlySet<string>) => Effect.Effect<void, never, Scope.Scope>
}

export const makeWriteLocks: Effect.Effect<WriteLocks> = Effect.map(
  Ref.make<ReadonlyMap<string, Lock>>(new Map()),
  (locks) => {
    const release = (workspace: string, task: string) =>
      Effect.flatten(
        Ref.modify(locks, (map) => {
          const lock = map.get(workspace)
          const next = new Map(map)
          if (lock === undefined) return [Effect.void, map]
          if (lock.holder !== task) {
            next.set(workspace, { ...lock, waiting: lock.waiting.filter((w) => w.task !== task) })
            return [Effect.void, next]
          }
          const [first, ...rest] = lock.waiting
          if (first === undefined) next.delete(workspace)
          else next.set(workspace, { holder: first.task, waiting: rest })
          return [first === undefined ? Effect.void : Deferred.succeed(first.go, undefined), next]
        })
      )

    const acquire = (workspace: string, task: string, line: ReadonlySet<string>) =>
      Effect.flatMap(Deferred.make<void>(), (go) =>
        Effect.flatten(
          Ref.modify(locks, (map): [Effect.Effect<boolean>, ReadonlyMap<string, Lock>] => {
            const lock = map.get(workspace)
            if (lock === undefined)
              return [Effect.succeed(true), new Map(map).set(workspace, { holder: task, waiting: [] })]
            if (line.has(lock.holder)) return [Effect.succeed(false), map]
            return [
              Effect.as(Deferred.await(go), true),
              new Map(map).set(workspace, { ...lock, waiting: [...lock.waiting, { task, go }] })
            ]
          })
        )
      )

    return {
      hold: (workspace, task, line) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.gen(function* () {
            // Interrupted while waiting: the place in line (or the lock just handed over) is given up.
            const held = yield* restore(acquire(workspace, task, line)).pipe(
              Effect.onInterrupt(() => release(workspace, task))
            )
            if (held) yield* Effect.addFinalizer(() => release(workspace, task))
          })
        )
    }
  }
)
