// One `tools/call` on a connection, as the model's tool call: its result converted (`results.ts`),
// its failure a ToolError naming the server. This is the path of every MCP tool call, so it is kept
// short: `pnpm bench mcp` measures it against the SDK's client called directly.
import { formatDuration } from "@alisio/domain/Durations"
import { ToolError } from "@alisio/domain/Errors"
import type { ToolResult } from "@alisio/domain/Tool"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { type Connection, errorCode, messageOf, SDK_TIMEOUT_MS } from "./connection.js"
import type { Deadline } from "./deadlines.js"
import { McpCallError } from "./errors.js"
import type { ProgressUpdate } from "./progress.js"
import { type McpCallResult, toToolResult } from "./results.js"

/**
 * The abort signal of one request, as much of an AbortSignal as the SDK's `request` reads
 * (`aborted`, `reason`, `throwIfAborted`, an "abort" listener): Node's AbortController cost a call
 * about 1.3 KB of garbage and a tenth of the SDK's own CPU. Aborting it makes the SDK send the
 * server `notifications/cancelled` (McpRun and McpHttp tests check it still does).
 */
class CallSignal {
  aborted = false
  reason: unknown = undefined
  private listeners: Array<() => void> = []

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  addEventListener(type: string, listener: () => void): void {
    if (type === "abort") this.listeners.push(listener)
  }

  removeEventListener(type: string, listener: () => void): void {
    if (type === "abort") this.listeners = this.listeners.filter((each) => each !== listener)
  }

  abort(): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = new DOMException("This operation was aborted", "AbortError")
    for (const listener of this.listeners) listener()
  }
}

/** A call's progress as one line: `[3/10] copying files`. */
const progressLine = (progress: ProgressUpdate) => {
  const count = progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`
  return progress.message === undefined || progress.message === "" ? `[${count}]` : `[${count}] ${progress.message}`
}

/** Why a call got no result, as McpCallError says it. */
const callFailure = (connection: Connection, error: unknown) =>
  Effect.gen(function* () {
    const code = errorCode(error)
    if (code === -32000 || (yield* Deferred.isDone(connection.closed))) {
      const why = yield* connection.whyClosed
      return yield* new McpCallError({ message: `went away during the call (${why})`, closed: true })
    }
    const text = messageOf(error).replace(/^MCP error -?\d+: /, "")
    const message = typeof code === "number" ? `refused the call: ${text}` : `failed the call: ${text}`
    return yield* new McpCallError({ message, closed: false })
  })

type Settled = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }

interface CallOptions {
  readonly onProgress: (line: string) => Effect.Effect<void>
  readonly timeoutMs: number
}

/** What one call has heard so far, noted by the SDK's callbacks and read by the fiber. */
interface CallState {
  readonly signal: CallSignal
  readonly progress: Array<string>
  settled: Settled | undefined
  timedOut: boolean
  /** Resumes the waiting fiber, once; undefined while nothing waits. */
  wake: (() => void) | undefined
  deadline: Deadline | undefined
  /** The request's progress token, routed to this call until it ends (`progress.ts`). */
  token: string | undefined
}

const notify = (state: CallState) => state.wake?.()

/** The call is over: its timeout and its progress route are let go. */
const release = (connection: Connection, state: CallState) => {
  if (state.deadline !== undefined) connection.deadlines.remove(state.deadline)
  if (state.token !== undefined) connection.progress.remove(state.token)
}

/**
 * Progress, a failure or the timeout: a loop in the call's fiber until the call ends. It is a
 * function of the module, not a closure of each call: a closure of this size made per call, even
 * never called, made V8's young generation promote about 3 MB per scavenge and the scavenges 20 to
 * 50 times longer (`pnpm bench mcp`, the MCP section of bench/README.md).
 */
const slowPath = (
  connection: Connection,
  options: CallOptions,
  state: CallState
): Effect.Effect<ToolResult, ToolError> => {
  // Waits for a callback; checks first, so a callback that came meanwhile is never missed.
  const woken = Effect.async<void>((resumeLoop) => {
    if (state.settled !== undefined || state.progress.length > 0 || state.timedOut) return resumeLoop(Effect.void)
    state.wake = () => {
      state.wake = undefined
      resumeLoop(Effect.void)
    }
    return Effect.sync(() => {
      state.wake = undefined
    })
  })
  const loop = Effect.gen(function* () {
    for (;;) {
      // Progress that arrived before the result is shown before the call ends.
      while (state.progress.length > 0) yield* options.onProgress(state.progress.shift()!)
      const settled = state.settled
      if (settled !== undefined) {
        if (settled.ok) return toToolResult(settled.value as McpCallResult)
        return yield* callFailure(connection, settled.error)
      }
      if (state.timedOut) {
        state.signal.abort()
        return yield* new McpCallError({
          message: `did not answer within ${formatDuration(options.timeoutMs)}; the call was cancelled`,
          closed: false
        })
      }
      yield* woken
    }
  })
  return Effect.onExit(
    Effect.mapError(
      loop,
      (error) => new ToolError({ message: `The MCP server ${connection.server} ${error.message}` })
    ),
    (exit) =>
      Effect.sync(() => {
        release(connection, state)
        if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) state.signal.abort()
      })
  )
}

/**
 * Calls a tool. Interrupting the call (the run cancelled) aborts the request, which sends the
 * server `notifications/cancelled`, and stops waiting at once; so does the call's timeout, on the
 * connection's clock (`deadlines.ts`). Progress the server reports goes to `onProgress` as it
 * arrives, in order, from this same fiber: the SDK's callbacks only note what happened and wake it.
 * (A relay fiber reading a queue cost a call about 1 ms of CPU: `pnpm bench mcp`.)
 *
 * The common call, a result with no progress before it, is one wait: the request starts when the
 * fiber suspends and its result resumes it. Progress, a failure or the timeout go on in a loop.
 */
export const callTool = (
  connection: Connection,
  name: string,
  args: unknown,
  options: CallOptions
): Effect.Effect<ToolResult, ToolError> =>
  Effect.async<ToolResult, ToolError>((resume) => {
    const state: CallState = {
      signal: new CallSignal(),
      progress: [],
      settled: undefined,
      timedOut: false,
      wake: undefined,
      deadline: undefined,
      token: undefined
    }
    state.deadline = connection.deadlines.add(options.timeoutMs, () => {
      state.timedOut = true
      notify(state)
    })
    state.wake = () => {
      state.wake = undefined
      const result = state.settled
      if (result?.ok === true && state.progress.length === 0) {
        release(connection, state)
        let converted: ToolResult
        try {
          converted = toToolResult(result.value as McpCallResult)
        } catch (defect) {
          resume(Effect.die(defect))
          return
        }
        resume(Effect.succeed(converted))
        return
      }
      resume(slowPath(connection, options, state))
    }
    state.token = connection.progress.add((update) => {
      state.progress.push(progressLine(update))
      notify(state)
    })
    connection.client
      .callTool(
        { name, arguments: args as Record<string, unknown>, _meta: { progressToken: state.token } },
        undefined,
        { signal: state.signal as unknown as AbortSignal, timeout: SDK_TIMEOUT_MS }
      )
      .then(
        (value) => {
          state.settled = { ok: true, value }
          notify(state)
        },
        (error: unknown) => {
          state.settled = { ok: false, error }
          notify(state)
        }
      )
    // Interrupted before the first callback.
    return Effect.sync(() => {
      state.wake = undefined
      release(connection, state)
      state.signal.abort()
    })
  })
