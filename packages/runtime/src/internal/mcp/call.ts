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
import { McpCallError } from "./errors.js"
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
const progressLine = (progress: {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}) => {
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
  options: {
    readonly onProgress: (line: string) => Effect.Effect<void>
    readonly timeoutMs: number
  }
): Effect.Effect<ToolResult, ToolError> =>
  Effect.async<ToolResult, ToolError>((resume) => {
    const signal = new CallSignal()
    const progress: Array<string> = []
    let settled: Settled | undefined
    let timedOut = false
    let wake: (() => void) | undefined
    const notify = () => wake?.()
    const deadline = connection.deadlines.add(options.timeoutMs, () => {
      timedOut = true
      notify()
    })

    /** Progress, a failure or the timeout: a loop in this fiber until the call ends. */
    const slowPath = (): Effect.Effect<ToolResult, ToolError> => {
      // Waits for a callback; checks first, so a callback that came meanwhile is never missed.
      const woken = Effect.async<void>((resumeLoop) => {
        if (settled !== undefined || progress.length > 0 || timedOut) return resumeLoop(Effect.void)
        wake = () => {
          wake = undefined
          resumeLoop(Effect.void)
        }
        return Effect.sync(() => {
          wake = undefined
        })
      })
      const loop = Effect.gen(function* () {
        for (;;) {
          // Progress that arrived before the result is shown before the call ends.
          while (progress.length > 0) yield* options.onProgress(progress.shift()!)
          if (settled !== undefined) {
            if (settled.ok) return toToolResult(settled.value as McpCallResult)
            return yield* callFailure(connection, settled.error)
          }
          if (timedOut) {
            signal.abort()
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
            connection.deadlines.remove(deadline)
            if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) signal.abort()
          })
      )
    }

    wake = () => {
      wake = undefined
      const result = settled
      if (result?.ok === true && progress.length === 0) {
        connection.deadlines.remove(deadline)
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
      resume(slowPath())
    }
    connection.client
      .callTool({ name, arguments: args as Record<string, unknown> }, undefined, {
        signal: signal as unknown as AbortSignal,
        timeout: SDK_TIMEOUT_MS,
        onprogress: (update) => {
          progress.push(progressLine(update))
          notify()
        }
      })
      .then(
        (value) => {
          settled = { ok: true, value }
          notify()
        },
        (error: unknown) => {
          settled = { ok: false, error }
          notify()
        }
      )
    // Interrupted before the first callback.
    return Effect.sync(() => {
      wake = undefined
      connection.deadlines.remove(deadline)
      signal.abort()
    })
  })
