import { randomUUID } from "node:crypto"
import {
  type ChildHandle,
  type ChildOutcome,
  ChildSessionLimitError,
  type ChildToolCall,
  type SpawnOptions
} from "@alisio/domain/ChildSession"
import type { SessionNotFoundError, StoreError, UnknownModelError } from "@alisio/domain/Errors"
import { RunId, type SessionId } from "@alisio/domain/Ids"
import type { RunStatus } from "@alisio/domain/RunEvent"
import { emptyUsage } from "@alisio/domain/Usage"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { timeoutActive } from "./ActiveClock.js"
import { CurrentRun } from "./CurrentRun.js"
import { HumanWaits } from "./HumanWaits.js"
import { narrowLimits, narrowPermissions } from "./internal/childGrant.js"
import { type ChildModel, resolveModel } from "./internal/childModel.js"
import { childToolCalls, sessionTree, storedOutcome, storedStatus } from "./internal/childRecords.js"
import { ProjectInstructions } from "./ProjectInstructions.js"
import { Providers } from "./Providers.js"
import { Runner } from "./Runner.js"
import * as SessionNoticesModule from "./SessionNotices.js"
import { SessionNotices } from "./SessionNotices.js"
import { SessionStore } from "./SessionStore.js"

export { narrowLimits, narrowPermissions }

/** Runtime guards on the tree, not left to prompts (defaults: depth 3, 8 running children per root). */
export interface ChildSessionLimits {
  readonly maxDepth: number
  readonly maxConcurrentPerRoot: number
}
export const defaultChildSessionLimits: ChildSessionLimits = { maxDepth: 3, maxConcurrentPerRoot: 8 }

/** Why a child's run did not start: a prompt too large for its model says so (CTX-1). */
const startFailure = (cause: Cause.Cause<{ readonly _tag: string; readonly message: string }>): string => {
  const failure = Cause.failureOption(cause)
  return failure._tag === "Some" && failure.value._tag === "PromptTooLargeError"
    ? `The child session could not start: ${failure.value.message}.`
    : "The child session could not start."
}

/** `spawn` was called outside a running tool, so there is no parent run to attach the child to (a defect). */
export class NoParentRunError extends Data.TaggedError("NoParentRunError")<{ readonly message: string }> {}

/** A node of a session tree. */
export interface SessionTreeNode {
  readonly sessionId: SessionId
  readonly title?: string
  readonly status: RunStatus
  readonly children: ReadonlyArray<SessionTreeNode>
}

/**
 * Child sessions (CH-1…CH-3): a child is a persisted session linked to its parent, run by the same
 * Runner with permissions narrowed to the intersection with its parent's, forked into the parent
 * run's FiberMap so that ending the parent interrupts it (CH-2). No agent logic lives here.
 */
export class ChildSessions extends Context.Tag("@alisio/runtime/ChildSessions")<
  ChildSessions,
  {
    /** Spawns a child of the run whose tool calls this; needs `CurrentRun`. */
    readonly spawn: (
      options: SpawnOptions
    ) => Effect.Effect<ChildHandle, ChildSessionLimitError | UnknownModelError | StoreError>
    readonly await: (child: ChildHandle) => Effect.Effect<ChildOutcome>
    /** `await` within `timeoutMs` of the calling run's active time (paused while a person is asked below it). */
    readonly awaitWithin: (child: ChildHandle, timeoutMs: number) => Effect.Effect<Option.Option<ChildOutcome>>
    /** Where the child stands, without waiting. */
    readonly status: (child: ChildHandle) => Effect.Effect<ChildOutcome, StoreError>
    /** The journal of the child's run so far. */
    readonly toolCalls: (child: ChildHandle) => Effect.Effect<ReadonlyArray<ChildToolCall>, StoreError>
    readonly abort: (child: ChildHandle) => Effect.Effect<void>
    readonly list: (
      parent: SessionId
    ) => Effect.Effect<ReadonlyArray<ChildHandle & { readonly status: RunStatus }>, StoreError>
    readonly tree: (root: SessionId) => Effect.Effect<SessionTreeNode, StoreError | SessionNotFoundError>
    /** What this process holds in memory for children: those not yet ended, and roots running any. */
    readonly held: Effect.Effect<{ readonly children: number; readonly roots: number }>
    /** A notice for the next request of `session` (SessionNotices). */
    readonly notify: (session: SessionId, text: string) => Effect.Effect<void>
    /** While the scope is open, a run of `session` that would end waits for a notice. */
    readonly expectNotice: (session: SessionId) => Effect.Effect<void, never, Scope.Scope>
    /** Runs `work` in the calling run's scope (needs `CurrentRun`); `None` once that run began to end. */
    readonly forkInRun: <A>(work: Effect.Effect<A>) => Effect.Effect<Option.Option<Fiber.RuntimeFiber<A>>>
  }
