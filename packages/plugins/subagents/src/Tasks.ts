// The tasks of this process: each is a subagent run as a child session, from its slot in the queue
// to its result. A task's life is one fiber in the scope of the run that called `task` (so its child
// is spawned in that run, and the run's ending waits for the task to end, queued ones included);
// interrupting that fiber cancels the task at whatever step it is, and it still ends through the
// same steps: its worktree committed and kept (or removed when unchanged), its record written, its
// result delivered.
import { randomUUID } from "node:crypto"
import type { ChildHandle } from "@alisio/domain/ChildSession"
import { ToolError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { PluginApiService } from "@alisio/domain/Plugin"
import type { ToolContext } from "@alisio/domain/Tool"
import { addUsage, emptyUsage } from "@alisio/domain/Usage"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { AgentDefinition } from "./AgentDefinition.js"
import type { Discovered } from "./AgentDiscovery.js"
import { makeScheduler } from "./internal/scheduler.js"
import { makeStoredTasks, type StoredTasks } from "./internal/storedTasks.js"
import { makeFinish } from "./internal/taskEnding.js"
import { makePrepare, type Progress } from "./internal/taskPreparation.js"
import { makeWriteLocks } from "./internal/writeLocks.js"
import type { SubagentsConfig } from "./SubagentsConfig.js"
import { makeTaskRecords, type TaskRecord, type TaskRecords } from "./TaskRecords.js"
import { noticeText, type TaskEnding } from "./TaskResult.js"

/** The arguments of the `task` tool. */
export interface TaskInput {
  readonly description: string
  readonly prompt: string
  readonly subagent_type: string
  readonly background?: boolean | undefined
}

/** What a finished task gives back: the tool result and whether it is an error. */
export interface TaskEnd {
  readonly text: string
  readonly isError: boolean
  readonly ending: TaskEnding
}

export interface LiveTask {
  record: TaskRecord
  readonly agent: AgentDefinition
  readonly prompt: string
  readonly parentRunId: string
  /** The task whose session asked for this one. */
  readonly caller?: LiveTask | undefined
  /** This task and its ancestors. */
  readonly line: ReadonlySet<string>
  /** The parent's workspace. */
  readonly cwd: string
  readonly readOnly: boolean
  readonly discovered: Discovered
  handle?: ChildHandle | undefined
  /** Done once the child is spawned, or the task ended without one. */
  readonly started: Deferred.Deferred<void>
  readonly done: Deferred.Deferred<TaskEnd>
  fiber?: Fiber.RuntimeFiber<void> | undefined
  /** Its result reached the model already (a foreground call, `task_wait`, `task_status`). */
  delivered: boolean
  /** Calls waiting for its result now: the result goes to them rather than into a notice. */
  waiters: number
}

export interface Tasks {
  /** Starts a task for the calling run: its slot or place in the queue is settled when this returns. */
  readonly start: (input: TaskInput, context: ToolContext) => Effect.Effect<LiveTask, ToolError>
  /** Waits for the end, the caller counted as blocked on it. */
  readonly wait: (task: LiveTask, caller: SessionId) => Effect.Effect<TaskEnd>
  /** Waits at most `timeoutMs` (of the caller's active time once the child runs). */
  readonly waitWithin: (task: LiveTask, caller: SessionId, timeoutMs: number) => Effect.Effect<Option.Option<TaskEnd>>
  /** Cancels the task and returns once it has ended. */
  readonly cancel: (task: LiveTask) => Effect.Effect<void>
  /**
   * Cancels the tasks a run started that have no child yet (queued, or waiting for a lock): its
   * ending is under way. Done before a slot it held frees up, so none of them starts, or is refused,
   * in a run that is ending.
   */
  readonly cancelUnstarted: (runId: string) => Effect.Effect<void>
  readonly all: Effect.Effect<ReadonlyArray<LiveTask>>
  readonly byId: (id: string) => LiveTask | undefined
  readonly records: TaskRecords
  /** Tasks as stored: where one stands now, and the result of one that ran in an earlier process. */
  readonly stored: StoredTasks
  /** Saves a changed record, the live task's too when it is of this process. */
  readonly update: (record: TaskRecord) => Effect.Effect<void>
  readonly discover: (cwd: string) => Effect.Effect<Discovered>
}

const newId = (taken: (id: string) => boolean): string => {
  for (;;) {
    const id = randomUUID().replace(/-/g, "").slice(0, 8)
    if (!taken(id)) return id
  }
}

const isEnded = (status: string) => status !== "queued" && status !== "running"

/** Claude Code's names for the builtin agents, which models trained on it use. */
const aliases: Readonly<Record<string, string>> = { "general-purpose": "general" }

/** The agent a `subagent_type` names: exactly, else by alias, else ignoring case. */
export const findAgent = (discovered: Discovered, name: string): AgentDefinition | undefined => {
  const wanted = name.trim()
  const exact = discovered.agents.find((a) => a.name === wanted)
  if (exact !== undefined) return exact
  const aliased = aliases[wanted.toLowerCase()]
  return discovered.agents.find((a) => a.name === aliased || a.name.toLowerCase() === wanted.toLowerCase())
}

/** The tasks of this process; `discover` is the plugin's (its cache shared with the context provider). */
export const makeTasks = (
  api: PluginApiService,
  config: SubagentsConfig,
  discover: (cwd: string) => Effect.Effect<Discovered>
): Effect.Effect<Tasks, never, Scope.Scope> =>
  Effect.gen(function* () {
    const records = yield* makeTaskRecords(api)
    const scheduler = yield* makeScheduler(config)
    const locks = yield* makeWriteLocks
    const tasks = new Map<string, LiveTask>()
    const bySession = new Map<string, LiveTask>()

    const save = (task: LiveTask, change: Partial<TaskRecord>) =>
      Effect.suspend(() => {
        task.record = { ...task.record, ...change }
        return Effect.zipRight(records.save(task.record), renderPanel)
      })

    const renderPanel = Effect.suspend(() => {
      const now = [...tasks.values()].slice(-30)
      const running = now.filter((t) => t.record.status === "running").length
      const queued = now.filter((t) => t.record.status === "queued").length
      const lines = [
        `agents: ${running} running, ${queued} queued`,
        ...now.map(
          (t) =>
            `${"  ".repeat(t.record.depth - 1)}${t.record.id} ${t.record.status} ${t.record.label}: ${t.record.description}`
        )
      ]
      return api.ui.panel("agents", lines)
    })

    const prepare = makePrepare(api, config, scheduler, locks, save, bySession)

    /** The child's outcome: awaited, or (the task being cancelled) the child stopped first. */
    const outcomeOf = (handle: ChildHandle, restore: <A, E, R>(e: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
      restore(api.sessions.await(handle)).pipe(
        Effect.catchAllCause(() => Effect.zipRight(api.sessions.abort(handle), api.sessions.await(handle)))
      )

    const finish = makeFinish(api, config, save)

    const lifecycle = (task: LiveTask, accepted: Deferred.Deferred<void, ToolError>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.scoped(
          Effect.gen(function* () {
            const prepared: Progress = { accepted: false, value: {} }
            const exit = yield* Effect.exit(restore(prepare(task, accepted, prepared)))
            if (!prepared.accepted) {
              // Refused (or its call stopped) before it was accepted: the call fails, nothing is kept.
              yield* Deferred.fail(accepted, new ToolError({ message: "The task was not started." }))
              tasks.delete(task.record.id)
              return
            }
            const failure = Exit.isFailure(exit)
              ? Option.map(Cause.failureOption(exit.cause), (error) => (error as { message: string }).message)
              : Option.none<string>()
            const outcome = task.handle === undefined ? undefined : yield* outcomeOf(task.handle, restore)
            const end = yield* finish(task, outcome, failure, prepared.value)
            yield* scheduler.leave(task.record.id)
            if (task.handle !== undefined) bySession.delete(task.handle.sessionId)
            yield* Deferred.succeed(task.done, end)
            yield* Deferred.succeed(task.started, undefined)
            if (task.record.background && !task.delivered && task.waiters === 0) {
              yield* api.sessions.notify(
                task.record.parentSessionId as SessionId,
                noticeText(end.ending, task.record.description, config.maxResultChars)
              )
            }
          })
        ).pipe(Effect.ensuring(scheduler.leave(task.record.id)))
      )

    const start: Tasks["start"] = (input, context) =>
      Effect.gen(function* () {
        const discovered = yield* discover(context.cwd)
        const agent = findAgent(discovered, input.subagent_type)
        if (agent === undefined) {
          return yield* new ToolError({
            message: `Unknown subagent_type "${input.subagent_type}". Available: ${discovered.agents.map((a) => a.name).join(", ")}.`
          })
        }
        const caller = bySession.get(context.sessionId)
        const depth = (caller?.record.depth ?? 0) + 1
        if (depth > config.maxDepth) {
          return yield* new ToolError({
            message:
              `Delegation goes ${config.maxDepth} levels deep at most, and this task would be level ${depth} ` +
              `(${caller?.record.label ?? "root"} › ${agent.name}). Do it yourself.`
          })
        }
        if (caller?.agent.delegates !== undefined && !caller.agent.delegates.includes(agent.name)) {
          return yield* new ToolError({
            message: `The agent ${caller.agent.name} may delegate only to: ${caller.agent.delegates.join(", ") || "none"}.`
          })
        }
        const id = newId((candidate) => tasks.has(candidate))
        const now = yield* Clock.currentTimeMillis
        const task: LiveTask = {
          record: {
            id,
            agent: agent.name,
            description: input.description.trim() || agent.name,
            label: caller === undefined ? agent.name : `${caller.record.label} › ${agent.name}`,
            background: input.background ?? agent.background,
            parentSessionId: context.sessionId,
            parentRunId: context.runId,
            rootSessionId: caller?.record.rootSessionId ?? context.sessionId,
            depth,
            status: "queued",
            queuedAt: now,
            usage: emptyUsage
          },
          agent,
          prompt: input.prompt,
          parentRunId: context.runId,
          caller,
          line: new Set([id, ...(caller?.line ?? [])]),
          cwd: context.cwd,
          readOnly: agent.readOnly || context.readOnly,
          discovered,
          started: yield* Deferred.make<void>(),
          done: yield* Deferred.make<TaskEnd>(),
          delivered: false,
          waiters: 0
        }
        tasks.set(id, task)
        const accepted = yield* Deferred.make<void, ToolError>()
        const forked = yield* api.sessions.forkInRun(lifecycle(task, accepted))
        if (Option.isNone(forked)) {
          tasks.delete(id)
          return yield* new ToolError({
            message: "The run that asked for this task is ending; the task was not started."
          })
        }
        task.fiber = forked.value
        yield* Deferred.await(accepted).pipe(Effect.onInterrupt(() => Fiber.interrupt(task.fiber!)))
        return task
      })

    const cancel = (task: LiveTask) =>
      task.fiber === undefined ? Effect.void : Effect.asVoid(Fiber.interrupt(task.fiber))

    /** Counts a caller waiting for the task's result, blocked on it for the scheduler. */
    const waiting = <A>(task: LiveTask, caller: SessionId, effect: Effect.Effect<A>) =>
      scheduler.blockedWhile(
        caller,
        Effect.acquireUseRelease(
          Effect.sync(() => {
            task.waiters += 1
          }),
          () => effect,
          () =>
            Effect.sync(() => {
              task.waiters -= 1
            })
        )
      )

    const wait: Tasks["wait"] = (task, caller) => waiting(task, caller, Deferred.await(task.done))

    const waitWithin: Tasks["waitWithin"] = (task, caller, timeoutMs) =>
      waiting(
        task,
        caller,
        Effect.gen(function* () {
          const began = yield* Clock.currentTimeMillis
          const started = yield* Deferred.await(task.started).pipe(Effect.timeoutOption(timeoutMs))
          if (Option.isNone(started)) return Option.none()
          const left = timeoutMs - ((yield* Clock.currentTimeMillis) - began)
          if (task.handle !== undefined && !(yield* Deferred.isDone(task.done))) {
            const outcome = yield* api.sessions.awaitWithin(task.handle, Math.max(1, left))
            if (Option.isNone(outcome)) return Option.none()
          }
          return Option.some(yield* Deferred.await(task.done))
        })
      )

    // Live token counts for `/agents` and the panel.
    yield* api.events.on("turn_completed", (event) =>
      Effect.suspend(() => {
        const task = bySession.get(event.sessionId)
        if (task === undefined || event.data.usage === undefined || isEnded(task.record.status)) return Effect.void
        task.record = { ...task.record, usage: addUsage(task.record.usage, event.data.usage) }
        return renderPanel
      })
    )
    const cancelUnstarted = (runId: string) =>
      Effect.suspend(() =>
        Effect.forEach(
          [...tasks.values()].filter((t) => t.parentRunId === runId && t.handle === undefined),
          cancel,
          { discard: true, concurrency: "unbounded" }
        )
      )
    // A background task still queued when its parent's run ends would never start in it.
    for (const type of ["run_completed", "run_failed", "run_cancelled", "turns_exceeded"] as const) {
      yield* api.events.on(type, (event) => cancelUnstarted(event.runId))
    }

    return {
      start,
      wait,
      waitWithin,
      cancel,
      cancelUnstarted,
      all: Effect.sync(() => [...tasks.values()]),
      byId: (id) => tasks.get(id),
      records,
      stored: makeStoredTasks(api, records, (id) => tasks.get(id)?.record, config.maxResultChars),
      update: (record) =>
        Effect.suspend(() => {
          const live = tasks.get(record.id)
          if (live === undefined) return records.save(record)
          return save(live, record)
        }),
      discover
    }
  })
