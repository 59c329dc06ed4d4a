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

const isRedirect = (status: number) =>
  status === 301 || status === 302 || status === 303 || status === 307 || status === 308

const MAX_REDIRECTS = 5

// Not `URL.parse`: Node 20 has it only from 20.18.
const parseUrl = (text: string, base: URL): URL | undefined => {
  try {
    return new URL(text, base)
  } catch {
    return undefined
  }
}

/**
 * Where a redirect may be followed, with the method, body and headers (the key, custom headers such
 * as Azure's `api-key`) of the request: the same origin, or the same host moved to https. Anywhere
 * else the credentials would go to a server nobody configured, so the redirect is an error naming
 * the address to configure instead.
 */
const redirectTarget = (from: URL, response: Response, hops: number): URL | string => {
  const location = response.headers.get("location")
  const to = location === null ? undefined : parseUrl(location, from)
  if (to === undefined) return `the server answered ${response.status} without a usable Location`
  if (hops >= MAX_REDIRECTS) return `the server redirected more than ${MAX_REDIRECTS} times (last to ${to.href})`
  const upgraded = from.protocol === "http:" && to.protocol === "https:" && from.host === to.host
  if (to.origin === from.origin || upgraded) return to
  return (
    `the server redirected to ${to.origin}, another address than the configured ${from.origin}; the key and ` +
    "headers are sent only to the configured one: set the provider's baseURL to the new address if it is right"
  )
}

/**
 * `path` under the base address, keeping the base's query (Azure's `?api-version=…`, a proxy's
 * token) after it rather than before it (`/v1?x=1/chat/completions` was a 404).
 */
export const endpoint = (base: string, path: string): URL => {
  const url = new URL(base)
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`
  url.hash = ""
  return url
}

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
      let url = endpoint(base, path)
      const init: RequestInit = {
        method,
        headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
        redirect: "manual"
      }
      let response = await fetch(url, init)
      for (let hops = 0; isRedirect(response.status); hops++) {
        const next = redirectTarget(url, response, hops)
        await response.body?.cancel().catch(() => undefined)
        if (typeof next === "string") {
          throw new HttpStatusError({
            status: response.status,
            error: { message: next },
            headers: response.headers,
            url: url.href
          })
        }
        url = next
        response = await fetch(url, init)
      }
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