>() {}

interface Child {
  readonly handle: ChildHandle
  readonly outcome: Deferred.Deferred<ChildOutcome>
  readonly fiber: Ref.Ref<Option.Option<Fiber.RuntimeFiber<unknown, unknown>>>
}

/** The label path of a child: its own label joined to its parent's. */
const labelPath = (parent: string | undefined, own: string | undefined) =>
  own === undefined ? parent : parent === undefined ? own : `${parent} › ${own}`

export const make = (limits: ChildSessionLimits = defaultChildSessionLimits) =>
  Effect.gen(function* () {
    const runner = yield* Runner
    const store = yield* SessionStore
    const waits = yield* HumanWaits
    const providers = yield* Effect.serviceOption(Providers)
    const instructions = yield* Effect.serviceOption(ProjectInstructions)
    const foundNotices = yield* Effect.serviceOption(SessionNotices)
    const notices = Option.isSome(foundNotices) ? foundNotices.value : yield* SessionNoticesModule.make
    // Children are held from spawn until their run ends; an ended child is read from the store.
    const children = yield* Ref.make(new Map<SessionId, Child>())
    const runningPerRoot = yield* Ref.make(new Map<SessionId, number>())

    const reserve = (root: SessionId) =>
      Ref.modify(runningPerRoot, (map) => {
        const running = map.get(root) ?? 0
        if (running >= limits.maxConcurrentPerRoot) return [false, map] as const
        return [true, new Map(map).set(root, running + 1)] as const
      })
    const release = (root: SessionId) =>
      Ref.update(runningPerRoot, (map) => {
        const next = new Map(map)
        const running = (map.get(root) ?? 1) - 1
        if (running > 0) next.set(root, running)
        else next.delete(root)
        return next
      })
    const forget = (session: SessionId) =>
      Ref.update(children, (map) => {
        const next = new Map(map)
        next.delete(session)
        return next
      })

    /** A child whose run never began (or failed to) is left queued: end its row with its outcome. */
    const endIfQueued = (session: SessionId, status: RunStatus) =>
      store.session(session).pipe(
        Effect.flatMap((row) => (row.status === "queued" ? store.setSessionStatus(session, status) : Effect.void)),
        Effect.catchAll((error) => Effect.logError(`Child session ${session} could not be ended ${status}`, error))
      )

    // Spawning is uninterruptible: it is a few short writes, and an interruption in their middle
    // would leak the slot reserved for the child and leave its row queued. The child's fiber starts
    // uninterruptible too (it inherits the flags), so `settle` is in place even when the fiber is
    // interrupted before its first step, and the run begins before it can be interrupted: it always
    // ends through the Runner's `finalize` (only its loop is interruptible).
    const parentRun = Effect.flatMap(Effect.serviceOption(CurrentRun), (parent) =>
      Option.isSome(parent)
        ? Effect.succeed(parent.value)
        : Effect.die(
            new NoParentRunError({ message: "ChildSessions.spawn must be called from a tool of a running session" })
          )
    )

    const spawn = (options: SpawnOptions) =>
      Effect.flatMap(parentRun, (run) =>
        Effect.flatMap(resolveModel(providers, run, options.model), (chosen) => spawnIn(run, chosen, options))
      )

    // A spawn from a fiber that outlives the tool call (a plugin's queued work) may come when the
    // run is ending: it is refused then, and the run's ending waits for one under way.
    const spawnIn = (run: CurrentRun["Type"], chosen: ChildModel, options: SpawnOptions) =>
      Effect.uninterruptible(
        Effect.flatMap(
          run.whileRunning(register(run, chosen, options)),
          Option.match({
            onSome: Effect.succeed,
            onNone: () =>
              new ChildSessionLimitError({
                limit: "ended",
                max: 0,
                message: "The run that asked for this child session has ended; the child was not started."
              })
          })
        )
      )

    /** The child's system prompt: what it asked for, then the instruction files of its workspace (CTX-2). */
    const childSystem = (options: SpawnOptions, cwd: string) =>
      options.instructions === false || Option.isNone(instructions)
        ? Effect.succeed(options.system)
        : Effect.map(instructions.value.section(cwd), (section) =>
            section === undefined
              ? options.system
              : options.system === undefined
                ? section
                : `${options.system}\n\n${section}`
          )

    const register = (run: CurrentRun["Type"], chosen: ChildModel, options: SpawnOptions) =>
      Effect.gen(function* () {
        if (run.depth + 1 > limits.maxDepth) {
          return yield* new ChildSessionLimitError({
            limit: "depth",
            max: limits.maxDepth,
            message: `A child session would be ${run.depth + 1} levels deep; the limit is ${limits.maxDepth}.`
          })
        }
        if (!(yield* reserve(run.rootSessionId))) {
          return yield* new ChildSessionLimitError({
            limit: "concurrency",
            max: limits.maxConcurrentPerRoot,
            message: `This session tree already runs ${limits.maxConcurrentPerRoot} child sessions, the most allowed at once.`
          })
        }
        const grant = narrowPermissions(run, options)
        const askedTurns = options.limits?.maxTurns
        const narrowed =
          askedTurns !== undefined && askedTurns > run.limits.maxTurns
            ? [...grant.narrowed, `limits.maxTurns:${askedTurns}`]
            : grant.narrowed
        const cwd = options.cwd ?? run.cwd
        const label = labelPath(run.label, options.label)
        const system = yield* childSystem(options, cwd)
        const session = yield* store
          .createSession({
            parentId: run.sessionId,
            cwd,
            status: "queued",
            ...(options.title === undefined ? {} : { title: options.title })
          })
          .pipe(Effect.tapError(() => release(run.rootSessionId)))
        const handle: ChildHandle = { sessionId: session.id, runId: RunId.make(randomUUID()) }
        const outcome = yield* Deferred.make<ChildOutcome>()
        const fiberRef = yield* Ref.make<Option.Option<Fiber.RuntimeFiber<unknown, unknown>>>(Option.none())
        yield* Ref.update(children, (map) => new Map(map).set(session.id, { handle, outcome, fiber: fiberRef }))

        const settle = (result: Omit<ChildOutcome, "sessionId" | "runId">) =>
          Effect.gen(function* () {
            yield* release(run.rootSessionId)
            yield* run.events
              .emit("child_session_ended", {
                childSessionId: session.id,
                childRunId: handle.runId,
                status: result.status
              })
              .pipe(Effect.ignoreLogged)
            yield* Deferred.succeed(outcome, { ...handle, ...result })
            yield* forget(session.id)
          })

        yield* run.events
          .emit("child_session_started", {
            childSessionId: session.id,
            childRunId: handle.runId,
            ...(options.title === undefined ? {} : { title: options.title }),
            ...(narrowed.length === 0 ? {} : { narrowed }),
            ...(label === undefined ? {} : { label })
          })
          .pipe(
            Effect.tapError((error) =>
              Effect.zipRight(
                endIfQueued(session.id, "failed"),
                settle({
                  status: "failed",
                  text: "",
                  usage: emptyUsage,
                  error: `The child session could not start: ${error.message}`
                })
              )
            )
          )

        const childRun = runner.run({
          sessionId: session.id,
          runId: handle.runId,
          cwd,
          prompt: options.prompt,
          model: chosen.model,
          provider: chosen.provider,
          ...(chosen.modelInfo === undefined ? {} : { modelInfo: chosen.modelInfo }),
          ...(system === undefined ? {} : { system }),
          ...(label === undefined ? {} : { label }),
          tools: grant.tools,
          capabilities: grant.capabilities,
          approvals: grant.approvals,
          readOnly: grant.readOnly,
          limits: narrowLimits(run.limits, options.limits),
          depth: run.depth + 1,
          rootSessionId: run.rootSessionId
        })
        const fiber = yield* Effect.forkDaemon(
          Effect.onExit(childRun, (exit) =>
            Exit.isSuccess(exit)
              ? settle({
                  status: exit.value.status,
                  text: exit.value.text,
                  usage: exit.value.usage,
                  ...(exit.value.error === undefined ? {} : { error: exit.value.error })
                })
              : Effect.zipRight(
                  endIfQueued(session.id, Exit.isInterrupted(exit) ? "cancelled" : "failed"),
                  settle({
                    status: Exit.isInterrupted(exit) ? "cancelled" : "failed",
                    text: "",
                    usage: emptyUsage,
                    ...(Exit.isInterrupted(exit) ? {} : { error: startFailure(exit.cause) })
                  })
                )
          )
        )
        yield* Ref.set(fiberRef, Option.some(fiber))
        yield* FiberMap.set(run.children, session.id, fiber)
        return handle
      })

    // The fiber is in the run's map before anything can interrupt the caller; `work` runs with the
    // caller's interruptibility.
    const forkInRun = <A>(work: Effect.Effect<A>) =>
      Effect.flatMap(parentRun, (run) =>
        Effect.uninterruptibleMask((restore) =>
          run.whileRunning(
            Effect.flatMap(Effect.forkDaemon(restore(work)), (fiber) =>
              Effect.as(FiberMap.set(run.children, `work-${randomUUID()}`, fiber), fiber)
            )
          )
        )
      )

    const find = (child: ChildHandle) => Effect.map(Ref.get(children), (map) => map.get(child.sessionId))

    const awaitChild = (child: ChildHandle) =>
      Effect.flatMap(find(child), (found) =>
        found !== undefined
          ? Deferred.await(found.outcome)
          : Effect.flatMap(
              Effect.orDie(storedOutcome(store, child)),
              Option.match({
                onNone: () => Effect.dieMessage(`No child session ${child.sessionId} was spawned by this process`),
                onSome: Effect.succeed
              })
            )
      )

    // A parent waiting on its child is not a wait on a person (LIM-2): the time counts, except
    // while a person is asked somewhere below the caller (its own clock pauses then too).
    const awaitWithin = (child: ChildHandle, timeoutMs: number) =>
      Effect.gen(function* () {
        const caller = yield* Effect.serviceOption(CurrentRun)
        if (Option.isNone(caller))
          return yield* Effect.timeoutTo(awaitChild(child), {
            duration: timeoutMs,
            onSuccess: Option.some,
            onTimeout: Option.none
          })
        const open = yield* waits.openBelow(caller.value.sessionId)
        return yield* timeoutActive(open, timeoutMs, awaitChild(child))
      })

    return ChildSessions.of({
      spawn,
      await: awaitChild,
      awaitWithin,
      status: (child) => storedStatus(store, child),
      toolCalls: (child) => childToolCalls(store, child),
      notify: notices.post,
      expectNotice: notices.expect,
      forkInRun,
      abort: (child) =>
        Effect.flatMap(find(child), (found) =>
          found === undefined
            ? Effect.void
            : Effect.flatMap(Ref.get(found.fiber), (fiber) =>
                Option.isSome(fiber) ? Fiber.interrupt(fiber.value) : Effect.void
              )
        ).pipe(Effect.asVoid),
      list: (parent) =>
        Effect.gen(function* () {
          const known = yield* Ref.get(children)
          const sessions = yield* store.sessions({ parentId: parent })
          return yield* Effect.forEach(sessions, (session) =>
            Effect.gen(function* () {
              const runId =
                known.get(session.id)?.handle.runId ??
                (store.runs === undefined ? undefined : (yield* store.runs(session.id)).at(-1)?.id)
              return { sessionId: session.id, runId: runId ?? RunId.make(session.id), status: session.status }
            })
          )
        }),
      tree: (root) => sessionTree(store, root),
      held: Effect.zipWith(Ref.get(children), Ref.get(runningPerRoot), (kids, roots) => ({
        children: kids.size,
        roots: roots.size
      }))
    })
  })

export const layer = (limits?: Partial<ChildSessionLimits>) =>
  Layer.effect(ChildSessions, make({ ...defaultChildSessionLimits, ...limits }))
