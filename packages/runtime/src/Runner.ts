import { randomUUID } from "node:crypto"
import type { PromptTooLargeError, SessionLockedError, SessionNotFoundError, StoreError } from "@alisio/domain/Errors"
import { RunId, type SessionId } from "@alisio/domain/Ids"
import {
  LanguageModel,
  type LanguageModelService,
  type ModelInfo,
  type ReasoningEffort
} from "@alisio/domain/LanguageModel"
import { type Limits, resolveLimits } from "@alisio/domain/Limits"
import type { ImagePart, Message, TextPart } from "@alisio/domain/Message"
import { isTerminalType, type KnownRunEvent, type RunEventDataMap, type RunStatus } from "@alisio/domain/RunEvent"
import type { Tool, ToolSpec } from "@alisio/domain/Tool"
import { emptyUsage, type Usage } from "@alisio/domain/Usage"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { timeoutActive } from "./ActiveClock.js"
import { CompactionHooks } from "./Compaction.js"
import { CurrentRun } from "./CurrentRun.js"
import { HumanWaits } from "./HumanWaits.js"
import { Interaction } from "./Interaction.js"
import { makeContextState } from "./internal/compaction/inRun.js"
import { applyLeftOut, promptTooLarge, readLeftOut, windowKnown } from "./internal/compaction/oversized.js"
import { describeEnd, finalize } from "./internal/runEnding.js"
import { type RunState, storeTurn, timeoutError } from "./internal/runState.js"
import { type LoopResult, type RunFailure, type RunTools, turnLoop } from "./internal/turnLoop.js"
import { McpServers } from "./McpServers.js"
import { currentOwner } from "./ProcessOwner.js"
import { RunEvents } from "./RunEvents.js"
import { SessionNotices } from "./SessionNotices.js"
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
  /** Parts sent after the prompt's text in the user's message (images, resources it mentions). */
  readonly attachments?: ReadonlyArray<TextPart | ImagePart>
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
  /** Set by child sessions: the path of labels that names this run in approvals ("general › explore"). */
  readonly label?: string | undefined
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
export type RunStartError = SessionNotFoundError | SessionLockedError | StoreError | PromptTooLargeError

/** The specs of the tools a run offers: those allowed, and in read-only mode those allowed there. */
const offeredSpecs = (
  registered: ReadonlyArray<Tool>,
  allowed: ReadonlySet<string> | undefined,
  readOnly: boolean
): ReadonlyArray<ToolSpec> =>
  registered
    .filter((tool) => (allowed?.has(tool.name) ?? true) && (!readOnly || allowedInReadOnly(tool.effect)))
    .map(({ description, name, parameters }) => ({ name, description, parameters }))

/** How many events `Runner.stream` holds for a slow consumer before the run waits for it. */
export const streamBuffer = 1024

/**
 * The agent loop (EV-1…EV-5, LIM-1…LIM-8, CTX-1). A run is one fiber; interrupting it cancels the
 * run. The steps live in `internal/`: `streamResponse` (a request, LIM-4), `turnLoop` (turns,
 * LIM-5…8, tools), `history` (stored messages → a request's), `compaction/inRun` (the context
 * window, CTX-1), `truncation` (LIM-6, LIM-7), `runEnding` (the terminal event, EV-5).
 */
export class Runner extends Context.Tag("@alisio/runtime/Runner")<
  Runner,
  {
    readonly run: (options: RunOptions) => Effect.Effect<RunOutcome, RunStartError>
    /** The run's events as a stream, ending with its terminal event; the run starts when pulled. */
    readonly stream: (options: RunOptions) => Stream.Stream<KnownRunEvent, RunStartError>
  }
>() {}

