import { formatDuration } from "@alisio/domain/Durations"
import { ProviderError, type ProviderErrorCode } from "@alisio/domain/Errors"
import * as Predicate from "effect/Predicate"

/** A failed attempt: the typed error and whether sending the same request again may succeed. */
export interface Failure {
  readonly error: ProviderError
  readonly retryable: boolean
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim().length > 0 ? value.trim() : undefined

/** Quota exhaustion arrives as 429 but will not clear by waiting. */
const notRetryableCodes = new Set(["insufficient_quota", "billing_hard_limit_reached", "account_deactivated"])

const codeForStatus = (status: number): ProviderErrorCode =>
  status === 401 || status === 403
    ? "auth"
    : status === 429
      ? "rate_limited"
      : status === 408 || status >= 500
        ? "server"
        : "bad_request"

const describe: Record<ProviderErrorCode, string> = {
  auth: "The server refused the credentials",
  rate_limited: "The server is rate limiting requests",
  server: "The server failed",
  network: "The server could not be reached",
  bad_request: "The server rejected the request",
  output_truncated: "The response was cut by the output limit",
  invalid_response: "The server sent an invalid response",
  context_length_exceeded: "The request does not fit the model's context window"
}

/**
 * CSI (7- and 8-bit); OSC, DCS, SOS, PM and APC up to their terminator or the end; any other ESC
 * sequence (as the runtime's `TerminalText`, which this package cannot import).
 */
const ESCAPE_SEQUENCES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
  /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[\s\S]*?(?:\u0007|\u001b\\|\u009c|$)|\u001b[ -/]*[0-~]/g

/** Controls, and the invisible characters that reorder or break lines (bidi controls, separators). */
const CONTROLS = /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]+/gu

/**
 * A server's words as one line of plain text: no escape sequence or control character (they would
 * reach the terminal the error is printed on, and the store), whitespace runs as one space.
 */
export const plainText = (text: string): string =>
  text.replace(ESCAPE_SEQUENCES, "").replace(CONTROLS, " ").replace(/\s+/g, " ").trim()

/**
 * The most of a server's words an error quotes. Real messages (a context overflow, a validation
 * error naming its fields) are a few hundred characters; an error body or an in-stream error of
 * megabytes was printed whole and stored in every run_failed.
 */
const MAX_DETAIL = 2000

/** The server's words as one plain line (`plainText`), cut at `MAX_DETAIL`. */
const quoted = (detail: string): string => {
  // Cut before cleaning, so a body of megabytes is not scanned whole; escapes may take some room.
  const line = plainText(detail.length > MAX_DETAIL * 4 ? detail.slice(0, MAX_DETAIL * 4) : detail)
  return line.length > MAX_DETAIL ? `${line.slice(0, MAX_DETAIL)}…` : line
}

const make = (
  provider: string,
  code: ProviderErrorCode,
  detail: string | undefined,
  extra: {
    readonly status?: number | undefined
    readonly retryAfterMs?: number | undefined
    readonly errorCode?: string | undefined
    /** Reported inside a 200 stream: `status` comes from the payload, not from HTTP. */
    readonly inStream?: boolean
    /** With `context_length_exceeded`: the window the server named. */
    readonly contextWindow?: number | undefined
    /** What happened, where the code's own words would mislead. */
    readonly lead?: string
  } = {}
): Failure => {
  const status = extra.status === undefined || extra.inStream === true ? "" : ` (HTTP ${extra.status})`
  const error = new ProviderError({
    code,
    provider,
    message: `${extra.lead ?? describe[code]}${status}${detail === undefined ? "." : `: ${quoted(detail)}`}`,
    ...(extra.status === undefined ? {} : { status: extra.status }),
    ...(extra.retryAfterMs === undefined ? {} : { retryAfterMs: extra.retryAfterMs }),
    ...(extra.contextWindow === undefined ? {} : { contextWindow: extra.contextWindow })
  })
  const transient = code === "rate_limited" || code === "server" || code === "network"
  return { error, retryable: transient && !(extra.errorCode !== undefined && notRetryableCodes.has(extra.errorCode)) }
}

// OpenAI-style secret keys (`sk-…`, `sk-proj-…`, `sk-ant-…`); a masked one (`sk-proj-****abcd`) is short of this.
const KEY_SHAPED = /\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}/g

// A configured key this short is no secret, and replacing it would garble the message.
const MIN_SECRET_LENGTH = 8

/**
 * The text with every occurrence of the given secrets, and of anything shaped like an API key,
 * replaced by `[redacted]` (TL-8): servers echo the key they refused in their error bodies.
 */
