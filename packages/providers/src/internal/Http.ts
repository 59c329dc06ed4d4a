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
      const raw = await response.text().catch(() => "")
      throw new HttpStatusError({
        status: response.status,
        error: errorObjectOf(raw),
        headers: response.headers,
        url: url.href
      })
    }
  }
}