export const make = Effect.gen(function* () {
  const store = yield* SessionStore
  const events = yield* RunEvents
  const waits = yield* HumanWaits
  const interaction = yield* Interaction
  const registry = yield* Tools
  const defaultProvider = yield* Effect.serviceOption(LanguageModel)
  const notices = Option.getOrUndefined(yield* Effect.serviceOption(SessionNotices))
  const compactionHooks = Option.getOrUndefined(yield* Effect.serviceOption(CompactionHooks))

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

  // Setting a run up is uninterruptible and only the loop is interruptible (whatever the caller's
  // flags: a child's fiber starts uninterruptible so that its spawn can always settle it): an
  // interruption that arrives while the run starts (a child aborted right after its spawn) still
  // ends it through `finalize`, with its rows and its one terminal event, instead of leaving it
  // queued. Once `beginRun` recorded the run, every failure (even storing `run_started`) ends there too.
  const run = (options: RunOptions): Effect.Effect<RunOutcome, RunStartError> =>
    Effect.scoped(
      Effect.uninterruptible(
        Effect.gen(function* () {
          const provider = options.provider ?? Option.getOrUndefined(defaultProvider)
          if (provider === undefined)
            return yield* Effect.dieMessage("Runner: no provider given and no LanguageModel in context")
          const allowed = options.tools === undefined ? undefined : new Set(options.tools)
          const readOnly = options.readOnly === true
          const limits = resolveLimits(options.limits)
          const learnedWindow =
            provider.learnedWindows === undefined ? undefined : yield* provider.learnedWindows.read(options.model)
          const prompt: Message = {
            role: "user",
            content: [
              ...(options.prompt === "" ? [] : [{ _tag: "text" as const, text: options.prompt }]),
              ...(options.attachments ?? [])
            ]
          }
          const resumed = options.sessionId === undefined ? undefined : yield* store.session(options.sessionId)
          // A repeated request replays its run (ST-3), whatever is known of the window since.
          if (resumed !== undefined && options.requestId !== undefined && store.runByRequest !== undefined) {
            const earlier = yield* store.runByRequest(resumed.id, options.requestId)
            if (Option.isSome(earlier)) return existingOutcome(earlier.value)
          }
          // A prompt that can never fit the model's known window is refused before anything is
          // stored (CTX-1, CLI-1), the MCP tools counted: a run started at the top waits for its
          // servers here (it would before its first request anyway), and may be cancelled while it
          // does: the prompt is then stored and the run ends cancelled (CLI-2), as it would a moment
          // later; a child's servers run already, in its parent's run.
          const mcp = Option.getOrUndefined(yield* Effect.serviceOption(McpServers))
          const countsMcp =
            mcp !== undefined &&
            (options.depth ?? 0) === 0 &&
            windowKnown({ limits, modelInfo: options.modelInfo, learnedWindow }) &&
            (allowed === undefined || [...allowed].some((name) => name.startsWith("mcp__")))
          const waited = countsMcp ? yield* Effect.exit(Effect.interruptible(mcp.ready)) : Exit.void
          const tooLarge = promptTooLarge({
            model: options.model,
            modelInfo: options.modelInfo,
            limits,
            learnedWindow,
            system: options.system,
            tools: offeredSpecs(yield* registry.all, allowed, readOnly),
            prompt
          })
          if (tooLarge !== undefined) return yield* tooLarge
          const session =
            resumed ??
            (yield* store.createSession({
              cwd: options.cwd,
              status: "queued",
              ...(options.parentSessionId === undefined ? {} : { parentId: options.parentSessionId }),
              ...(options.title === undefined ? {} : { title: options.title })
            }))
          const owner = currentOwner
          // A child session is created and run by this process alone, inside its parent's run (which
          // holds the tree's root lock); locking it too would only add writes to every spawn and cancel.
          if ((options.depth ?? 0) === 0) yield* store.lockSession(session.id, owner)
          const runId = options.runId ?? RunId.make(randomUUID())
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

          // A child's waits pause its ancestors while it runs inside them; a child session resumed
          // on its own (depth 0) has no running parent to pause.
          const open = yield* waits.track(session.id, (options.depth ?? 0) > 0 ? session.parentId : undefined)
          const emitter = yield* events.emitter(
            { runId, sessionId: session.id, correlationId: options.correlationId },
            options.onEvent
          )
          const children = yield* FiberMap.make<string, unknown, unknown>()
          const registering = yield* Effect.makeSemaphore(1)
          const endingStarted = yield* Deferred.make<void>()
          // Tools are read again before every turn: MCP servers start when a run first needs
          // tools, and a server may change its list between turns (MCP-1). The MCP service is
          // built over the runtime (as the plugin host is), so it is found in the run's context.
          const reported = new Set<number>()
          const currentTools: Effect.Effect<RunTools> = Effect.gen(function* () {
            if (mcp !== undefined) {
              yield* mcp.ready
              for (const failure of yield* mcp.failures) {
                if (reported.has(failure.seq)) continue
                reported.add(failure.seq)
                const { seq: _, ...data } = failure
                yield* Effect.ignore(emitter.emit("mcp_server_failed", data))
              }
            }
            const registered = yield* registry.all
            const toolMap = new Map(
              registered.filter((tool) => allowed?.has(tool.name) ?? true).map((tool) => [tool.name, tool])
            )
            const offered = [...toolMap.values()].filter((tool) => !readOnly || allowedInReadOnly(tool.effect))
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
              approvals: { ...defaultApprovals, ...options.approvals },
              limits,
              events: emitter,
              children,
              ...(options.label === undefined ? {} : { label: options.label }),
              whileRunning: (register) =>
                registering.withPermits(1)(
                  Effect.flatMap(Deferred.isDone(endingStarted), (ended) =>
                    ended ? Effect.succeedNone : Effect.asSome(register)
                  )
                )
            })
            return {
              specs: offered.map(({ description, name, parameters }) => ({ name, description, parameters })),
              byName: toolMap,
              provide: (effect) =>
                effect.pipe(
                  Effect.provideService(CurrentRun, current),
                  Effect.provideService(SessionStore, store),
                  Effect.provideService(HumanWaits, waits),
                  Effect.provideService(Interaction, interaction)
                )
            }
          })
          const state: RunState = {
            options,
            runId,
            sessionId: session.id,
            provider,
            limits,
            store,
            emitter,
            notices,
            conversation: [],
            context: makeContextState({
              limits,
              modelInfo: options.modelInfo,
              learnedWindow,
              compaction: undefined,
              hooks: compactionHooks
            }),
            stage: { stage: "model_request" },
            turns: 0,
            usage: emptyUsage,
            requests: 0,
            attempts: 0
          }
          const start = Effect.gen(function* () {
            yield* emitter.emit("run_started", {
              provider: provider.provider,
              model: options.model,
              readOnly,
              ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
              ...(session.parentId === undefined ? {} : { parentSessionId: session.parentId })
            })
            yield* store.setSessionStatus(session.id, "running")
          })

          const execute: Effect.Effect<LoopResult, RunFailure> = Effect.gen(function* () {
            // A compacted session is read from its summary on: the older messages are never sent.
            if (store.compactions !== undefined) {
              const latest = yield* store.compactions.latest(session.id)
              if (Option.isSome(latest)) state.context.compaction = latest.value
            }
            const after = state.context.compaction?.lastPosition
            const stored = (yield* store.messages(session.id, { afterPosition: after })).map(
              ({ message, position }) => ({ position, message })
            )
            // Messages too large for the window are sent as a note of their size (CTX-1).
            const leftOut = yield* readLeftOut(store, session.id)
            state.conversation.push(...applyLeftOut(stored, leftOut, state.context.window))
            yield* storeTurn(state, [prompt])
            const result = yield* timeoutActive(open, limits.timeoutMs, turnLoop(state, currentTools))
            if (Option.isNone(result)) {
              return yield* timeoutError(state, "run", limits.timeoutMs ?? 0, state.stage)
            }
            return result.value
          })

          const stopped = Exit.isFailure(waited)
            ? Effect.zipRight(storeTurn(state, [prompt]), Effect.failCause(waited.cause))
            : undefined
          const exit = yield* Effect.exit(
            Effect.onExit(Effect.zipRight(start, stopped ?? Effect.interruptible(execute)), (exit) =>
              Effect.zipRight(
                registering.withPermits(1)(Deferred.succeed(endingStarted, undefined)),
                finalize(state, children, exit)
              )
            )
          )
          const ending = describeEnd(exit, { turns: state.turns, usage: state.usage, maxTurns: limits.maxTurns })
          return {
            runId,
            sessionId: session.id,
            status: ending.status,
            text: Exit.isSuccess(exit) && exit.value._tag === "Completed" ? exit.value.text : "",
            usage: state.usage,
            turns: state.turns,
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
        const runId = options.runId ?? RunId.make(randomUUID())
        const queue = yield* Queue.bounded<Exit.Exit<KnownRunEvent, Option.Option<RunStartError>>>(streamBuffer)
        // Offered from inside the emitter (uninterruptible): once the queue is shut down, an offer
        // ends with an interruption that must not fail the run's emit.
        const offer = (item: Exit.Exit<KnownRunEvent, Option.Option<RunStartError>>) =>
          Effect.catchAllCause(Queue.offer(queue, item), () => Effect.void)
        const onEvent = (event: KnownRunEvent) =>
          Effect.zipRight(options.onEvent?.(event) ?? Effect.void, offer(Exit.succeed(event)))
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
            onFailure: (cause) => offer(Exit.failCause(Cause.map(cause, Option.some))),
            onSuccess: () => offer(Exit.fail(Option.none()))
          }),
          Effect.forkScoped
        )
        // Finalizers run last-added first: the queue is shut down before the run's fiber is
        // interrupted, so a run waiting on a consumer that went away is released.
        yield* Effect.addFinalizer(() => Queue.shutdown(queue))
        return Stream.repeatEffectOption(Effect.flatten(Queue.take(queue))).pipe(
          Stream.takeUntil((event) => isTerminalType(event.type) && event.runId === runId)
        )
      })
    )

  return Runner.of({ run, stream })
})

export const layer = Layer.effect(Runner, make)
