import { isAbsolute, relative, resolve } from "node:path"
import { closeMatches } from "@alisio/domain/CloseMatches"
import type { StoreError } from "@alisio/domain/Errors"
import { ToolError } from "@alisio/domain/Errors"
import type { ToolCallPart, ToolResultMessage } from "@alisio/domain/Message"
import { textOf } from "@alisio/domain/Message"
import type { ToolCallStatus } from "@alisio/domain/RunEvent"
import type { Tool, ToolContext, ToolResult } from "@alisio/domain/Tool"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import { CurrentRun } from "../CurrentRun.js"
import { HumanWaits } from "../HumanWaits.js"
import { type ApprovalAnswer, Interaction } from "../Interaction.js"
import { SessionStore } from "../SessionStore.js"
import { allowedInReadOnly } from "../Tools.js"
import { headOf } from "../tools/internal/outputBuffer.js"
import { ProgressGate } from "./progressGate.js"

const EVENT_RESULT_CHARS = 4_000

const resultMessage = (call: ToolCallPart, text: string, isError: boolean): ToolResultMessage => ({
  role: "tool",
  toolCallId: call.id,
  toolName: call.name,
  content: [{ _tag: "text", text }],
  isError
})

const CANCELLED_NOTE_CHARS = 8_000

/**
 * The result stored for a call that was stopped before it finished: never dropped silently; with
 * what the tool said it left behind (`ToolContext.cancelledWith`), when it said something.
 */
export const cancelledResult = (call: ToolCallPart, note?: string): ToolResultMessage => {
  const text = "The tool call was cancelled before it finished."
  const said = note?.trim() ?? ""
  if (said === "") return resultMessage(call, text, true)
  const bounded = said.length > CANCELLED_NOTE_CHARS ? `${headOf(said, CANCELLED_NOTE_CHARS)}…` : said
  return resultMessage(call, `${text}\n${bounded}`, true)
}

const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path)
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))
}

let approvalCounter = 0

/**
 * What the model is told when an approval was refused: a person's refusal as such, the headless
 * policy's as the policy's, with how the person running Alisio can allow it.
 */
const deniedText = (by: ApprovalAnswer["by"], what: string): string =>
  by === "policy"
    ? `${what} was denied by the headless policy: no one is here to approve it. ` +
      "The person running Alisio can allow it with --yes."
    : `${what} was denied by the user.`

interface ApprovalRequest {
  readonly kind: "tool" | "external_directory"
  readonly summary: string
  readonly path?: string
}

/** The tools a run offers the model: read-only runs hide what could change the workspace or the world. */
const offeredNames = (run: CurrentRun["Type"], tools: ReadonlyMap<string, Tool>): ReadonlyArray<string> =>
  [...run.toolNames].filter((name) => {
    const tool = tools.get(name)
    return tool !== undefined && (!run.readOnly || allowedInReadOnly(tool.effect))
  })

/**
 * Runs one complete tool call: journal, approval (a human wait), the handler, and the events
 * `tool_call_started` / `tool_call_completed` (TL-2…TL-4). A bad call (unknown tool, invalid JSON,
 * refused by policy) becomes an error result the model sees. A started call always ends: on any
 * exit (interruption included) its journal row and its `tool_call_completed` are written, and an
 * approval still open is resolved as withdrawn first. A `refusal` ends the call as denied with
 * that text, without running it (a call past the per-response bound).
 */
