import {
  OutputBudgetExhaustedError,
  OutputTruncatedError,
  ProviderError,
  RunTimeoutError,
  type SessionLockedError,
  type SessionNotFoundError,
  type StoreError
} from "@alisio/domain/Errors"
import { RunId, type SessionId } from "@alisio/domain/Ids"
import {
  LanguageModel,
  type LanguageModelService,
  type ModelInfo,
  type ModelRequest,
  type ReasoningEffort,
  type ResponsePart
} from "@alisio/domain/LanguageModel"
import {
  type Limits,
  type ResolvedLimits,
  resolveLimits,
  resolveOutputBudget,
  type TimeoutInfo,
  type TimeoutStage
} from "@alisio/domain/Limits"
import type { AssistantMessage, ImagePart, Message, ToolCallPart, ToolResultMessage } from "@alisio/domain/Message"
import { isTerminalType, type KnownRunEvent, type RunEventDataMap, type RunStatus } from "@alisio/domain/RunEvent"
import { addUsage, emptyUsage, type Usage } from "@alisio/domain/Usage"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { timeoutActive } from "./ActiveClock.js"
import { CurrentRun } from "./CurrentRun.js"
import { HumanWaits } from "./HumanWaits.js"
import { Interaction } from "./Interaction.js"
import { continuationNotice, toRequestMessages } from "./internal/history.js"
import { cancelledResult, executeToolCall } from "./internal/toolCalls.js"
import { type AssembledCall, classify, isLegacyTruncationText } from "./internal/truncation.js"
import { currentOwner } from "./ProcessOwner.js"
import { RunEvents } from "./RunEvents.js"
import { type RunRecord, SessionStore } from "./SessionStore.js"
import { type Approvals, allowedInReadOnly, defaultApprovals, Tools } from "./Tools.js"

/** What to run. */
export interface RunOptions {
  /** Resume this session; without it a new session is created. */
  readonly sessionId?: SessionId
  /** Create the new session as a child of this one. */
  readonly parentSessionId?: SessionId
  readonly title?: string
  /** The workspace: tools work relative to it. */
  readonly cwd: string
  readonly prompt: string
  readonly attachments?: ReadonlyArray<ImagePart>
  /** The model id as the provider knows it. */
  readonly model: string
  /** The provider to use; defaults to the `LanguageModel` in the runner's context. */
  readonly provider?: LanguageModelService
  /** Catalog facts about the model (its `maxOutputTokens` feeds LIM-5). */
  readonly modelInfo?: ModelInfo
  readonly system?: string
  readonly effort?: ReasoningEffort
  /** The tools the run may use, by name; defaults to every registered tool. */
  readonly tools?: ReadonlyArray<string>
  readonly capabilities?: ReadonlyArray<string>
  readonly approvals?: Partial<Approvals>
  readonly readOnly?: boolean
  readonly limits?: Limits
  readonly runId?: RunId
  /** Idempotency key: a repeat in the same session returns the existing run (ST-3). */
  readonly requestId?: string
  /** Copied to every event of the run (EV-2). */
  readonly correlationId?: string
  /** Sees every event of this run, in order, after it is stored (EV-1). */
  readonly onEvent?: (event: KnownRunEvent) => Effect.Effect<void>
  /** Set by child sessions: the depth of this run's session in its tree and its root. */
  readonly depth?: number
  readonly rootSessionId?: SessionId
}

/** How a run ended. */
export interface RunOutcome {
  readonly runId: RunId
  readonly sessionId: SessionId
  readonly status: RunStatus
  /** The last answer's visible text. */
  readonly text: string
  readonly usage: Usage
  readonly turns: number
  readonly error?: string
  /** The `run_failed` payload when the run failed. */
  readonly failure?: RunEventDataMap["run_failed"]
  /** True when `requestId` matched an earlier run, which was returned instead of running again. */
  readonly existing: boolean
}

/** Errors that stop a run before it starts. */
export type RunStartError = SessionNotFoundError | SessionLockedError | StoreError

