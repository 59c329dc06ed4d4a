// Progress notifications of our calls, routed as the transport delivers them. The SDK (1.32) runs
// a notification's handler a microtask after it arrives, but drops the request's progress handler
// at once when the response arrives: a server's last progress and its result read in one chunk
// (a loaded machine, a fast server) lost that progress. Routed here, synchronously and in the order
// they were read, every progress reaches the call before its result does.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"

export interface ProgressUpdate {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

export interface ProgressRoutes {
  /** A token for a request's `_meta.progressToken`; its progress goes to `onProgress`. */
  readonly add: (onProgress: (update: ProgressUpdate) => void) => string
  readonly remove: (token: string) => void
}

/** Wraps the transport's delivery to the client: call after `client.connect`, which sets it. */
export const routeProgress = (transport: Transport): ProgressRoutes => {
  const routes = new Map<string, (update: ProgressUpdate) => void>()
  let last = 0
  const deliver = transport.onmessage
  transport.onmessage = (message, extra) => {
    if ("method" in message && message.method === "notifications/progress") {
      const params = message.params as (ProgressUpdate & { readonly progressToken?: unknown }) | undefined
      const route = typeof params?.progressToken === "string" ? routes.get(params.progressToken) : undefined
      if (route !== undefined) return route(params!)
    }
    deliver?.(message, extra)
  }
  return {
    add: (onProgress) => {
      const token = `alisio-${++last}`
      routes.set(token, onProgress)
      return token
    },
    remove: (token) => void routes.delete(token)
  }
}
