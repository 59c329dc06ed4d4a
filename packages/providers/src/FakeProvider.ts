import type { OutputTruncatedError } from "@alisio/domain/Errors"
import { ProviderError } from "@alisio/domain/Errors"
import { ToolCallId } from "@alisio/domain/Ids"
import {
  type FinishReason,
  LanguageModel,
  type LanguageModelService,
  type ModelError,
  type ModelInfo,
  type ModelRequest,
  type ProviderRetryReason,
  type ResponsePart
} from "@alisio/domain/LanguageModel"
import type { Usage } from "@alisio/domain/Usage"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

/** One step of a scripted response. */
export type Step =
  | { readonly _tag: "Part"; readonly part: ResponsePart }
  | { readonly _tag: "Delay"; readonly ms: number }
  | { readonly _tag: "Silence" }
  | { readonly _tag: "Fail"; readonly error: ModelError }

/** The steps answering one request. */
export type Response = ReadonlyArray<Step>

/** The responses, in request order, or a function choosing one per request (0-based index). */
export type Script = ReadonlyArray<Response> | ((request: ModelRequest, index: number) => Response)

const part = (p: ResponsePart): Step => ({ _tag: "Part", part: p })

/** Text deltas: the text split into `chunks` pieces (default one). */
export const text = (value: string, options: { readonly chunks?: number } = {}): ReadonlyArray<Step> => {
  const count = Math.max(1, Math.min(options.chunks ?? 1, value.length))
  const size = Math.ceil(value.length / count)
  const steps: Array<Step> = []
  for (let i = 0; i < value.length; i += size) steps.push(part({ _tag: "TextDelta", text: value.slice(i, i + size) }))
  return steps
}

/** A reasoning delta. */
export const reasoning = (value: string): Step => part({ _tag: "ReasoningDelta", text: value })

/**
 * A tool call: start, the JSON arguments in `fragments` pieces, and (unless `cut`) its end.
 * `args` may be an object (serialized) or raw JSON text, which may be incomplete on purpose.
 */
export const toolCall = (
  id: string,
  name: string,
  args: unknown,
  options: { readonly fragments?: number; readonly cut?: boolean } = {}
): ReadonlyArray<Step> => {
  const callId = ToolCallId.make(id)
  const json = typeof args === "string" ? args : JSON.stringify(args)
  const count = Math.max(1, Math.min(options.fragments ?? 1, json.length))
  const size = Math.ceil(json.length / count)
  const steps: Array<Step> = [part({ _tag: "ToolCallStart", id: callId, name })]
  for (let i = 0; i < json.length; i += size) {
    steps.push(part({ _tag: "ToolCallDelta", id: callId, argumentsDelta: json.slice(i, i + size) }))
  }
  if (options.cut !== true) steps.push(part({ _tag: "ToolCallEnd", id: callId }))
  return steps
}

/** The end of a response. */
export const finish = (reason: FinishReason, usage?: Usage): Step =>
  part(usage === undefined ? { _tag: "Finish", reason } : { _tag: "Finish", reason, usage })

/** Waits `ms` of clock time before the next step. */
export const delay = (ms: number): Step => ({ _tag: "Delay", ms })

/**
 * The provider's own retry of a transient failure, as the OpenAI-compatible adapter reports it:
 * a `Retrying` part, then its wait on the clock. Only before any other part of a response.
 */
export const retrying = (
  afterMs: number,
  options: {
    readonly reason?: ProviderRetryReason
    readonly status?: number
    readonly attempt?: number
    readonly of?: number
  } = {}
): ReadonlyArray<Step> => [
  part({
    _tag: "Retrying",
    reason: options.reason ?? "rate_limited",
    ...(options.status === undefined ? {} : { status: options.status }),
    afterMs,
    attempt: options.attempt ?? 1,
    of: options.of ?? 2
  }),
  delay(afterMs)
]