export const executeToolCall = (
  call: ToolCallPart,
  tools: ReadonlyMap<string, Tool>,
  refusal?: string,
  /** Told the result stored when the call is cancelled, which the interrupted call cannot return. */
  onCancelled?: (result: ToolResultMessage) => void
): Effect.Effect<ToolResultMessage, StoreError, CurrentRun | SessionStore | HumanWaits | Interaction> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const run = yield* CurrentRun
      const store = yield* SessionStore
      const waits = yield* HumanWaits
      const interaction = yield* Interaction
      const tool = tools.get(call.name)
      const startedAt = yield* Clock.currentTimeMillis
      const effect = tool?.effect ?? "external"

      yield* run.events.emit("tool_call_started", {
        toolCallId: call.id,
        name: call.name,
        arguments: call.arguments,
        effect
      })
      let ended = false
      let cancelledNote: string | undefined
      // The time its approvals waited for a person: not the tool's, as the run's clock pauses too (LIM-1).
      let approvalWaitMs = 0
      const finish = (status: ToolCallStatus, result: ToolResultMessage) =>
        Effect.uninterruptible(
          Effect.gen(function* () {
            ended = true
            const endedAt = yield* Clock.currentTimeMillis
            const text = textOf(result.content)
            yield* store.toolCallEnded(call.id, { status, result: text, endedAt })
            yield* run.events.emit("tool_call_completed", {
              toolCallId: call.id,
              name: call.name,
              status,
              ...(text.length > EVENT_RESULT_CHARS
                ? { result: `${headOf(text, EVENT_RESULT_CHARS)}…`, resultChars: text.length }
                : { result: text }),
              durationMs: Math.max(0, endedAt - startedAt - approvalWaitMs)
            })
            return result
          })
        )
      /** Ends a call that stopped on the way (interrupted, or a store failure): each write on its own. */
      const endAnyway = (status: ToolCallStatus, result: ToolResultMessage) =>
        Effect.gen(function* () {
          const endedAt = yield* Clock.currentTimeMillis
          const text = textOf(result.content)
          yield* Effect.ignore(store.toolCallEnded(call.id, { status, result: text, endedAt }))
          yield* Effect.ignore(
            run.events.emit("tool_call_completed", {
              toolCallId: call.id,
              name: call.name,
              status,
              result: text,
              durationMs: Math.max(0, endedAt - startedAt - approvalWaitMs)
            })
          )
        })

      const askApproval = (request: ApprovalRequest) =>
        Effect.flatMap(Clock.currentTimeMillis, (askedAt) =>
          Effect.ensuring(
            requestApproval(request),
            Effect.map(Clock.currentTimeMillis, (now) => {
              approvalWaitMs += Math.max(0, now - askedAt)
            })
          )
        )

      const requestApproval = (request: ApprovalRequest) =>
        waits.around(
          run.sessionId,
          request.kind === "tool" ? "tool_approval" : "external_directory",
          Effect.uninterruptibleMask((restoreWait) =>
            Effect.gen(function* () {
              const approvalId = `${run.runId}:${++approvalCounter}`
              yield* run.events.emit("approval_requested", {
                approvalId,
                kind: request.kind,
                toolCallId: call.id,
                tool: call.name,
                effect,
                ...(request.path === undefined ? {} : { path: request.path }),
                summary: request.summary,
                ...(run.label === undefined ? {} : { label: run.label })
              })
              const answer = yield* restoreWait(
                interaction.approve({
                  sessionId: run.sessionId,
                  approvalId,
                  kind: request.kind,
                  summary: request.summary,
                  tool: call.name,
                  effect,
                  arguments: call.arguments,
                  toolCallId: call.id,
                  ...(request.path === undefined ? {} : { path: request.path }),
                  ...(run.label === undefined ? {} : { label: run.label })
                })
              ).pipe(
                Effect.onInterrupt(() =>
                  Effect.ignore(
                    run.events.emit("approval_resolved", { approvalId, approved: false, by: "person", cancelled: true })
                  )
                )
              )
              yield* run.events.emit("approval_resolved", { approvalId, approved: answer.approved, by: answer.by })
              return answer
            })
          )
        )

      const body = Effect.gen(function* () {
        if (refusal !== undefined) return yield* finish("denied", resultMessage(call, refusal, true))
        if (tool === undefined || !run.toolNames.has(call.name)) {
          const offered = [...offeredNames(run, tools)].sort()
          const meant = meantTool(call.name, offered)
          return yield* finish(
            "error",
            resultMessage(
              call,
              `Unknown tool "${call.name}".${meant === undefined ? "" : ` Did you mean "${meant}"?`} Available tools: ${offered.join(", ") || "none"}.`,
              true
            )
          )
        }
        if (run.readOnly && !allowedInReadOnly(tool.effect)) {
          return yield* finish(
            "denied",
            resultMessage(call, `The tool "${call.name}" changes files or the world and this run is read-only.`, true)
          )
        }
        const args = parseArguments(call.arguments)
        if (Either.isLeft(args)) {
          const shown = call.arguments.length > 200 ? `${call.arguments.slice(0, 200)}…` : call.arguments
          return yield* finish(
            "error",
            resultMessage(call, `The arguments of ${call.name} are not valid JSON (${args.left}): ${shown}`, true)
          )
        }

        const policy = run.approvals[tool.effect]
        if (policy === "deny") {
          return yield* finish(
            "denied",
            resultMessage(
              call,
              `Running ${call.name} was denied: this run's approval policy denies ${tool.effect} tools.`,
              true
            )
          )
        }
        if (policy === "ask") {
          // No one is asked to approve a call that cannot run.
          const invalid = tool.invalid?.(args.right)
          if (invalid !== undefined) return yield* finish("error", resultMessage(call, invalid, true))
          const answer = yield* askApproval({ kind: "tool", summary: summarize(call) })
          if (!answer.approved) {
            return yield* finish("denied", resultMessage(call, deniedText(answer.by, `Running ${call.name}`), true))
          }
        }

        const emitProgress = (text: string) =>
          Effect.asVoid(Effect.orDie(run.events.emit("tool_progress", { toolCallId: call.id, text })))
        const gate = new ProgressGate()
        const context: ToolContext = {
          sessionId: run.sessionId,
          runId: run.runId,
          toolCallId: call.id,
          cwd: run.cwd,
          readOnly: run.readOnly,
          progress: (text) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const shown = gate.offer(text, now)
              return shown === undefined ? Effect.void : emitProgress(shown)
            }),
          approveExternalPath: (path) => {
            const absolute = resolve(run.cwd, path)
            if (isInside(run.cwd, absolute)) return Effect.void
            return askApproval({
              kind: "external_directory",
              summary: `${call.name} wants to access ${absolute}, outside the workspace`,
              path: absolute
            }).pipe(
              Effect.orDie,
              Effect.flatMap((answer) =>
                answer.approved
                  ? Effect.void
                  : new ToolError({
                      message: deniedText(answer.by, `Access to ${absolute}, outside the workspace ${run.cwd},`)
                    })
              )
            )
          },
          askUser: (question) =>
            waits
              .around(run.sessionId, "question", interaction.ask(run.sessionId, question))
              .pipe(Effect.mapError((error) => new ToolError({ message: error.message }))),
          reviewPlan: (plan) =>
            interaction.reviewPlan === undefined
              ? new ToolError({
                  message: "No person is available to review a plan here; go on with your best judgement."
                })
              : waits
                  .around(run.sessionId, "plan_review", interaction.reviewPlan({ sessionId: run.sessionId, plan }))
                  .pipe(Effect.mapError((error) => new ToolError({ message: error.message }))),
          cancelledWith: (text) =>
            Effect.sync(() => {
              cancelledNote = text
            })
        }

        const outcome = yield* tool.execute(args.right, context).pipe(
          Effect.map((result: ToolResult) => ({
            status: result.isError === true ? ("error" as const) : ("completed" as const),
            result
          })),
          Effect.catchAll((error) =>
            Effect.succeed({
              status: "error" as const,
              result: { content: [{ _tag: "text" as const, text: error.message }], isError: true }
            })
          ),
          Effect.catchAllDefect((defect) =>
            Effect.succeed({
              status: "error" as const,
              result: {
                content: [{ _tag: "text" as const, text: `The tool ${call.name} crashed: ${String(defect)}` }],
                isError: true
              }
            })
          )
        )
        const rest = gate.end()
        if (rest !== undefined) yield* emitProgress(rest)
        return yield* finish(outcome.status, {
          role: "tool",
          toolCallId: call.id,
          toolName: call.name,
          content: outcome.result.content,
          isError: outcome.result.isError === true
        })
      })

      const journaled = store.toolCallStarted({
        id: call.id,
        sessionId: run.sessionId,
        runId: run.runId,
        name: call.name,
        effect,
        arguments: call.arguments,
        startedAt
      })
      return yield* Effect.zipRight(journaled, restore(body)).pipe(
        Effect.onExit((exit) =>
          ended || Exit.isSuccess(exit)
            ? Effect.void
            : Exit.isInterrupted(exit)
              ? Effect.suspend(() => {
                  const result = cancelledResult(call, cancelledNote)
                  onCancelled?.(result)
                  return endAnyway("cancelled", result)
                })
              : endAnyway("error", resultMessage(call, "The tool call failed before it finished.", true))
        )
      )
    })
  )

