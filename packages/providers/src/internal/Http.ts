// The HTTP the adapter speaks, on fetch: a URL under the base URL, the bearer key and the configured
// headers, a JSON body, and a non-2xx answer as an `HttpStatusError` carrying the server's error
// object. The adapter used the openai SDK for exactly this; evaluating the SDK (~350 KB) was about
// a sixth of a short run's CPU (bench/README.md).
import * as Data from "effect/Data"
import { errorObjectOf } from "./ErrorMapping.js"

/** A non-2xx answer: `error` is the server's error object in OpenAI's shape (see `errorObjectOf`). */
export class HttpStatusError extends Data.TaggedError("HttpStatusError")<{
  readonly status: number
  readonly error: unknown
  readonly headers: Headers
  /** The URL that answered, for a 404's remedy. */
  readonly url: string
}> {}

/**
 * The most a response body may hold. A model's longest answer, streamed with every event's framing,
 * is a few tens of MiB; past these a server is broken or hostile (a line that never ends, deltas
 * without end), and reading on would exhaust memory or the longest string V8 can make.
 */
export const maxBodyBytes = {
  /** An event stream, or a completion sent whole. */
  answer: 128 * 1024 * 1024,
  /** The list of models. */
  models: 32 * 1024 * 1024,
  /** An error body or a web page: only its first words are shown. */
  error: 64 * 1024
} as const

/** A body read as text up to `maxBytes`; `cut` when it went on past that and was cancelled there. */
export const readBounded = async (
  response: Response,
  maxBytes: number
): Promise<{ readonly text: string; readonly cut: boolean }> => {
  if (response.body === null) return { text: "", cut: false }
  const reader = response.body.getReader()
  const utf8 = new TextDecoder()
  const parts: Array<string> = []
  let bytes = 0
  while (true) {
    const { done, value } = await reader.read()
    if (done) break
    bytes += value.byteLength
    if (bytes > maxBytes) {
      parts.push(utf8.decode(value.subarray(0, value.byteLength - (bytes - maxBytes)), { stream: true }))
      await reader.cancel().catch(() => undefined)
      return { text: parts.join(""), cut: true }
    }
    parts.push(utf8.decode(value, { stream: true }))
  }
  parts.push(utf8.decode())
  return { text: parts.join(""), cut: false }
}

/** What a body cut at `maxBytes` is said to have passed. */
export const sizeText = (maxBytes: number): string =>
  maxBytes >= 1024 * 1024 ? `${maxBytes / (1024 * 1024)} MiB` : `${maxBytes / 1024} KiB`

export interface HttpClient {
  /** Sends a request; resolves with a 2xx response, rejects with `HttpStatusError` or fetch's error. */
  readonly request: (
    method: "GET" | "POST",
    path: string,
    options: { readonly body?: unknown; readonly signal?: AbortSignal | undefined }
  ) => Promise<Response>
}

export const makeHttpClient = (options: {
  readonly baseURL: string
  /** Empty: no Authorization header. */
  readonly apiKey: string
  readonly headers?: Readonly<Record<string, string>> | undefined
}): HttpClient => {
  const base = options.baseURL
  const headers: Record<string, string> = {
    accept: "application/json",
    ...(options.apiKey.length > 0 ? { authorization: `Bearer ${options.apiKey}` } : {})
  }
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value
  return {
    request: async (method, path, { body, signal }) => {
      const url = new URL(base + (base.endsWith("/") && path.startsWith("/") ? path.slice(1) : path))
      const response = await fetch(url, {
        method,
        headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal })
      })
      if (response.ok) return response
      const raw = await readBounded(response, maxBodyBytes.error).then(
        (read) => read.text,
        () => ""
      )
      throw new HttpStatusError({
        status: response.status,
        error: errorObjectOf(raw),
        headers: response.headers,
        url: url.href
      })
    }
  }
}
