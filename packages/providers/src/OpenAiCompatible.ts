import type { ProviderError } from "@alisio/domain/Errors"
import {
  LanguageModel,
  type LanguageModelService,
  type ModelInfo,
  type ModelRequest,
  type ResponsePart
} from "@alisio/domain/LanguageModel"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { OpenAI } from "openai/client"
import { acceptsEffort, type CatalogEntry, merge } from "./internal/Catalog.js"
import { ChatAssembler } from "./internal/ChatStream.js"
import { type Failure, fromCause, fromStreamPayload, invalidResponse, normalizingFetch } from "./internal/ErrorMapping.js"
import { PartReader } from "./internal/PartReader.js"
import { chatBody, type OutputTokensParam, responsesBody } from "./internal/Requests.js"
import { ResponsesAssembler } from "./internal/ResponsesStream.js"
import { defaultRetryPolicy, type RetryPolicy, retryDelay } from "./internal/Retry.js"


export type { CatalogEntry } from "./internal/Catalog.js"

/** How to reach one OpenAI-compatible server. */
export interface Options {
  /** Defaults to OpenAI's `https://api.openai.com/v1`. */
  readonly baseURL?: string
  /** Sent as a bearer token; local servers usually need none. */
  readonly apiKey?: Redacted.Redacted<string>
  readonly headers?: Readonly<Record<string, string>>
  /** Chat Completions (default; what most servers speak) or the Responses API. */
  readonly api?: "chat" | "responses"
  /** The id this provider is registered under; defaults to `openai`. */
  readonly providerId?: string
  /** The name of the output budget field for Chat; servers differ. Defaults to `max_completion_tokens`. */
  readonly outputTokensParam?: OutputTokensParam
  /** Per-model facts that override or extend the well-known table. */
  readonly catalog?: Readonly<Record<string, CatalogEntry>>
  /** Retries of transient failures before anything was streamed; defaults to 2. */
  readonly maxRetries?: number
  /** Backoff tuning; the defaults suit real servers. */
  readonly retry?: Partial<Omit<RetryPolicy, "maxRetries">>
}

export const defaultBaseURL = "https://api.openai.com/v1"

/** A failed attempt, and whether any part had already gone downstream (then it is never retried). */
interface AttemptFailure {
  readonly failure: Failure
  readonly afterOutput: boolean
}

const makeCallId = (): string => `call_${randomUUID().replaceAll("-", "").slice(0, 24)}`

