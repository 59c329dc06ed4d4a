import { ProviderError, type ProviderErrorCode } from "@alisio/domain/Errors"
import { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai/error"

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
  invalid_response: "The server sent an invalid response"
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
  } = {}
): Failure => {
  const status = extra.status === undefined || extra.inStream === true ? "" : ` (HTTP ${extra.status})`
  const error = new ProviderError({
    code,
    provider,
    message: detail === undefined ? `${describe[code]}${status}.` : `${describe[code]}${status}: ${detail}`,
    ...(extra.status === undefined ? {} : { status: extra.status }),
    ...(extra.retryAfterMs === undefined ? {} : { retryAfterMs: extra.retryAfterMs })
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
        retryAfterMs: error.retryAfterMs
      })
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

/** A non-2xx HTTP answer; `body` is the error object the server sent (OpenAI's `error`, or the whole body). */
export const fromStatus = (
  provider: string,
  status: number,
  body: unknown,
  headers: Headers | undefined,
  now: number
): Failure => {
  const code = codeForStatus(status)
  return make(provider, code, messageOf(body), {
    status,
    retryAfterMs: code === "rate_limited" || status === 503 ? retryAfterMs(headers, now) : undefined,
    errorCode: errorCodeOf(body)
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

/** An exception from the SDK (status errors, connection errors) or from reading the body. */
export const fromCause = (provider: string, cause: unknown, now: number, baseURL: string): Failure => {
  if (cause instanceof APIConnectionTimeoutError) return make(provider, "network", `no answer from ${baseURL} in time`)
  if (cause instanceof APIConnectionError) {
    return make(provider, "network", `${baseURL}: ${causeText((cause as { cause?: unknown }).cause) ?? cause.message}`)
  }
  if (cause instanceof APIError && cause.status !== undefined) {
    return fromStatus(provider, cause.status, cause.error, cause.headers, now)
  }
  if (cause instanceof APIError) return fromStreamPayload(provider, cause.error ?? { message: cause.message })
  return make(provider, "network", `${baseURL}: ${causeText(cause) ?? String(cause)}`)
}

/** Reading the response body threw: the connection broke while the answer was streaming. */
export const fromReadError = (provider: string, cause: unknown): Failure =>
  make(provider, "network", `the connection broke mid-stream (${causeText(cause) ?? String(cause)})`)

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
  const code: ProviderErrorCode =
    status !== undefined
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
  const detail = messageOf(error) ?? (isRecord(payload) ? messageOf(payload) : undefined)
  return make(
    provider,
    code,
    errorCode === undefined || detail?.includes(errorCode) ? detail : `${detail ?? "error"} [${errorCode}]`,
    {
      status,
      errorCode,
      inStream: true
    }
  )
}

/**
 * Error bodies of OpenAI-compatible servers differ (`{"error":{…}}`, vLLM's top-level `message`,
 * FastAPI's `detail`, plain text); the SDK only reads OpenAI's. This rewrites the others into
 * OpenAI's shape so the server's words survive into the `ProviderError`.
 */
export const normalizingFetch =
  (inner: typeof fetch): typeof fetch =>
  async (input, init) => {
    const response = await inner(input, init)
    if (response.ok) return response
    const raw = await response.text().catch(() => "")
    let parsed: unknown
    try {
      parsed = raw.length > 0 ? JSON.parse(raw) : undefined
    } catch {
      parsed = undefined
    }
    const alreadyOpenAi = isRecord(parsed) && isRecord(parsed.error) && text(parsed.error.message) !== undefined
    let body = raw
    if (!alreadyOpenAi) {
      const message = parsed === undefined ? text(raw)?.slice(0, 2000) : messageOf(parsed)
      if (message !== undefined) {
        const code = isRecord(parsed)
          ? isRecord(parsed.error)
            ? errorCodeOf(parsed.error)
            : errorCodeOf(parsed)
          : undefined
        body = JSON.stringify({ error: { message, ...(code === undefined ? {} : { code }) } })
      }
    }
    const headers = new Headers(response.headers)
    headers.delete("content-length")
    headers.delete("content-encoding")
    headers.set("content-type", "application/json")
    return new Response(body, { status: response.status, statusText: response.statusText, headers })
  }
