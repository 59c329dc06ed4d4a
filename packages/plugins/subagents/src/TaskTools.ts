// The tools the model delegates with: `task` (a subagent, in the foreground or the background),
// `task_status` (no wait) and `task_wait` (a wait that counts as the caller's active time).
import { formatDuration } from "@alisio/domain/Durations"
import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, type ToolContext, type ToolResult, textResult } from "@alisio/domain/Tool"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { TaskRecord } from "./TaskRecords.js"
import { formatTokens, totalTokens } from "./TaskResult.js"
import type { LiveTask, Tasks } from "./Tasks.js"
import type { TaskToolSpecs } from "./TaskToolSpecs.js"

const TaskArgs = Schema.Struct({
  description: Schema.String.annotations({ description: "A short (3-5 words) description of the task." }),
  prompt: Schema.String.annotations({
    description:
      "The task for the subagent, complete: it does not see this conversation, so give it every fact, path and constraint it needs, and say what to report back."
  }),
  subagent_type: Schema.String.annotations({
    description: "The agent to use: general, explore, plan, or another one listed in your instructions."
  }),
  background: Schema.optional(Schema.Boolean).annotations({
    description:
      "Run it in the background and go on: the call returns its task id at once, and its result comes to you as a notice when it ends (or use task_wait)."
  })
})

const TaskId = Schema.Struct({
  task_id: Schema.String.annotations({ description: "The id the task call returned." })
})

const WaitArgs = Schema.Struct({
  task_id: Schema.String.annotations({ description: "The id the task call returned." }),
  timeout_ms: Schema.optional(Schema.Int.pipe(Schema.positive())).annotations({
    description: "Give up waiting after this many milliseconds (the task goes on); wait until it ends when absent."
  })
})

const statusLine = (task: LiveTask, now: number): string => {
  const { record } = task
  const since = record.startedAt ?? record.queuedAt
  const elapsed = formatDuration(Math.max(0, (record.endedAt ?? now) - since))
  return `Task ${record.id} (${record.label}: ${record.description}) is ${record.status}, for ${elapsed}, ${formatTokens(totalTokens(record.usage))} tokens so far.`
}

/** A task answers to the session that started it, and to that session's ancestors' tasks. */
const answersTo = (record: TaskRecord, session: string) =>
  record.parentSessionId === session || record.rootSessionId === session

const notFound = (id: string) => new ToolError({ message: `No task ${id} was started from this session.` })

const lookup = (tasks: Tasks, id: string, session: string) => {
  const task = tasks.byId(id.trim())
  return task === undefined || !answersTo(task.record, session) ? Effect.fail(notFound(id)) : Effect.succeed(task)
}

/**
 * A task of this session that ran in an earlier process (the session was resumed): what became of
 * it, as `task_status` and `task_wait` answer; it cannot be waited for here.
 */
const earlierTask = (tasks: Tasks, id: string, session: string) =>
  Effect.gen(function* () {
    const found = yield* tasks.stored.earlier(id.trim())
    if (Option.isNone(found) || !answersTo(found.value.record, session)) return yield* notFound(id)
    const { record, text } = found.value
    if (record.status === "queued" || record.status === "running") {
      return textResult(
        `Task ${record.id} (${record.label}: ${record.description}) is ${record.status} in another Alisio process; its result cannot be had here.`
      )
    }
    return textResult(`Task ${record.id} ran in an earlier run of this session.\n${text}`, {
      isError: record.status !== "completed"
    })
  })

/** Answers for a task of this process, else for one of an earlier process. */
const liveOrEarlier = <E, R>(
  tasks: Tasks,
  id: string,
  session: string,
  answer: (task: LiveTask) => Effect.Effect<ToolResult, E, R>
) =>
  Effect.suspend(() => {
    const task = tasks.byId(id.trim())
    return task === undefined ? earlierTask(tasks, id, session) : Effect.flatMap(lookup(tasks, id, session), answer)
  })

const namesAnAgent = (args: unknown) =>
  typeof args === "object" && args !== null && typeof (args as { subagent_type?: unknown }).subagent_type === "string"

