import { randomUUID } from "node:crypto"
import type { ProviderError, ProviderErrorCode } from "@alisio/domain/Errors"
import {
  LanguageModel,
  type LanguageModelService,
  type ModelInfo,
  type ModelRequest,
  type ProviderRetryReason,
  type ResponsePart,
  type Retrying
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
import { acceptsEffort, type CatalogEntry, merge } from "./internal/Catalog.js"
import { ChatAssembler } from "./internal/ChatStream.js"
import {
  baseUrlAdvice,
  baseUrlProblem,
  type Failure,
  fromCause,
  fromReadError,
  fromStreamPayload,
  invalidResponse,
  noAnswerInTime,
  redactError,
  shownAddress,
  withKeyRemedy
} from "./internal/ErrorMapping.js"
import { endpoint, makeHttpClient, maxBodyBytes, readBounded, sizeText } from "./internal/Http.js"
import { PartReader } from "./internal/PartReader.js"
import { completionAsStream, modelIds, webPageProblem } from "./internal/PlainBodies.js"
import { chatBody, type OutputTokensParam, responsesBody } from "./internal/Requests.js"
import { ResponsesAssembler } from "./internal/ResponsesStream.js"
import { defaultRetryPolicy, finalError, type RetryPolicy, retryDelay } from "./internal/Retry.js"

export type { CatalogEntry } from "./internal/Catalog.js"
export { addressProblem } from "./internal/ErrorMapping.js"

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

/** The live HTTP exchange of one request: aborted on release unless its body was read to the end. */
interface Connection {
  controller: AbortController | undefined
  reader: PartReader | undefined
}

/**
 * How long model discovery may wait for the server's answer. A run resolves its model through
 * discovery before its own clocks start, so a server that accepts and never answers must not hold
 * it long; a list of models takes a server well under a second. Not retried: a server that kept
 * quiet this long will not answer the next ask sooner.
 */
const discoveryTimeoutMs = 60_000
/** The longest discovery waits before asking again. */
const discoveryMaxWaitMs = 2_000

/** How long the end of the body may lag behind the final event before the connection is dropped. */
const drainGraceMs = 1_000

/**
 * How long a response that has its finish waits for its end marker (and any trailing usage) before
 * it is taken as complete: some servers send the finish and keep the connection open without
 * `[DONE]`, and the answer must not then fail as a stall.
 */
const finishGraceMs = 5_000

/** How a retried failure is reported (only transient codes are retried). */
const retryReasons: Partial<Record<ProviderErrorCode, ProviderRetryReason>> = {
  rate_limited: "rate_limited",
  server: "server_error",
  network: "network"
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
  const http = makeHttpClient({ baseURL, apiKey, headers: options.headers })
  // Checked once: every request to an address that is no URL fails at once, and is not retried.
  const unusableBase = baseUrlProblem(provider, baseURL)

  const failWith = (cause: unknown): Effect.Effect<never, Failure> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(fromCause(provider, cause, now, baseURL)))

  const send = (request: ModelRequest, signal: AbortSignal): Promise<Response> => {
    const sendEffort = request.effort !== undefined && acceptsEffort(catalog, request.model, request.effort)
    return api === "chat"
      ? http.request("POST", "/chat/completions", {
          body: chatBody(request, { outputTokensParam, sendEffort }),
          signal
        })
      : http.request("POST", "/responses", { body: responsesBody(request, { sendEffort }), signal })
  }

  const assemblerFor = () =>
    api === "chat" ? new ChatAssembler(provider, makeCallId) : new ResponsesAssembler(provider, makeCallId)

  /** An answer that went on past its bound: a line that never ends, or deltas without end. */
  const endless = () =>
    invalidResponse(
      provider,
      `the answer passed ${sizeText(maxBodyBytes.answer)} and was stopped there: no model's answer is that long, so the server is likely stuck repeating itself`
    )

  /** A stream or body that could not be read: nested past the stack, say. */
  const unreadable = (cause: unknown) =>
    invalidResponse(
      provider,
      `the answer could not be read (${cause instanceof Error ? cause.message : String(cause)})`
    )

  const readerOf = (body: ReadableStream<Uint8Array>) =>
    new PartReader(body.getReader(), assemblerFor(), {
      maxBytes: maxBodyBytes.answer,
      failure: endless,
      notAStream: (head) =>
        invalidResponse(provider, `expected an event stream, got ${head}; ${baseUrlAdvice(baseURL)}`),
      unreadable
    })

  const bodyText = (response: Response, maxBytes: number): Effect.Effect<{ text: string; cut: boolean }, Failure> =>
    Effect.tryPromise({ try: () => readBounded(response, maxBytes), catch: (cause) => cause }).pipe(
      Effect.catchAll(failWith)
    )

  /**
   * A 200 labelled JSON: some proxies answer a streaming request with a JSON error, a few servers
   * label their event stream as JSON, and some ignore `stream: true` and send the completion whole.
   * Anything else is not an answer.
   */
  const jsonAnswer = (response: Response): Effect.Effect<PartReader, Failure> =>
    Effect.flatMap(bodyText(response, maxBodyBytes.answer), ({ cut, text }) => {
      if (cut) return Effect.fail(endless())
      let payload: unknown
      try {
        payload = JSON.parse(text)
      } catch {
        payload = undefined
      }
      if (typeof payload === "object" && payload !== null && "error" in payload) {
        return Effect.fail(fromStreamPayload(provider, payload))
      }
      let stream: string | undefined
      try {
        stream = payload === undefined ? (/^(data|event):/m.test(text) ? text : undefined) : wholeAsStream(payload)
      } catch (cause) {
        return Effect.fail(unreadable(cause))
      }
      if (stream !== undefined) return Effect.succeed(readerOf(new Response(stream).body!))
      return Effect.fail(invalidResponse(provider, `expected an event stream, got ${text.slice(0, 200)}`))
    })

  const wholeAsStream = (payload: unknown) => (api === "chat" ? completionAsStream(payload) : undefined)

  /** A 200 web page: a proxy's sign-in page, or a web app where the API was expected (no `/v1`). */
  const webPage = (response: Response): Effect.Effect<never, Failure> =>
    Effect.flatMap(bodyText(response, maxBodyBytes.error), ({ text: html }) =>
      Effect.fail(invalidResponse(provider, webPageProblem(html, baseURL, "an event stream")))
    )

  /** Sends the request and opens its event stream; `holder` keeps the connection's controller. */
  const connect = (request: ModelRequest, holder: Connection) =>
    Effect.suspend(() => {
      if (unusableBase !== undefined) return Effect.fail(unusableBase)
      const controller = new AbortController()
      holder.controller = controller
      return Effect.tryPromise({
        try: (signal) => {
          signal.addEventListener("abort", () => controller.abort(), { once: true })
          return send(request, controller.signal)
        },
        catch: (cause) => cause
      }).pipe(
        Effect.catchAll(failWith),
        Effect.flatMap((response): Effect.Effect<PartReader, Failure> => {
          const type = response.headers.get("content-type") ?? ""
          if (type.includes("application/json")) return jsonAnswer(response)
          if (type.includes("text/html")) return webPage(response)
          if (response.body === null) return Effect.fail(invalidResponse(provider, "the response had no body"))
          return Effect.succeed(readerOf(response.body))
        })
      )
    })

  const retrying = (failure: Failure, afterMs: number, attempt: number): Retrying => ({
    _tag: "Retrying",
    reason: retryReasons[failure.error.code] ?? "server_error",
    ...(failure.error.status === undefined ? {} : { status: failure.error.status }),
    afterMs,
    attempt,
    of: policy.maxRetries
  })

  /**
   * One request as a stream of parts. The pull loop connects, reads, and on a transient failure
   * before any part was emitted aborts that connection, reports a `Retrying` part, waits and
   * connects again; after a part it
   * never retries, since the consumer already has the parts. After the final event the rest of the
   * body is read (for a bounded time) so the connection can serve the next request. The scope's
   * finalizer aborts any connection not read to its end — the stream failed, was interrupted or
   * stopped early — so the server sees it close.
   */
  const streamRequest = (request: ModelRequest): Stream.Stream<ResponsePart, ProviderError> =>
    Stream.unwrapScoped(
      Effect.map(
        Effect.acquireRelease(
          Effect.sync((): Connection => ({ controller: undefined, reader: undefined })),
          (holder) => Effect.sync(() => (holder.reader?.eof === true ? undefined : holder.controller?.abort()))
        ),
        (holder) => {
          let emitted = false
          let retry = 1
          // The wait announced by the last `Retrying` part, slept before the next connection.
          let backoff = 0

          // A retry is reported (a `Retrying` part, so the runner can tell the user) before its wait.
          const recover = (failure: Failure): Effect.Effect<Chunk.Chunk<ResponsePart>, Option.Option<ProviderError>> =>
            emitted
              ? Effect.fail(Option.some(failure.error))
              : Effect.flatMap(retryDelay(policy, failure, retry), (delay) => {
                  holder.controller?.abort()
                  holder.reader = undefined
                  if (Option.isNone(delay)) return Effect.fail(Option.some(finalError(policy, failure)))
                  backoff = delay.value
                  return Effect.succeed(Chunk.of(retrying(failure, delay.value, retry++)))
                })

          // One pull → the parts of the next network read(s) that completed any, as one chunk.
          const pull: Effect.Effect<Chunk.Chunk<ResponsePart>, Option.Option<ProviderError>> = Effect.suspend(() => {
            const current = holder.reader
            if (current === undefined) {
              const wait = backoff
              backoff = 0
              const connecting =
                wait > 0 ? Effect.zipRight(Effect.sleep(wait), connect(request, holder)) : connect(request, holder)
              return Effect.matchEffect(connecting, {
                onFailure: recover,
                onSuccess: (opened) => {
                  holder.reader = opened
                  return pull
                }
              })
            }
            const read = Effect.promise(() => current.next())
            return Effect.flatMap(
              current.finishing
                ? Effect.map(Effect.timeoutOption(read, finishGraceMs), (pulled) =>
                    Option.getOrElse(pulled, () => current.settle())
                  )
                : read,
              (pulled) => {
                switch (pulled._tag) {
                  case "Parts":
                    emitted = true
                    return Effect.succeed(Chunk.unsafeFromArray(pulled.parts))
                  case "End":
                    return current.eof || current.settled
                      ? Effect.fail(Option.none())
                      : Effect.promise(() => current.drain()).pipe(
                          Effect.timeoutOption(drainGraceMs),
                          Effect.zipRight(Effect.fail(Option.none()))
                        )
                  case "Failed":
                    return recover(pulled.failure)
                  case "ReadError":
                    return recover(fromReadError(provider, pulled.cause))
                }
              }
            )
          })
          return Stream.repeatEffectChunkOption(pull)
        }
      )
    )

  // Discovery waits in silence, before a run's events start, and a run whose list is busy or rate
  // limited goes on without it (Providers.resolve): so it waits seconds, not what a server asks.
  const discoveryPolicy: RetryPolicy = {
    ...policy,
    maxDelayMs: Math.min(policy.maxDelayMs, discoveryMaxWaitMs),
    maxRetryAfterMs: Math.min(policy.maxRetryAfterMs, discoveryMaxWaitMs)
  }
  const withRetries = <A>(effect: Effect.Effect<A, Failure>, retry: number): Effect.Effect<A, ProviderError> =>
    Effect.catchAll(effect, (failure) =>
      Effect.flatMap(retryDelay(discoveryPolicy, failure, retry), (delay) =>
        Option.isNone(delay)
          ? Effect.fail(finalError(discoveryPolicy, failure))
          : Effect.zipRight(Effect.sleep(delay.value), withRetries(effect, retry + 1))
      )
    )

  const discovered = Effect.tryPromise({
    try: async (signal) => {
      const response = await http.request("GET", "/models", { signal })
      const page = response.headers.get("content-type")?.includes("text/html") === true
      return { page, ...(await readBounded(response, page ? maxBodyBytes.error : maxBodyBytes.models)) }
    },
    catch: (cause) => cause
  }).pipe(
    Effect.catchAll(failWith),
    // A server that accepts and never answers (streams have the runner's first-token timeout).
    Effect.timeoutFail({
      duration: discoveryTimeoutMs,
      onTimeout: () => noAnswerInTime(provider, baseURL, discoveryTimeoutMs)
    }),
    Effect.flatMap(({ cut, page, text }) => {
      if (cut && !page) {
        return Effect.fail(
          invalidResponse(provider, `the list of models passed ${sizeText(maxBodyBytes.models)} and was stopped there`)
        )
      }
      const list = page ? undefined : modelIds(text)
      if (list !== undefined && "ids" in list) return Effect.succeed(list.ids)
      if (list !== undefined) {
        return Effect.fail(
          invalidResponse(
            provider,
            `${shownAddress(endpoint(baseURL, "/models").href)} sent ${list.wrong} where the list of models was expected ` +
              `(JSON with \`data\`, a list of models: {"data": [{"id": "…"}, …]})`
          )
        )
      }
      return Effect.fail(
        invalidResponse(
          provider,
          page || text.trimStart().startsWith("<")
            ? webPageProblem(text, baseURL, "the list of models")
            : `expected the list of models as JSON, got ${text.slice(0, 200)}`
        )
      )
    })
  )

  const models: Effect.Effect<ReadonlyArray<ModelInfo>, ProviderError> = withRetries(
    unusableBase === undefined ? discovered : Effect.fail(unusableBase),
    1
  ).pipe(
    // A server without discovery still has its configured models.
    Effect.catchIf(
      (error) => error.status === 404,
      () => Effect.succeed<ReadonlyArray<string>>([])
    ),
    Effect.map((ids) => merge(provider, catalog, ids))
  )

  // What a server echoes of the key never reaches the user, the store or the model (TL-8).
  const secrets = apiKey.length > 0 ? [apiKey] : []
  const explained = (error: ProviderError) => redactError(withKeyRemedy(error, apiKey.length > 0), secrets)
  return {
    provider,
    stream: (request) => Stream.mapError(streamRequest(request), explained),
    models: Effect.mapError(models, explained)
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