/** The agent loop (EV-1…EV-5, LIM-1…LIM-8). A run is one fiber; interrupting it cancels the run. */
export class Runner extends Context.Tag("@alisio/runtime/Runner")<
  Runner,
  {
    readonly run: (options: RunOptions) => Effect.Effect<RunOutcome, RunStartError>
    /** The run's events as a stream, ending with its terminal event; the run starts when pulled. */
    readonly stream: (options: RunOptions) => Stream.Stream<KnownRunEvent, RunStartError>
  }
>() {}

type LoopResult = { readonly _tag: "Completed"; readonly text: string } | { readonly _tag: "TurnsExceeded" }

type RunFailure = RunTimeoutError | OutputBudgetExhaustedError | ProviderError | OutputTruncatedError | StoreError

class StreamIdle {
  readonly _tag = "StreamIdle"
}

class FirstTokenSilence {
  readonly _tag = "FirstTokenSilence"
}

const efforts: ReadonlyArray<ReasoningEffort> = ["minimal", "low", "medium", "high"]
const lowerEffort = (effort: ReasoningEffort | undefined): ReasoningEffort | undefined => {
  if (effort === undefined) return undefined
  const index = efforts.indexOf(effort)
  return index > 1 ? efforts[index - 1] : undefined
}

const formatMs = (ms: number): string =>
  ms % 60_000 === 0 && ms >= 60_000 ? `${ms / 60_000} min` : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`

const timeoutMessage = (info: TimeoutInfo): string => {
  switch (info.kind) {
    case "first_token":
      return (
        `The model ${info.model} (${info.provider}) sent nothing within ${formatMs(info.ms)} of the request, ` +
        `${info.attempts === 1 ? "on the only attempt" : `on all ${info.attempts} attempts`}; the run stopped.`
      )
    case "stream_idle":
      return `The model ${info.model} (${info.provider}) went silent for ${formatMs(info.ms)} in the middle of its response; the run stopped.`
    case "tool":
      return `The tool ${info.tool ?? ""} ran past its ${formatMs(info.ms)} limit; the run stopped.`
    case "run": {
      const doing =
        info.stage === "tool"
          ? `running the tool ${info.tool ?? ""}`
          : info.stage === "streaming"
            ? "receiving the model's response"
            : "waiting for the model"
      return `The run used up its ${formatMs(info.ms)} of active time while ${doing}; it stopped.`
    }
  }
}

export const make = Effect.gen(function* () {
  const store = yield* SessionStore
  const events = yield* RunEvents
  const waits = yield* HumanWaits
  const interaction = yield* Interaction
  const registry = yield* Tools
  const defaultProvider = yield* Effect.serviceOption(LanguageModel)

  const existingOutcome = (record: RunRecord): RunOutcome => ({
    runId: record.id,
    sessionId: record.sessionId,
    status: record.status,
    text: "",
    usage: record.usage ?? emptyUsage,
    turns: 0,
    ...(record.error === undefined ? {} : { error: record.error }),
    existing: true
  })

  // Setting a run up is uninterruptible and only `execute` is restored: an interruption that
  // arrives while the run starts (a child aborted right after its spawn) still ends it through
  // `finalize`, with its rows and its one terminal event, instead of leaving it queued.
  const run = (options: RunOptions): Effect.Effect<RunOutcome, RunStartError> =>
    Effect.scoped(
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const limits: ResolvedLimits = resolveLimits(options.limits)
          const provider = options.provider ?? Option.getOrUndefined(defaultProvider)
          if (provider === undefined)
            return yield* Effect.dieMessage("Runner: no provider given and no LanguageModel in context")
          const session =
            options.sessionId !== undefined
              ? yield* store.session(options.sessionId)
              : yield* store.createSession({
                  cwd: options.cwd,
                  status: "queued",
                  ...(options.parentSessionId === undefined ? {} : { parentId: options.parentSessionId }),
                  ...(options.title === undefined ? {} : { title: options.title })
                })
          if (session.parentId !== undefined) yield* waits.link(session.id, session.parentId)

          if (options.requestId !== undefined && store.runByRequest !== undefined) {
            const earlier = yield* store.runByRequest(session.id, options.requestId)
            if (Option.isSome(earlier)) return existingOutcome(earlier.value)
          }
          const owner = currentOwner
          // A child session is created and run by this process alone, inside its parent's run (which
          // holds the tree's root lock); locking it too would only add writes to every spawn and cancel.
          if ((options.depth ?? 0) === 0) yield* store.lockSession(session.id, owner)
          const runId = options.runId ?? RunId.make(crypto.randomUUID())
          if (store.beginRun !== undefined) {
            const begun = yield* store.beginRun({
              id: runId,
              sessionId: session.id,
              model: options.model,
              provider: provider.provider,
              owner,
              ...(options.requestId === undefined ? {} : { requestId: options.requestId })
            })
            if (begun.existing) return existingOutcome(begun.run)
          }

          const emitter = yield* events.emitter(
            {
              runId,
              sessionId: session.id,
              ...(options.correlationId === undefined ? {} : { correlationId: options.correlationId })
            },
            options.onEvent
          )
          const children = yield* FiberMap.make<string, unknown, unknown>()
          const registered = yield* registry.all
          const allowed = options.tools === undefined ? undefined : new Set(options.tools)
          const toolMap = new Map(
            registered.filter((tool) => allowed?.has(tool.name) ?? true).map((tool) => [tool.name, tool])
          )
          const readOnly = options.readOnly === true
          const offered = [...toolMap.values()].filter((tool) => !readOnly || allowedInReadOnly(tool.effect))
          const toolSpecs = offered.map(({ description, name, parameters }) => ({ name, description, parameters }))
          const approvals: Approvals = { ...defaultApprovals, ...options.approvals }
          const current = CurrentRun.of({
            runId,
            sessionId: session.id,
            rootSessionId: options.rootSessionId ?? session.id,
            depth: options.depth ?? 0,
            cwd: options.cwd,
            model: options.model,
            provider,
            ...(options.modelInfo === undefined ? {} : { modelInfo: options.modelInfo }),
            readOnly,
            toolNames: new Set(toolMap.keys()),
            capabilities: new Set(options.capabilities ?? []),
            approvals,
            limits,
            events: emitter,
            children
          })

          const stage = yield* Ref.make<{ readonly stage: TimeoutStage; readonly tool?: string }>({
            stage: "model_request"
          })
          let turns = 0
          let usage: Usage = emptyUsage
          let requests = 0
          let attempts = 0

          const timeoutInfo = (
            kind: TimeoutInfo["kind"],
            ms: number,
            at: { readonly stage: TimeoutStage; readonly tool?: string }
          ): TimeoutInfo => ({
            kind,
            ms,
            model: options.model,
            provider: provider.provider,
            stage: at.stage,
            ...(at.tool === undefined ? {} : { tool: at.tool }),
            firstRequest: requests <= 1,
            attempts
          })
          const timeoutError = (info: TimeoutInfo) =>
            new RunTimeoutError({ message: timeoutMessage(info), timeout: info })

          let lastPartAt = 0

          /** Streams one response, resending a request that stays silent (LIM-4), failing a stalled one. */
          const streamResponse = (request: ModelRequest) =>
            Effect.gen(function* () {
              requests += 1
              attempts = 0
              for (;;) {
                attempts += 1
                yield* Ref.set(stage, { stage: "model_request" })
                const response = {
                  text: "",
                  reasoning: "",
                  calls: new Map<string, { name: string; arguments: string; ended: boolean }>(),
                  finish: undefined as string | undefined,
                  usage: undefined as Usage | undefined,
                  ttftMs: undefined as number | undefined,
                  durationMs: 0,
                  providerTruncated: false
                }
                const sentAt = yield* Clock.currentTimeMillis
                const onPart = (part: ResponsePart): Effect.Effect<void, StoreError> => {
                  switch (part._tag) {
                    case "TextDelta":
                      response.text += part.text
                      return part.text === ""
                        ? Effect.void
                        : Effect.asVoid(emitter.emit("text_delta", { text: part.text }))
                    case "ReasoningDelta":
                      response.reasoning += part.text
                      return part.text === ""
                        ? Effect.void
                        : Effect.asVoid(emitter.emit("reasoning_delta", { text: part.text }))
                    case "ToolCallStart":
                      if (!response.calls.has(part.id))
                        response.calls.set(part.id, { name: part.name, arguments: "", ended: false })
                      return Effect.void
                    case "ToolCallDelta": {
                      const call = response.calls.get(part.id)
                      if (call !== undefined) call.arguments += part.argumentsDelta
                      return Effect.void
                    }
                    case "ToolCallEnd": {
                      const call = response.calls.get(part.id)
                      if (call !== undefined) call.ended = true
                      return Effect.void
                    }
                    case "Finish":
                      response.finish = part.reason
                      if (part.usage !== undefined) response.usage = part.usage
                      return Effect.void
                  }
                }
                let firstPartAt: number | undefined
                const consume = Stream.runForEach(provider.stream(request), (part) =>
                  Effect.flatMap(Clock.currentTimeMillis, (now) => {
                    lastPartAt = now
                    if (firstPartAt === undefined) {
                      firstPartAt = now
                      if (part._tag !== "Finish") response.ttftMs = now - sentAt
                      return Effect.zipRight(Ref.set(stage, { stage: "streaming" }), onPart(part))
                    }
                    return onPart(part)
                  })
                )
                // One watchdog per request: silence before the first part is a first-token timeout
                // (resent, LIM-4), silence after it an idle stall. No timer per part.
                const watchdog = Effect.gen(function* () {
                  for (;;) {
                    const now = yield* Clock.currentTimeMillis
                    const due =
                      firstPartAt === undefined
                        ? sentAt + limits.firstTokenTimeoutMs
                        : lastPartAt + limits.streamIdleTimeoutMs
                    if (now >= due)
                      return yield* Effect.fail(firstPartAt === undefined ? new FirstTokenSilence() : new StreamIdle())
                    yield* Effect.sleep(due - now)
                  }
                })
                const outcome = yield* Effect.raceFirst(Effect.as(consume, "streamed" as const), watchdog).pipe(
                  Effect.catchIf(
                    (error): error is FirstTokenSilence => error instanceof FirstTokenSilence,
                    () => Effect.succeed("silent" as const)
                  ),
                  Effect.catchIf(
                    (error): error is StreamIdle => error instanceof StreamIdle,
                    () =>
                      Effect.fail(
                        timeoutError(timeoutInfo("stream_idle", limits.streamIdleTimeoutMs, { stage: "streaming" }))
                      )
                  ),
                  Effect.catchIf(
                    (error): error is OutputTruncatedError | ProviderError =>
                      error instanceof OutputTruncatedError ||
                      (error instanceof ProviderError &&
                        (error.code === "output_truncated" || isLegacyTruncationText(error.message))),
                    () =>
                      Effect.sync(() => {
                        response.providerTruncated = true
                        return "streamed" as const
                      })
                  )
                )
                if (outcome === "silent") {
                  if (attempts <= limits.firstTokenRetries) {
                    yield* emitter.emit("request_retry", {
                      attempt: attempts,
                      of: limits.firstTokenRetries,
                      reason: "first_token_timeout",
                      afterMs: limits.firstTokenTimeoutMs
                    })
                    continue
                  }
                  return yield* Effect.fail(
                    timeoutError(timeoutInfo("first_token", limits.firstTokenTimeoutMs, { stage: "first_token" }))
                  )
                }
                response.durationMs = (yield* Clock.currentTimeMillis) - sentAt
                if (response.finish === undefined && !response.providerTruncated) {
                  return yield* new ProviderError({
                    code: "invalid_response",
                    provider: provider.provider,
                    message: `The response from ${options.model} ended without a finish reason.`
                  })
                }
                return response
              }
            })

          /** Stores an assistant message and its tool results in one transaction, then publishes them. */
          // The session's conversation, read once when the run starts and kept as it is stored: this
          // process holds the session's lock, so nobody else appends to it meanwhile.
          const conversation: Array<Message> = []
          const storeTurn = (messages: ReadonlyArray<Message>) =>
            Effect.gen(function* () {
              yield* store.appendMessages(session.id, messages, runId)
              conversation.push(...messages)
              for (const message of messages) yield* emitter.emit("message", { message })
            })

          /** Runs the complete calls of a response; on interruption every call still gets a (cancelled) result. */
          const runTools = (assistant: AssistantMessage, calls: ReadonlyArray<ToolCallPart>) =>
            Effect.gen(function* () {
              const results: Array<ToolResultMessage | undefined> = calls.map(() => undefined)
              const persist = Effect.suspend(() =>
                storeTurn([assistant, ...calls.map((call, i) => results[i] ?? cancelledResult(call))])
              )
              yield* Effect.forEach(
                calls,
                (call, i) =>
                  Ref.set(stage, { stage: "tool", tool: call.name }).pipe(
                    Effect.zipRight(executeToolCall(call, toolMap)),
                    Effect.tap((result) =>
                      Effect.sync(() => {
                        results[i] = result
                      })
                    )
                  ),
                { concurrency: limits.toolConcurrency, discard: true }
              ).pipe(
                Effect.provideService(CurrentRun, current),
                Effect.provideService(SessionStore, store),
                Effect.provideService(HumanWaits, waits),
                Effect.provideService(Interaction, interaction),
                Effect.onInterrupt(() => Effect.ignore(persist))
              )
              yield* persist
            })

          const assistantMessage = (
            text: string,
            reasoning: string,
            calls: ReadonlyArray<AssembledCall>
          ): AssistantMessage => ({
            role: "assistant",
            content: [
              ...(reasoning === "" ? [] : [{ _tag: "reasoning" as const, text: reasoning }]),
              ...(text === "" ? [] : [{ _tag: "text" as const, text }]),
              ...calls.map((call) => ({
                _tag: "tool_call" as const,
                id: call.id,
                name: call.name,
                arguments: call.arguments
              }))
            ]
          })

          const loop: Effect.Effect<LoopResult, RunFailure> = Effect.gen(function* () {
            let recoveries = 0
            let effort = options.effort
            let notices: ReadonlyArray<Message> = []
            for (;;) {
              if (turns >= limits.maxTurns) return { _tag: "TurnsExceeded" } as const
              const history = toRequestMessages(conversation)
              const budget = resolveOutputBudget(limits.maxOutputTokens, options.modelInfo?.maxOutputTokens)
              const request: ModelRequest = {
                model: options.model,
                messages: [...history, ...notices],
                tools: toolSpecs,
                maxOutputTokens: budget.maxOutputTokens,
                ...(options.system === undefined ? {} : { system: options.system }),
                ...(effort === undefined ? {} : { effort })
              }
              const response = yield* streamResponse(request)
              if (response.usage !== undefined) usage = addUsage(usage, response.usage)
              const assembled: ReadonlyArray<AssembledCall> = [...response.calls].map(([id, call]) => ({
                id: id as ToolCallPart["id"],
                ...call
              }))
              const { classification, complete } = response.providerTruncated
                ? {
                    classification: {
                      _tag: "Cut",
                      reason: assembled.length > 0 ? "tool_call_cut" : "empty_response"
                    } as const,
                    complete: assembled.filter((call) => call.ended)
                  }
                : classify(response.finish ?? "other", response.text, assembled)

              if (classification._tag === "Cut") {
                recoveries += 1
                if (recoveries > limits.truncationRecoveries) {
                  return yield* new OutputBudgetExhaustedError({
                    message:
                      `The model ${options.model} ran out of its ${budget.maxOutputTokens}-token output budget ` +
                      `${recoveries} times in a row without a usable response; raise --max-output-tokens or ask for smaller steps.`,
                    truncation: {
                      attempts: recoveries,
                      maxOutputTokens: budget.maxOutputTokens,
                      source: budget.source,
                      model: options.model
                    }
                  })
                }
                const kept = assistantMessage(response.text, response.reasoning, complete)
                if (complete.length > 0)
                  yield* runTools(
                    kept,
                    kept.content.filter((p): p is ToolCallPart => p._tag === "tool_call")
                  )
                else if (response.text.trim() !== "") yield* storeTurn([kept])
                const lowered = lowerEffort(effort)
                effort = lowered ?? effort
                yield* emitter.emit("truncation_recovery", {
                  attempt: recoveries,
                  of: limits.truncationRecoveries,
                  reason: classification.reason,
                  maxOutputTokens: budget.maxOutputTokens,
                  ...(lowered === undefined ? {} : { effort: lowered })
                })
                notices = [continuationNotice(budget.maxOutputTokens)]
                continue
              }

              turns += 1
              notices = []
              yield* emitter.emit("turn_completed", {
                turn: turns,
                durationMs: response.durationMs,
                ...(response.ttftMs === undefined ? {} : { ttftMs: response.ttftMs }),
                ...(response.usage === undefined ? {} : { usage: response.usage }),
                finishReason: response.finish ?? "other"
              })
              const message = assistantMessage(response.text, response.reasoning, complete)
              if (classification._tag === "UsefulText") {
                yield* storeTurn([message])
                yield* emitter.emit("response_truncated", {
                  maxOutputTokens: budget.maxOutputTokens,
                  source: budget.source,
                  model: options.model
                })
                return { _tag: "Completed", text: response.text } as const
              }
              if (complete.length === 0) {
                if (message.content.length > 0) yield* storeTurn([message])
                return { _tag: "Completed", text: response.text } as const
              }
              yield* runTools(
                message,
                message.content.filter((p): p is ToolCallPart => p._tag === "tool_call")
              )
            }
          })

          const execute = Effect.gen(function* () {
            for (const stored of yield* store.messages(session.id)) conversation.push(stored.message)
            const prompt: Message = {
              role: "user",
              content: [
                ...(options.prompt === "" ? [] : [{ _tag: "text" as const, text: options.prompt }]),
                ...(options.attachments ?? [])
              ]
            }
            yield* storeTurn([prompt])
            const open = yield* waits.openBelow(session.id)
            const result = yield* timeoutActive(open, limits.timeoutMs, loop)
            if (Option.isNone(result)) {
              const at = yield* Ref.get(stage)
              return yield* Effect.fail(timeoutError(timeoutInfo("run", limits.timeoutMs ?? 0, at)))
            }
            return result.value
          })

          /** Writes the one terminal event and ends the run's rows, whatever the exit (EV-5, CLI-2). */
          const finalize = (exit: Exit.Exit<LoopResult, RunFailure>) =>
            Effect.gen(function* () {
              yield* FiberMap.clear(children)
              const ending = describeEnd(exit, { turns, usage, maxTurns: limits.maxTurns })
              yield* emitter
                .emit(ending.type, ending.data as never)
                .pipe(Effect.catchAll((error) => Effect.logError("could not store the terminal event", error)))
              const ended =
                store.endRun === undefined
                  ? store.setSessionStatus(session.id, ending.status)
                  : store.endRun(runId, {
                      status: ending.status,
                      usage,
                      ...(ending.error === undefined ? {} : { error: ending.error })
                    })
              yield* Effect.ignoreLogged(ended)
            })

          yield* emitter.emit("run_started", {
            provider: provider.provider,
            model: options.model,
            readOnly,
            ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
            ...(session.parentId === undefined ? {} : { parentSessionId: session.parentId })
          })
          yield* store.setSessionStatus(session.id, "running")
          const exit = yield* Effect.exit(Effect.onExit(restore(execute), finalize))
          const ending = describeEnd(exit, { turns, usage, maxTurns: limits.maxTurns })
          return {
            runId,
            sessionId: session.id,
            status: ending.status,
            text: Exit.isSuccess(exit) && exit.value._tag === "Completed" ? exit.value.text : "",
            usage,
            turns,
            ...(ending.error === undefined ? {} : { error: ending.error }),
            ...(ending.type === "run_failed" ? { failure: ending.data as RunEventDataMap["run_failed"] } : {}),
            existing: false
          } satisfies RunOutcome
        })
      )
    )

  const stream = (options: RunOptions): Stream.Stream<KnownRunEvent, RunStartError> =>
    Stream.unwrapScoped(
      Effect.gen(function* () {
        const runId = options.runId ?? RunId.make(crypto.randomUUID())
        const queue = yield* Queue.unbounded<Exit.Exit<KnownRunEvent, Option.Option<RunStartError>>>()
        const onEvent = (event: KnownRunEvent) =>
          Effect.zipRight(options.onEvent?.(event) ?? Effect.void, Queue.offer(queue, Exit.succeed(event)))
        yield* run({ ...options, runId, onEvent }).pipe(
          Effect.flatMap((outcome) =>
            outcome.existing
              ? Effect.flatMap(store.events(outcome.sessionId, outcome.runId), (stored) =>
                  Queue.offerAll(
                    queue,
                    stored.map((event) => Exit.succeed(event as KnownRunEvent))
                  )
                )
              : Effect.void
          ),
          Effect.matchCauseEffect({
            onFailure: (cause) => Queue.offer(queue, Exit.failCause(Cause.map(cause, Option.some))),
            onSuccess: () => Queue.offer(queue, Exit.fail(Option.none()))
          }),
          Effect.forkScoped
        )
        return Stream.repeatEffectOption(Effect.flatten(Queue.take(queue))).pipe(
          Stream.takeUntil((event) => isTerminalType(event.type) && event.runId === runId)
        )
      })
    )

  return Runner.of({ run, stream })
})

interface Ending {
  readonly type: "run_completed" | "run_failed" | "run_cancelled" | "turns_exceeded"
  readonly data: RunEventDataMap[Ending["type"]]
  readonly status: RunStatus
  readonly error?: string
}

const describeEnd = (
  exit: Exit.Exit<LoopResult, RunFailure>,
  state: { readonly turns: number; readonly usage: Usage; readonly maxTurns: number }
): Ending => {
  if (Exit.isSuccess(exit)) {
    return exit.value._tag === "Completed"
      ? {
          type: "run_completed",
          data: { text: exit.value.text, turns: state.turns, usage: state.usage },
          status: "completed"
        }
      : {
          type: "turns_exceeded",
          data: { maxTurns: state.maxTurns, turns: state.turns },
          status: "turns_exceeded",
          error: `The run reached its limit of ${state.maxTurns} turns.`
        }
  }
  if (Cause.isInterruptedOnly(exit.cause)) {
    return { type: "run_cancelled", data: { reason: "The run was cancelled." }, status: "cancelled" }
  }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    switch (error._tag) {
      case "RunTimeoutError":
        return {
          type: "run_failed",
          data: { code: "timeout", error: error.message, timeout: error.timeout },
          status: "failed",
          error: error.message
        }
      case "OutputBudgetExhaustedError":
        return {
          type: "run_failed",
          data: { code: "output_truncated", error: error.message, truncation: error.truncation },
          status: "failed",
          error: error.message
        }
      case "ProviderError":
        return {
          type: "run_failed",
          data: { code: "provider_error", error: error.message, providerCode: error.code },
          status: "failed",
          error: error.message
        }
      default:
        return {
          type: "run_failed",
          data: { code: "internal", error: error.message },
          status: "failed",
          error: error.message
        }
    }
  }
  const message = `Internal error: ${Cause.pretty(exit.cause).split("\n")[0] ?? "unknown"}`
  return { type: "run_failed", data: { code: "internal", error: message }, status: "failed", error: message }
}

export const layer = Layer.effect(Runner, make)