/** A `task` call that names no agent is told which there are, as one naming an unknown agent is. */
const listingAgents = <R>(tasks: Tasks, tool: Tool<R>): Tool<R> => ({
  ...tool,
  execute: (args, context) =>
    namesAnAgent(args)
      ? tool.execute(args, context)
      : tool.execute(args, context).pipe(
          Effect.catchTag("ToolError", (error) =>
            Effect.flatMap(tasks.discover(context.cwd), (discovered) =>
              Effect.fail(
                new ToolError({
                  message: `${error.message}\nsubagent_type names the agent to run. Available: ${discovered.agents.map((a) => a.name).join(", ")}.`
                })
              )
            )
          )
        )
})

/** A cancelled `task` call's result: the ending the stopped subagent wrote (its worktree, how to merge it). */
const tellWhatIsLeft = (task: LiveTask, context: ToolContext) =>
  Effect.flatMap(Deferred.poll(task.done), (done) =>
    Option.isNone(done) || context.cancelledWith === undefined
      ? Effect.void
      : Effect.flatMap(done.value, (end) => context.cancelledWith?.(end.text) ?? Effect.void)
  )

/** The Schemas the tools decode their arguments with, by tool name (`TaskToolSpecs.ts` holds their JSON Schemas). */
export const taskToolInputs = { task: TaskArgs, task_status: TaskId, task_wait: WaitArgs } as const

/** The tools; `specs` (`TaskToolSpecs.ts`) are their names, descriptions and JSON Schemas. */
export const taskTools = (tasks: Tasks, specs: TaskToolSpecs) => [
  listingAgents(
    tasks,
    defineTool({
      ...specs.task,
      effect: "internal",
      input: TaskArgs,
      run: (input, context) =>
        Effect.gen(function* () {
          if (input.prompt.trim() === "") {
            return yield* new ToolError({
              message:
                "prompt is empty: the subagent does not see this conversation, so put the whole task in prompt (what to do, the paths and facts it needs, what to report back)."
            })
          }
          const task = yield* tasks.start(input, context)
          if (task.record.background) {
            const queued = task.record.status === "queued" && task.handle === undefined
            return textResult(
              `Started in the background as task ${task.record.id} (${task.record.label})${queued ? ", queued for a slot" : ""}. ` +
                "Its result will come to you as a notice when it ends; task_status and task_wait ask for it sooner."
            )
          }
          // The call stopped (its run cancelled, a timeout) stops the subagent, which still ends
          // through its steps: its worktree and partial work are kept, and the cancelled call's
          // result says where (a resumed session reads it). The run's tasks that have not started
          // are cancelled first, so the slot this one frees starts none of them.
          const end = yield* tasks
            .wait(task, context.sessionId)
            .pipe(
              Effect.onInterrupt(() =>
                Effect.zipRight(
                  Effect.zipRight(tasks.cancelUnstarted(context.runId), tasks.cancel(task)),
                  tellWhatIsLeft(task, context)
                )
              )
            )
          task.delivered = true
          return textResult(end.text, { isError: end.isError })
        })
    })
  ),
  defineTool({
    ...specs.task_status,
    effect: "internal",
    input: TaskId,
    run: ({ task_id }, context) =>
      liveOrEarlier(tasks, task_id, context.sessionId, (task) =>
        Effect.gen(function* () {
          const done = yield* Deferred.poll(task.done)
          if (Option.isSome(done)) {
            const end = yield* done.value
            task.delivered = true
            return textResult(end.text, { isError: end.isError })
          }
          return textResult(statusLine(task, yield* Clock.currentTimeMillis))
        })
      )
  }),
  defineTool({
    ...specs.task_wait,
    effect: "internal",
    input: WaitArgs,
    run: ({ task_id, timeout_ms }, context) =>
      liveOrEarlier(tasks, task_id, context.sessionId, (task) =>
        Effect.gen(function* () {
          const end = yield* (
            timeout_ms === undefined
              ? Effect.asSome(tasks.wait(task, context.sessionId))
              : tasks.waitWithin(task, context.sessionId, timeout_ms)
          ).pipe(Effect.onInterrupt(() => tasks.cancelUnstarted(context.runId)))
          if (Option.isNone(end)) {
            return textResult(
              `Still running after ${formatDuration(timeout_ms ?? 0)}. ${statusLine(task, yield* Clock.currentTimeMillis)}`
            )
          }
          task.delivered = true
          return textResult(end.value.text, { isError: end.value.isError })
        })
      )
  })
]