export const redactSecrets = (text: string, secrets: ReadonlyArray<string>): string => {
  let redacted = text
  for (const secret of secrets) {
    if (secret.length >= MIN_SECRET_LENGTH) redacted = redacted.split(secret).join("[redacted]")
  }
  return redacted.replace(KEY_SHAPED, "[redacted]")
}

/** The error with its message redacted (see `redactSecrets`), before anyone prints or stores it. */
export const redactError = (error: ProviderError, secrets: ReadonlyArray<string>): ProviderError => {
  const message = redactSecrets(error.message, secrets)
  return message === error.message
    ? error
    : new ProviderError({
        code: error.code,
        message,
        provider: error.provider,
        status: error.status,
        retryAfterMs: error.retryAfterMs,
        contextWindow: error.contextWindow
      })
}

/**
 * A refused key with what to do about it (the server's own words say what is wrong, never where the
 * key is set): where the provider's key comes from, or that none was sent.
 */
export const withKeyRemedy = (error: ProviderError, keySent: boolean): ProviderError => {
  if (error.code !== "auth") return error
  const provider = error.provider ?? "openai"
  const where =
    provider === "openai" ? "OPENAI_API_KEY (or providers.openai.apiKey)" : `providers.${provider}.apiKeyEnv or apiKey`
  const remedy = !keySent
    ? `no key was sent: set ${where}, or run \`alisio connect ${provider}\``
    : error.status === 403
      ? `the key may lack access to this model or endpoint: check it in ${where}`
      : `check the key in ${where}, or run \`alisio connect ${provider}\` again`
  return new ProviderError({
    code: error.code,
    message: `${error.message.replace(/\.$/, "")}; ${remedy}.`,
    provider: error.provider,
    status: error.status,
    retryAfterMs: error.retryAfterMs,
    contextWindow: error.contextWindow
  })
}

/** A request the server accepted but did not answer within the adapter's bound: not retried. */
export const noAnswerInTime = (provider: string, baseURL: string, ms: number): Failure => ({
  error: make(
    provider,
    "network",
    `${baseURL} accepted the connection but sent no answer within ${formatDuration(ms)}; check that the server is up and serving`
  ).error,
  retryable: false
})

/** The address as it may be shown: without the user name and password it may hold. */
export const shownAddress = (address: string): string => address.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1")

/**
 * Why `baseURL` cannot be sent to, or `undefined` when it can: not a URL, another scheme, no host,
 * or a user name or password in it (fetch refuses those, and the message quoting the address would
 * print the password). `credentials` tells which, for the remedy.
 */
export const addressProblem = (
  baseURL: string
): { readonly text: string; readonly credentials: boolean } | undefined => {
  let url: URL | undefined
  try {
    url = new URL(baseURL)
  } catch {
    url = undefined
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    return { text: `${shownAddress(baseURL)} is not an http:// or https:// address`, credentials: false }
  }
  if (url.username === "" && url.password === "") return undefined
  return {
    text: `${shownAddress(baseURL)} was given with a user name or password in it, which are never sent from an address`,
    credentials: true
  }
}

/**
 * Why `baseURL` cannot be sent to (`addressProblem`) with where to set it right, or `undefined`.
 * Fetch would fail each request with "Invalid URL" or "unknown scheme", retried as a network error.
 */
export const baseUrlProblem = (provider: string, baseURL: string): Failure | undefined => {
  const problem = addressProblem(baseURL)
  if (problem === undefined) return undefined
  const openai = provider === "openai"
  const where = openai ? "OPENAI_BASE_URL or providers.openai.baseURL" : `providers.${provider}.baseURL`
  const key = openai ? "OPENAI_API_KEY" : `providers.${provider}.apiKeyEnv or apiKey`
  const remedy = problem.credentials
    ? `remove them from ${where} and give the key in ${key}`
    : `set ${where} to the server's API address, e.g. http://127.0.0.1:8080/v1`
  return {
    error: make(provider, "bad_request", `${problem.text}; ${remedy}`, {
      lead: "The provider's address is not usable"
    }).error,
    retryable: false
  }
}

/** A failure the adapter itself detects, e.g. a stream that stopped before it finished. */
export const invalidResponse = (provider: string, detail: string): Failure => make(provider, "invalid_response", detail)

