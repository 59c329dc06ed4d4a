// One model request, streamed (LIM-4, EV-4): the first-token watchdog and its resends, the
// provider's own retries reported as `request_retry`, the idle stall, what counts as progress,
// and truncation the provider reports itself (LIM-6).
import { ProviderError, type RunTimeoutError, type StoreError } from "@alisio/domain/Errors"
import type { ModelRequest, ResponsePart, Retrying } from "@alisio/domain/LanguageModel"
import type { Usage } from "@alisio/domain/Usage"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import type { StreamDelta } from "../RunEvents.js"
import { assistantMessage, type RunState, storeTurn, timeoutError } from "./runState.js"
import { isLegacyTruncationText } from "./truncation.js"

/** Nothing came within the first-token timeout: resend (LIM-4). */
class FirstTokenSilence extends Data.TaggedError("FirstTokenSilence") {}

/** The response went silent after it started: never resent. */
class StreamIdle extends Data.TaggedError("StreamIdle") {}

/** A response as assembled from its parts. */
export interface StreamedResponse {
  text: string
  reasoning: string
  readonly calls: Map<string, { name: string; arguments: string; ended: boolean }>
  finish: string | undefined
  usage: Usage | undefined
  /** To the first part with content (EV-4); absent when nothing was streamed. */
  ttftMs: number | undefined
  durationMs: number
  /** The provider reported the response cut (`OutputTruncatedError`, `output_truncated`, legacy text). */
  providerTruncated: boolean
}

/**
 * Whether a part is progress: it counts as the first token and resets the idle clock. Only real
 * content is (text, reasoning, a tool call's name or argument text, the finish), so a server that
 * sends empty deltas still times out.
 */
const isProgress = (part: ResponsePart): boolean => {
  switch (part._tag) {
    case "TextDelta":
    case "ReasoningDelta":
      return part.text !== ""
    case "ToolCallDelta":
      return part.argumentsDelta !== ""
    case "ToolCallStart":
    case "Finish":
      return true
    case "ToolCallEnd":
    case "Retrying":
      return false
  }
}

const newResponse = (): StreamedResponse => ({
  text: "",
  reasoning: "",
  calls: new Map(),
  finish: undefined,
  usage: undefined,
  ttftMs: undefined,
  durationMs: 0,
  providerTruncated: false
})

/**
 * A response that ends its run before it finished (cancelled, CLI-2; gone silent, LIM-4; broken off
 * by the provider or the network) keeps the text that had arrived: nothing lost. It is stored as
 * the turn's assistant message with its reasoning, so a resumed session knows what the model had
 * said. Its tool calls are left out: they may be half-written, and every stored call has a result.
 */
const keepPartialAnswer = (state: RunState, response: StreamedResponse, keep: boolean) =>
  Effect.suspend(() =>
    !keep || response.text.trim() === ""
      ? Effect.void
      : Effect.ignore(storeTurn(state, [assistantMessage(response.text, response.reasoning, [])]))
  )