/** The adapter for one server: Chat Completions or Responses, streamed, with discovery and retries. */
export const make = (options: Options): LanguageModelService => {
  const provider = options.providerId ?? "openai"
  const baseURL = options.baseURL ?? defaultBaseURL
  const api = options.api ?? "chat"
  const catalog = options.catalog ?? {}
  const outputTokensParam = options.outputTokensParam ?? "max_completion_tokens"
  const policy: RetryPolicy = {
    ...defaultRetryPolicy,
    ...options.retry,
    ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries })
  }
  const apiKey = options.apiKey === undefined ? "" : Redacted.value(options.apiKey)
  const client = new OpenAI({
    baseURL,
    // The SDK insists on a key; without one, the Authorization header is removed below.
    apiKey: apiKey.length > 0 ? apiKey : "unused",
    adminAPIKey: null,
    organization: null,
    project: null,
    defaultHeaders: { ...(apiKey.length > 0 ? {} : { Authorization: null }), ...options.headers },
    // Retries are ours: they must stop once a part was emitted, and honour Clock.
    maxRetries: 0,
    logLevel: "off",
    fetch: normalizingFetch((input, init) => globalThis.fetch(input, init))
  })

  const failWith = (cause: unknown): Effect.Effect<never, Failure> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(fromCause(provider, cause, now, baseURL)))

  const send = (request: ModelRequest, signal: AbortSignal): Promise<Response> => {
    const sendEffort = request.effort !== undefined && acceptsEffort(catalog, request.model, request.effort)
    return api === "chat"
      ? client.chat.completions.create(chatBody(request, { outputTokensParam, sendEffort }), { signal }).asResponse()
      : client.responses.create(responsesBody(request, { sendEffort }), { signal }).asResponse()
  }

  /** Some proxies answer a streaming request with a JSON error and status 200. */
  const jsonAnswer = (response: Response): Effect.Effect<never, Failure> =>
    Effect.flatMap(
      Effect.tryPromise({ try: () => response.text(), catch: (cause) => cause }).pipe(Effect.catchAll(failWith)),
      (text) => {
        let payload: unknown
        try {
          payload = JSON.parse(text)
        } catch {
          payload = undefined
        }
        return Effect.fail(
          typeof payload === "object" && payload !== null && "error" in payload
            ? fromStreamPayload(provider, payload)
            : invalidResponse(provider, `expected an event stream, got ${text.slice(0, 200)}`)
        )
      }
    )

  const attempt = (request: ModelRequest): Stream.Stream<ResponsePart, AttemptFailure> =>
    Stream.unwrapScoped(
      Effect.gen(function*() {
        // Released when the stream ends, fails or is interrupted: the server sees the connection close.
        const controller = yield* Effect.acquireRelease(
          Effect.sync(() => new AbortController()),
          (controller) => Effect.sync(() => controller.abort())
        )
        const response = yield* Effect.tryPromise({
          try: (signal) => {
            signal.addEventListener("abort", () => controller.abort(), { once: true })
            return send(request, controller.signal)
          },
          catch: (cause) => cause
        }).pipe(Effect.catchAll(failWith))
        if (response.headers.get("content-type")?.includes("application/json") === true) {
          return yield* jsonAnswer(response)
        }
        if (response.body === null) return yield* Effect.fail(invalidResponse(provider, "the response had no body"))
        const parts = new PartReader(
          response.body.getReader(),
          api === "chat" ? new ChatAssembler(provider, makeCallId) : new ResponsesAssembler(provider, makeCallId)
        )
        let emitted = false
        const failed = (failure: Failure) => Effect.fail(Option.some<AttemptFailure>({ failure, afterOutput: emitted }))
        // One pull → the parts of the next network read(s) that completed any, as one chunk.
        const pull: Effect.Effect<Chunk.Chunk<ResponsePart>, Option.Option<AttemptFailure>> = Effect.flatMap(
          Effect.promise(() => parts.next()),
          (pulled) => {
            switch (pulled._tag) {
              case "Parts":
                emitted = true
                return Effect.succeed(Chunk.unsafeFromArray(pulled.parts))
              case "End":
                return Effect.fail(Option.none())
              case "Failed":
                return failed(pulled.failure)
              case "ReadError":
                return Effect.flatMap(Clock.currentTimeMillis, (now) => failed(fromCause(provider, pulled.cause, now, baseURL)))
            }
          }
        )
        return Stream.repeatEffectChunkOption(pull)
      }).pipe(Effect.mapError((failure): AttemptFailure => ({ failure, afterOutput: false })))
    )

  const streamFrom = (request: ModelRequest, retry: number): Stream.Stream<ResponsePart, ProviderError> =>
    Stream.catchAll(attempt(request), ({ afterOutput, failure }) =>
      afterOutput
        ? Stream.fail(failure.error)
        : Stream.unwrap(
          Effect.map(retryDelay(policy, failure, retry), (delay) =>
            Option.isNone(delay)
              ? Stream.fail(failure.error)
              : Stream.unwrap(Effect.as(Effect.sleep(delay.value), streamFrom(request, retry + 1))))
        ))

  const retrying = <A>(effect: Effect.Effect<A, Failure>, retry: number): Effect.Effect<A, ProviderError> =>
    Effect.catchAll(effect, (failure) =>
      Effect.flatMap(retryDelay(policy, failure, retry), (delay) =>
        Option.isNone(delay)
          ? Effect.fail(failure.error)
          : Effect.zipRight(Effect.sleep(delay.value), retrying(effect, retry + 1))))

  const discovered = Effect.tryPromise({
    try: (signal) => client.models.list({ signal }),
    catch: (cause) => cause
  }).pipe(
    Effect.catchAll(failWith),
    Effect.map((page) => (Array.isArray(page.data) ? page.data : []).flatMap((model) =>
      typeof model?.id === "string" && model.id.length > 0 ? [model.id] : []
    ))
  )

  const models: Effect.Effect<ReadonlyArray<ModelInfo>, ProviderError> = retrying(discovered, 1).pipe(
    // A server without discovery still has its configured models.
    Effect.catchIf((error) => error.status === 404, () => Effect.succeed<ReadonlyArray<string>>([])),
    Effect.map((ids) => merge(provider, catalog, ids))
  )

  return {
    provider,
    stream: (request) => Stream.suspend(() => streamFrom(request, 1)),
    models
  }
}

/** The adapter as the domain's `LanguageModel`. */
export const layer = (options: Options): Layer.Layer<LanguageModel> => Layer.succeed(LanguageModel, make(options))

/** The adapter configured from `OPENAI_BASE_URL` and `OPENAI_API_KEY`, plus any other options. */
export const layerConfig = (
  options: Omit<Options, "baseURL" | "apiKey"> = {}
): Layer.Layer<LanguageModel, ConfigError.ConfigError> =>
  Layer.effect(
    LanguageModel,
    Effect.map(
      Config.all({
        baseURL: Config.string("OPENAI_BASE_URL").pipe(Config.withDefault(defaultBaseURL)),
        apiKey: Config.option(Config.redacted("OPENAI_API_KEY"))
      }),
      ({ apiKey, baseURL }) =>
        make({
          ...options,
          baseURL: baseURL.trim().length > 0 ? baseURL.trim() : defaultBaseURL,
          ...(Option.isSome(apiKey) && Redacted.value(apiKey.value).length > 0 ? { apiKey: apiKey.value } : {})
        })
    )
  )
