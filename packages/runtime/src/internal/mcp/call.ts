// One `tools/call` on a connection, as the model's tool call: its result converted (`results.ts`),
// its failure a ToolError naming the server. This is the path of every MCP tool call, so it is kept
// short: `pnpm bench mcp` measures it against the SDK's client called directly.
import { formatDuration } from "@alisio/domain/Durations"
import { ToolError } from "@alisio/domain/Errors"
import type { ToolContext, ToolResult } from "@alisio/domain/Tool"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { boundedMessage } from "../resultBounds.js"
import { UNREADABLE } from "./answers.js"
import { type Connection, errorCode, messageOf, SDK_TIMEOUT_MS } from "./connection.js"
import { Deadline } from "./deadlines.js"
import { McpCallError } from "./errors.js"
import { type ProgressRoute, type ProgressUpdate, progressToken } from "./progress.js"
import { type McpCallResult, toToolResult } from "./results.js"
import { type CallToolResultSchema, ResultSchema } from "./thirdParty.js"

/**
 * A call's progress as one line, `[3/10] copying files\n`: progress is streamed as output, and
 * surfaces print it as it comes (without the newline, headless runs printed every step on one line).
 */
const progressLine = (progress: ProgressUpdate) => {
  const count = progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`
  const message = typeof progress.message === "string" ? progress.message.replace(/[\r\n]+/g, " ").trim() : ""
  return message === "" ? `[${count}]\n` : `[${count}] ${message}\n`
}

/** Why a call got no result, as McpCallError says it. */
const callFailure = (connection: Connection, error: unknown) =>
  Effect.gen(function* () {
    const code = errorCode(error)
    // The SDK rejects a request with -32000 when the connection closed; a server may answer with
    // that code too (the first of JSON-RPC's server errors), and then it is still there.
    if (yield* Deferred.isDone(connection.closed)) {
      const why = yield* connection.whyClosed
      return yield* new McpCallError({ message: `went away during the call (${why})`, closed: true })
    }
    const text = boundedMessage(messageOf(error).replace(/^MCP error -?\d+: /, ""))
    const refused = typeof code === "number" && (error as { readonly data?: unknown }).data !== UNREADABLE
    const message = refused ? `refused the call: ${text}` : `failed the call: ${text}`
    return yield* new McpCallError({ message, closed: false })
  })

const PENDING = 0
const SUCCEEDED = 1
const FAILED = 2

/**
 * One call under way, as one object that the SDK, the connection's deadlines (`deadlines.ts`) and
 * its progress routes (`progress.ts`) call back: the request's abort signal, its deadline, its
 * progress route, and what those callbacks noted for the fiber to read. Its methods are the
 * callbacks: a state object, a signal, a deadline entry, a settled record and six closures made
 * per call were garbage on the path of every call (bench/README.md, MCP).
 *
 * As a signal it is as much of an AbortSignal as the SDK's `request` reads (`aborted`, `reason`,
 * `throwIfAborted`, an "abort" listener): Node's AbortController cost a call about 1.3 KB of garbage
 * and a tenth of the SDK's own CPU. Aborting it makes the SDK send the server
 * `notifications/cancelled` (McpRun and McpHttp tests check it still does).
 */
class Call extends Deadline implements ProgressRoute {
  aborted = false
  reason: unknown = undefined
  private listeners: Array<() => void> | undefined = undefined
  outcome = PENDING
  /** The result once the call SUCCEEDED, the error once it FAILED. */
  settled: unknown = undefined
  /** Progress not shown yet, as lines; made with the first. */
  progress: Array<string> | undefined = undefined
  timedOut = false
  // Its progress route (`progress.ts`).
  routeId = 0
  previousRoute: ProgressRoute | undefined = undefined
  nextRoute: ProgressRoute | undefined = undefined
  /** Resumes the fiber waiting for the call's first news, once; then undefined. */
  resumeCall: ((effect: Effect.Effect<ToolResult, ToolError>) => void) | undefined = undefined
  /** Resumes the slow path's loop while it waits for more news; undefined otherwise. */
  resumeLoop: ((effect: Effect.Effect<void>) => void) | undefined = undefined

  constructor(
    readonly connection: Connection,
    readonly onProgress: (line: string) => Effect.Effect<void>,
    readonly timeoutMs: number
  ) {
    super()
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  addEventListener(type: string, listener: () => void): void {
    if (type !== "abort") return
    if (this.listeners === undefined) this.listeners = [listener]
    else this.listeners.push(listener)
  }

  removeEventListener(type: string, listener: () => void): void {
    if (type === "abort") this.listeners = this.listeners?.filter((each) => each !== listener)
  }

  abort(): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = new DOMException("This operation was aborted", "AbortError")
    for (const listener of this.listeners ?? []) listener()
  }

  expire(): void {
    this.timedOut = true
    this.notify()
  }

  progressed(update: ProgressUpdate): void {
    if (this.progress === undefined) this.progress = [progressLine(update)]
    else this.progress.push(progressLine(update))
    this.notify()
  }

  hasNews(): boolean {
    return this.outcome !== PENDING || this.timedOut || (this.progress !== undefined && this.progress.length > 0)
  }

  /** The fiber waits for the first news (resumed at once if some came already). */
  wait(resume: (effect: Effect.Effect<ToolResult, ToolError>) => void): void {
    this.resumeCall = resume
    // `hasNews` spelled out, as the request's callbacks below are: see `request`.
    if (this.outcome !== PENDING || this.timedOut || (this.progress !== undefined && this.progress.length > 0)) {
      this.notify()
    }
  }

  /**
   * Wakes the fiber if it waits. The common call, a result with no progress before it, resumes the
   * first wait with the converted result; anything else goes on in the slow path's loop.
   */
  notify(): void {
    const loop = this.resumeLoop
    if (loop !== undefined) {
      this.resumeLoop = undefined
      return loop(Effect.void)
    }
    const resume = this.resumeCall
    if (resume === undefined) return
    this.resumeCall = undefined
    if (this.outcome === SUCCEEDED && this.progress === undefined) {
      this.release()
      let converted: ToolResult
      try {
        converted = toToolResult(this.settled as McpCallResult)
      } catch (defect) {
        return resume(Effect.die(defect))
      }
      return resume(Effect.succeed(converted))
    }
    resume(slowPath(this))
  }

  /** The call is over: its deadline and its progress route are let go. */
  release(): void {
    this.connection.deadlines.remove(this)
    this.connection.progress.remove(this)
  }

  /** The fiber was interrupted: stop waiting, and abort the request. */
  interrupted(): void {
    this.resumeCall = undefined
    this.resumeLoop = undefined
    this.release()
    this.abort()
  }
}

/**
 * Progress, a failure or the timeout: a loop in the call's fiber until the call ends. It is a
 * function of the module, not a closure of each call: a closure of this size made per call, even
 * never called, made V8's young generation promote about 3 MB per scavenge and the scavenges 20 to
 * 50 times longer (`pnpm bench mcp`, the MCP section of bench/README.md).
 */
const slowPath = (call: Call): Effect.Effect<ToolResult, ToolError> => {
  // Waits for a callback; checks first, so a callback that came meanwhile is never missed.
  const woken = Effect.async<void>((resume) => {
    if (call.hasNews()) return resume(Effect.void)
    call.resumeLoop = resume
    return Effect.sync(() => {
      call.resumeLoop = undefined
    })
  })
  const loop = Effect.gen(function* () {
    for (;;) {
      // Progress that arrived before the result is shown before the call ends.
      const progress = call.progress
      while (progress !== undefined && progress.length > 0) yield* call.onProgress(progress.shift()!)
      if (call.outcome === SUCCEEDED) return toToolResult(call.settled as McpCallResult)
      if (call.outcome === FAILED) return yield* callFailure(call.connection, call.settled)
      if (call.timedOut) {
        call.abort()
        return yield* new McpCallError({
          message: `did not answer within ${formatDuration(call.timeoutMs)}; the call was cancelled`,
          closed: false
        })
      }
      yield* woken
    }
  })
  return Effect.onExit(
    Effect.mapError(
      loop,
      (error) => new ToolError({ message: `The MCP server ${call.connection.server} ${error.message}` })
    ),
    (exit) =>
      Effect.sync(() => {
        call.release()
        if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) call.abort()
      })
  )
}

/** A server's side of its tools' calls (`server.ts`), made once per server. */
export interface ToolServer {
  /** The connection to call on at once when it is live: the common call takes no lock. */
  readonly live: () => Connection | undefined
  /** A connection once the server started (again), under the server's lock. */
  readonly connection: Effect.Effect<Connection, ToolError>
  readonly timeoutMs: number
}

/** What a tool checks before its call (`toolAdapter.ts`): why the call is refused, or undefined. */
export type Refusal = (args: unknown) => ToolError | undefined

type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** The fiber was interrupted while it waited: the request is aborted. */
const onFailure = (call: Call, cause: Cause.Cause<ToolError>): Effect.Effect<never, ToolError> => {
  if (Cause.isInterruptedOnly(cause)) call.interrupted()
  return Effect.failCause(cause)
}

/**
 * Sends the request (in the caller's uninterruptible region) and waits for it (interruptibly). The
 * callbacks note the outcome themselves rather than through a one-line method: V8 optimizes a
 * function called once per call after a few thousand calls, sooner the more it does itself, and a
 * one-line callback was still being compiled (with everything it inlines, ~20 ms) inside the
 * measured calls of `pnpm bench mcp` (bench/README.md, MCP).
 */
const request = (
  connection: Connection,
  name: string,
  args: unknown,
  onProgress: (line: string) => Effect.Effect<void>,
  timeoutMs: number,
  restore: Restore
): Effect.Effect<ToolResult, ToolError> => {
  const call = new Call(connection, onProgress, timeoutMs)
  connection.deadlines.add(call, timeoutMs)
  connection.progress.add(call)
  connection.client
    .callTool(
      { name, arguments: args as Record<string, unknown>, _meta: { progressToken: progressToken(call) } },
      // The loosest schema: the result is checked block by block as it is converted (`results.ts`).
      ResultSchema as unknown as typeof CallToolResultSchema,
      { signal: call as unknown as AbortSignal, timeout: SDK_TIMEOUT_MS }
    )
    .then(
      (value) => {
        call.outcome = SUCCEEDED
        call.settled = value
        call.notify()
      },
      (error: unknown) => {
        call.outcome = FAILED
        call.settled = error
        call.notify()
      }
    )
  return Effect.matchCauseEffect(restore(Effect.async<ToolResult, ToolError>((resume) => call.wait(resume))), {
    onFailure: (cause) => onFailure(call, cause),
    onSuccess: Effect.succeed
  })
}

/**
 * Calls a tool of a server, as the tool's Effect runs: its arguments checked first (`refuse`), on
 * the live connection, or once the server started (again). Interrupting the call (the run
 * cancelled) aborts the request, which sends the server `notifications/cancelled`, and stops
 * waiting at once; so does the call's timeout, on the connection's clock (`deadlines.ts`).
 * Progress the server reports goes to the context's `progress` as it arrives, in order, from this
 * same fiber: the SDK's callbacks only note what happened and wake it. (A relay fiber reading a
 * queue cost a call about 1 ms of CPU: `pnpm bench mcp`.)
 *
 * The common call, a result with no progress before it, is one wait: the request starts, the fiber
 * suspends, and the result resumes it. Progress, a failure or the timeout go on in a loop. The
 * request starts in an uninterruptible region whose handler aborts it if the wait is interrupted:
 * what `Effect.async` with a canceler inside `Effect.suspend` does, in fewer steps of the fiber and
 * less garbage (bench/README.md, MCP).
 */
export const callTool = (
  server: ToolServer,
  name: string,
  args: unknown,
  context: ToolContext,
  refuse: Refusal
): Effect.Effect<ToolResult, ToolError> =>
  Effect.uninterruptibleMask((restore) => {
    const refused = refuse(args)
    if (refused !== undefined) return refused
    const connection = server.live()
    if (connection !== undefined) return request(connection, name, args, context.progress, server.timeoutMs, restore)
    return restore(
      Effect.flatMap(server.connection, (started) =>
        Effect.uninterruptibleMask((restoreAgain) =>
          request(started, name, args, context.progress, server.timeoutMs, restoreAgain)
        )
      )
    )
  })