/** Sends nothing more until the request is interrupted. */
export const silence: Step = { _tag: "Silence" }

/** Ends the stream with an error. */
export const fail = (error: ProviderError | OutputTruncatedError): Step => ({ _tag: "Fail", error })

/** A plain answer: text then `stop`. */
export const answer = (value: string, usage: Usage = { inputTokens: 10, outputTokens: 5 }): Response => [
  ...text(value),
  finish("stop", usage)
]

/** A response that calls tools: each call complete, then `tool_calls`. */
export const callTools = (
  ...calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: unknown }>
): Response => [
  ...calls.flatMap((call) => toolCall(call.id, call.name, call.args)),
  finish("tool_calls", { inputTokens: 10, outputTokens: 5 })
]

/** What a test can read back from the fake: every request it got, in order. */
export interface FakeProviderService {
  readonly requests: Effect.Effect<ReadonlyArray<ModelRequest>>
  /** How many requests were interrupted before their response ended. */
  readonly interrupted: Effect.Effect<number>
}

export class FakeProvider extends Context.Tag("@alisio/providers/FakeProvider")<FakeProvider, FakeProviderService>() {}

const runStep = (step: Step): Stream.Stream<ResponsePart, ModelError> => {
  switch (step._tag) {
    case "Part":
      return Stream.succeed(step.part)
    case "Delay":
      return Stream.fromEffect(Effect.sleep(step.ms)).pipe(Stream.drain)
    case "Silence":
      return Stream.fromEffect(Effect.never)
    case "Fail":
      return Stream.fail(step.error)
  }
}

/** Builds a scripted model: the service and the recorder. */
export const make = (
  script: Script,
  options: { readonly provider?: string; readonly models?: ReadonlyArray<ModelInfo> } = {}
): Effect.Effect<{ readonly model: LanguageModelService; readonly fake: FakeProviderService }> =>
  Effect.gen(function* () {
    const provider = options.provider ?? "fake"
    const requests = yield* Ref.make<ReadonlyArray<ModelRequest>>([])
    const interrupted = yield* Ref.make(0)
    const responseFor = (request: ModelRequest, index: number): Response | undefined =>
      typeof script === "function" ? script(request, index) : script[index]

    const stream = (request: ModelRequest): Stream.Stream<ResponsePart, ModelError> =>
      Stream.unwrap(
        Ref.modify(requests, (list) => [list.length, [...list, request]] as const).pipe(
          Effect.map((index) => {
            const response = responseFor(request, index)
            if (response === undefined) {
              return Stream.fail(
                new ProviderError({
                  code: "bad_request",
                  provider,
                  message: `FakeProvider has no scripted response for request ${index + 1}`
                })
              )
            }
            // A response that neither ended nor failed was cut off by its consumer: count it.
            let settled = false
            const markSettled = Effect.sync(() => {
              settled = true
            })
            return Stream.fromIterable(response).pipe(
              Stream.flatMap(runStep),
              Stream.tapError(() => markSettled),
              Stream.concat(Stream.drain(Stream.fromEffect(markSettled))),
              Stream.ensuring(Effect.suspend(() => (settled ? Effect.void : Ref.update(interrupted, (n) => n + 1))))
            )
          })
        )
      )

    const model: LanguageModelService = {
      provider,
      stream,
      models: Effect.succeed(options.models ?? [])
    }
    return { model, fake: { requests: Ref.get(requests), interrupted: Ref.get(interrupted) } }
  })

/** Provides `LanguageModel` (the scripted model) and `FakeProvider` (its recorder). */
export const layer = (
  script: Script,
  options?: { readonly provider?: string; readonly models?: ReadonlyArray<ModelInfo> }
): Layer.Layer<LanguageModel | FakeProvider> =>
  Layer.effectContext(
    Effect.map(make(script, options), ({ fake, model }) =>
      Context.make(LanguageModel, model).pipe(Context.add(FakeProvider, fake))
    )
  )