/** Streams one response, resending a request that stays silent (LIM-4), failing a stalled one. */
export const streamResponse = (
  state: RunState,
  request: ModelRequest,
  options: {
    /** A summary request's text is no answer of the run: nothing of it is stored when it breaks off (CTX-1). */
    readonly keepPartial?: boolean
  } = {}
): Effect.Effect<StreamedResponse, RunTimeoutError | ProviderError | StoreError> =>
  Effect.gen(function* () {
    const { emitter, limits, provider } = state
    state.requests += 1
    state.attempts = 0
    for (;;) {
      state.attempts += 1
      state.stage = { stage: "model_request" }
      const response = newResponse()
      const sentAt = yield* Clock.currentTimeMillis
      /** Takes one part into the response; its text or reasoning, if any, goes to `deltas`. */
      const onPart = (part: ResponsePart, deltas: Array<StreamDelta>): void => {
        switch (part._tag) {
          case "TextDelta":
            response.text += part.text
            if (part.text !== "") deltas.push(part)
            return
          case "ReasoningDelta":
            response.reasoning += part.text
            if (part.text !== "") deltas.push(part)
            return
          case "ToolCallStart":
            if (!response.calls.has(part.id))
              response.calls.set(part.id, { name: part.name, arguments: "", ended: false })
            return
          case "ToolCallDelta": {
            const call = response.calls.get(part.id)
            if (call !== undefined) call.arguments += part.argumentsDelta
            return
          }
          case "ToolCallEnd": {
            const call = response.calls.get(part.id)
            if (call !== undefined) call.ended = true
            return
          }
          case "Finish":
            response.finish = part.reason
            if (part.usage !== undefined) response.usage = part.usage
            return
          case "Retrying":
            return
        }
      }
      let firstPartAt: number | undefined
      let lastPartAt = 0
      // Silence is counted from the send, or from the resend a provider's own retry announced.
      let silentSince = sentAt
      let partArrived = false
      /**
       * The provider retries a transient failure itself (429, 5xx) and says so: the run reports it
       * as `request_retry`, and the server's wait is not silence. A retry after a part would
       * repeat it, so it ends the response instead (LIM-4: retries only before anything arrived).
       */
      const onRetrying = (part: Retrying) =>
        Effect.gen(function* () {
          if (partArrived) {
            return yield* new ProviderError({
              code: "invalid_response",
              provider: provider.provider,
              message: `The provider of ${state.options.model} retried the request after part of its response had arrived.`
            })
          }
          silentSince = (yield* Clock.currentTimeMillis) + part.afterMs
          yield* emitter.emit("request_retry", {
            attempt: part.attempt,
            of: part.of,
            reason: part.reason,
            ...(part.status === undefined ? {} : { status: part.status }),
            afterMs: part.afterMs
          })
        })
      /**
       * The parts of one pull (one network read of the adapter) together: one clock read, and their
       * deltas emitted at once. A `Retrying` part is handled in its place, after the parts before it.
       */
      const onParts = (
        parts: ReadonlyArray<ResponsePart>,
        from: number
      ): Effect.Effect<void, ProviderError | StoreError> =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const deltas: Array<StreamDelta> = []
          let index = from
          for (; index < parts.length; index++) {
            const part = parts[index]!
            if (part._tag === "Retrying") break
            partArrived = true
            if (isProgress(part)) {
              lastPartAt = now
              if (firstPartAt === undefined) {
                firstPartAt = now
                if (part._tag !== "Finish") response.ttftMs = now - sentAt
                state.stage = { stage: "streaming" }
              }
            }
            onPart(part, deltas)
          }
          const emitted = emitter.emitDeltas(deltas)
          if (index === parts.length) return emitted
          const retrying = parts[index] as Retrying
          return Effect.zipRight(
            emitted,
            Effect.zipRight(onRetrying(retrying), index + 1 < parts.length ? onParts(parts, index + 1) : Effect.void)
          )
        })
      const consume = Stream.runForEachChunk(provider.stream(request), (chunk) =>
        onParts(Chunk.toReadonlyArray(chunk), 0)
      )
      // One watchdog per request: silence before the first part is a first-token timeout
      // (resent, LIM-4), silence after it an idle stall. No timer per part. While no part has
      // come it looks again at least every idle timeout, so a stall right after a first part is
      // caught at the idle timeout even when the first-token timeout is longer.
      const watchdog = Effect.gen(function* () {
        for (;;) {
          const now = yield* Clock.currentTimeMillis
          const waiting = firstPartAt === undefined
          const due = waiting ? silentSince + limits.firstTokenTimeoutMs : lastPartAt + limits.streamIdleTimeoutMs
          if (now >= due) return yield* waiting ? new FirstTokenSilence() : new StreamIdle()
          yield* Effect.sleep(waiting ? Math.min(due - now, limits.streamIdleTimeoutMs) : due - now)
        }
      })
      const providerTruncated = Effect.sync(() => {
        response.providerTruncated = true
        return "streamed" as const
      })
      const outcome = yield* Effect.raceFirst(Effect.as(consume, "streamed" as const), watchdog).pipe(
        Effect.catchTags({
          FirstTokenSilence: () => Effect.succeed("silent" as const),
          // Silence after the finish is a server keeping the connection open: the answer is whole.
          StreamIdle: () =>
            response.finish !== undefined
              ? Effect.succeed("streamed" as const)
              : Effect.fail(timeoutError(state, "stream_idle", limits.streamIdleTimeoutMs, { stage: "streaming" })),
          OutputTruncatedError: () => providerTruncated,
          ProviderError: (error) =>
            error.code === "output_truncated" || isLegacyTruncationText(error.message)
              ? providerTruncated
              : Effect.fail(error)
        }),
        Effect.onExit((exit) =>
          Exit.isSuccess(exit) ? Effect.void : keepPartialAnswer(state, response, options.keepPartial !== false)
        )
      )
      if (outcome === "silent") {
        if (state.attempts <= limits.firstTokenRetries) {
          yield* emitter.emit("request_retry", {
            attempt: state.attempts,
            of: limits.firstTokenRetries,
            reason: "first_token_timeout",
            afterMs: limits.firstTokenTimeoutMs
          })
          continue
        }
        return yield* timeoutError(state, "first_token", limits.firstTokenTimeoutMs, { stage: "first_token" })
      }
      response.durationMs = (yield* Clock.currentTimeMillis) - sentAt
      if (response.finish === undefined && !response.providerTruncated) {
        yield* keepPartialAnswer(state, response, options.keepPartial !== false)
        return yield* new ProviderError({
          code: "invalid_response",
          provider: provider.provider,
          message: `The response from ${state.options.model} ended without a finish reason.`
        })
      }
      return response
    }
  })