/** The delay a 429 or 503 asks for: `retry-after-ms`, else `retry-after` in seconds or as an HTTP date. */
export const retryAfterMs = (headers: Headers | undefined, now: number): number | undefined => {
  if (headers === undefined) return undefined
  const ms = headers.get("retry-after-ms")
  if (ms !== null) {
    const value = Number.parseFloat(ms)
    if (Number.isFinite(value) && value >= 0) return Math.ceil(value)
  }
  const after = headers.get("retry-after")
  if (after === null) return undefined
  const seconds = Number(after.trim())
  if (after.trim().length > 0 && Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000)
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const messageOf = (body: unknown): string | undefined => {
  if (!isRecord(body)) return text(body)
  const message = text(body.message) ?? text(body.detail) ?? text(body.error)
  if (message !== undefined) return message
  if (isRecord(body.error)) return messageOf(body.error)
  return undefined
}

const errorCodeOf = (body: unknown): string | undefined =>
  isRecord(body) ? (text(body.code) ?? text(body.type)) : undefined

// How servers say a request does not fit the model's context window (CTX-1): OpenAI and Groq
// (`context_length_exceeded`, "This model's maximum context length is … tokens"), vLLM, DeepSeek,
// Mistral and OpenRouter ("maximum context length"), llama.cpp (`exceed_context_size_error`, "the
// request exceeds the available context size"), Ollama ("input length exceeds the context
// length"), LM Studio ("context length exceeded"), the Responses API ("exceeds the context window"),
// Anthropic-compatible servers ("prompt is too long") and Gemini ("input token count … exceeds").
const contextExceededPatterns: ReadonlyArray<RegExp> = [
  /context[_ ]length[_ ]exceeded/i,
  /exceed_context_size/i,
  /maximum context length/i,
  /exceeds? (?:the )?(?:maximum |available |model'?s? )?context (?:length|size|window)/i,
  /context (?:length|size|window) (?:has been |was )?exceeded/i,
  /prompt is too long/i,
  /input token count.{0,40}exceeds/i
]

const windowPatterns: ReadonlyArray<RegExp> = [
  /maximum context length is (\d[\d,]*)/i,
  /(\d[\d,]*) maximum context length/i,
  /context (?:length|size|window) (?:is|of) (\d[\d,]*)/i
]

/**
 * Whether an error says the request does not fit the context window, and the window when the
 * server named it (in its words, or llama.cpp's `n_ctx`).
 */
export const contextExceeded = (
  errorCode: string | undefined,
  message: string | undefined,
  record: Record<string, unknown> = {}
): { readonly window: number | undefined } | undefined => {
  const text = `${errorCode ?? ""} ${message ?? ""}`
  if (!contextExceededPatterns.some((pattern) => pattern.test(text))) return undefined
  if (typeof record.n_ctx === "number" && record.n_ctx > 0) return { window: record.n_ctx }
  for (const pattern of windowPatterns) {
    const found = pattern.exec(message ?? "")?.[1]
    const window = found === undefined ? Number.NaN : Number(found.replaceAll(",", ""))
    if (Number.isInteger(window) && window > 0) return { window }
  }
  return { window: undefined }
}

/** A non-2xx HTTP answer; `body` is the error object the server sent (OpenAI's `error`, or the whole body). */
export const fromStatus = (
  provider: string,
  status: number,
  body: unknown,
  headers: Headers | undefined,
  now: number
): Failure => {
  const message = messageOf(body)
  const errorCode = errorCodeOf(body)
  const tooLong =
    status === 429 || status === 401 || status === 403
      ? undefined
      : contextExceeded(errorCode, message, isRecord(body) ? body : {})
  if (tooLong !== undefined) {
    return make(provider, "context_length_exceeded", message, { status, errorCode, contextWindow: tooLong.window })
  }
  const code = codeForStatus(status)
  return make(provider, code, message, {
    status,
    retryAfterMs: code === "rate_limited" || status === 503 ? retryAfterMs(headers, now) : undefined,
    errorCode
  })
}

const causeText = (cause: unknown): string | undefined => {
  const parts: Array<string> = []
  let current: unknown = cause
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code
    const message = current.message.trim()
    if (message.length > 0 && message !== "fetch failed" && !parts.includes(message)) parts.push(message)
    else if (typeof code === "string" && !parts.includes(code)) parts.push(code)
    current = (current as { cause?: unknown }).cause
  }
  return parts.length > 0 ? parts.join(": ") : undefined
}

/** What to check when the server at `baseURL` answered as something other than the API. */
export const baseUrlAdvice = (baseURL: string): string =>
  /\/v\d+[a-z]*\/?$/i.test(baseURL)
    ? `check the provider's baseURL, ${baseURL}`
    : `check the provider's baseURL, ${baseURL} (an OpenAI-compatible API's address usually ends in /v1)`

/** A non-2xx answer (`HttpStatusError` of Http.ts, read by its tag), or fetch's own failure. */
export const fromCause = (provider: string, cause: unknown, now: number, baseURL: string): Failure => {
  if (Predicate.isTagged(cause, "HttpStatusError")) {
    const { status, error, headers, url } = cause as unknown as {
      status: number
      error: unknown
      headers: Headers
      url: string
    }
    // A path the server does not have, not a model it lacks (OpenAI's 404 names the model).
    const noSuchPath = status === 404 && !/model/i.test(messageOf(error) ?? "")
    return fromStatus(provider, status, noSuchPath ? notFoundBody(error, baseURL, url) : error, headers, now)
  }
  return make(provider, "network", `${baseURL}: ${causeText(cause) ?? String(cause)}`)
}

const notFoundBody = (body: unknown, baseURL: string, url: string) => {
  const said = messageOf(body)
  // A web server's own 404 page says no more than that.
  const shown = said === undefined || said.startsWith("<") || said.startsWith(WEB_PAGE) ? "not found" : said
  // A server that speaks Chat Completions only has no Responses API.
  const responses = url.endsWith("/responses") ? ", or set `api: chat` if the server has no Responses API" : ""
  return { message: `${shown} (${url}); ${baseUrlAdvice(baseURL)}${responses}` }
}

/** Reading the response body threw: the connection broke while the answer was streaming. */
export const fromReadError = (provider: string, cause: unknown): Failure =>
  make(provider, "network", causeText(cause) ?? String(cause), {
    lead: "The connection to the server broke while the answer was streaming"
  })

/**
 * An error reported inside a 200 stream: `data: {"error":…}`, an `event: error`, llama.cpp's `error:`
 * field, a Responses `response.failed`. A numeric status in the payload decides the code; otherwise
 * the server's error code does.
 */
export const fromStreamPayload = (provider: string, payload: unknown): Failure => {
  const error = isRecord(payload) && isRecord(payload.error) ? payload.error : payload
  const record = isRecord(error) ? error : {}
  const statusValue = record.status_code ?? record.status ?? record.code
  const status = typeof statusValue === "number" && statusValue >= 400 && statusValue < 600 ? statusValue : undefined
  const errorCode = errorCodeOf(record)
  const detail = messageOf(error) ?? (isRecord(payload) ? messageOf(payload) : undefined)
  const tooLong = status === 429 ? undefined : contextExceeded(errorCode, detail, record)
  const code: ProviderErrorCode =
    tooLong !== undefined
      ? "context_length_exceeded"
      : status !== undefined
        ? codeForStatus(status)
        : errorCode === undefined
          ? "server"
          : /rate_limit|quota|too_many/.test(errorCode)
            ? "rate_limited"
            : /auth|api_key|permission/.test(errorCode)
              ? "auth"
              : /invalid|bad_request|context_length|not_found|tool_use_failed/.test(errorCode)
                ? "bad_request"
                : "server"
  return make(
    provider,
    code,
    errorCode === undefined || detail?.includes(errorCode) ? detail : `${detail ?? "error"} [${errorCode}]`,
    {
      status,
      errorCode,
      inStream: true,
      contextWindow: tooLong?.window
    }
  )
}

/**
 * The error object of a non-2xx body. Servers differ (`{"error":{…}}`, vLLM's top-level `message`,
 * FastAPI's `detail`, plain text): the others become OpenAI's `{ message, code? }`, so the server's
 * words survive into the `ProviderError`; `undefined` for a body with nothing to say.
 */
export const errorObjectOf = (raw: string): unknown => {
  let parsed: unknown
  try {
    parsed = raw.length > 0 ? JSON.parse(raw) : undefined
  } catch {
    parsed = undefined
  }
  if (isRecord(parsed) && isRecord(parsed.error) && text(parsed.error.message) !== undefined) return parsed.error
  const message = parsed === undefined ? plainBody(raw) : messageOf(parsed)
  if (message === undefined) return isRecord(parsed) ? parsed.error : undefined
  const code = isRecord(parsed) ? (isRecord(parsed.error) ? errorCodeOf(parsed.error) : errorCodeOf(parsed)) : undefined
  return { message, ...(code === undefined ? {} : { code }) }
}

const WEB_PAGE = "a web page"

/** The longest part of a plain-text error body the message quotes. */
const QUOTED = 300

/** A plain-text error body in a few words: a web page (a proxy's 502) by its title, other text cut short. */
const plainBody = (raw: string): string | undefined => {
  const body = text(raw)
  if (body === undefined) return undefined
  if (/^<(?:!doctype|html|head|body|\?xml)/i.test(body)) {
    const title = plainText(/<title[^>]*>([^<]*)/i.exec(body)?.[1] ?? "").slice(0, 80)
    return title === "" ? WEB_PAGE : `${WEB_PAGE} ("${title}")`
  }
  const line = plainText(body)
  return line.length > QUOTED ? `${line.slice(0, QUOTED)}…` : line
}