/**
 * A call's arguments, or why they are not JSON. An object sent as a JSON string (encoded twice,
 * as some servers relay them) is that object: the intent is plain, and the model could only
 * repeat the same call.
 */
const parseArguments = (text: string): Either.Either<unknown, string> => {
  if (text.trim() === "") return Either.right({})
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value === "string" && value.trimStart().startsWith("{")) {
      try {
        const inner: unknown = JSON.parse(value)
        if (typeof inner === "object" && inner !== null && !Array.isArray(inner)) return Either.right(inner)
      } catch {
        // A string that is not an encoded object: the tool says what it expected.
      }
    }
    return Either.right(value)
  } catch (error) {
    return Either.left(error instanceof Error ? error.message : String(error))
  }
}

const summarize = (call: ToolCallPart): string => {
  const args = call.arguments.length > 300 ? `${call.arguments.slice(0, 300)}…` : call.arguments
  return `${call.name} ${args}`
}

/**
 * The tool a model most likely meant by a name none has: the name after a namespace some models
 * put first (`functions.read`, `default_api:read`), one whose name ends in it after a prefix
 * (`notes_search` for `p_2f05d4b689_notes_search`, `read_file` for `mcp__fs__read_file`), else
 * the closest spelling (`Read`, `greps`).
 */
const meantTool = (name: string, offered: ReadonlyArray<string>): string | undefined => {
  const bare = name.trim().replace(/^.*[.:/]/, "")
  if (bare !== name) {
    const exact = offered.find((tool) => tool === bare)
    if (exact !== undefined) return exact
  }
  const lower = name.toLowerCase()
  const prefixed = offered.filter((tool) => tool.toLowerCase().endsWith(`_${lower}`))
  if (prefixed.length === 1) return prefixed[0]
  return closeMatches(lower, offered, 1)[0]
}
