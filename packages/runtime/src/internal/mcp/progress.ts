// Progress notifications of our calls, routed as the transport delivers them. The SDK (1.32) runs
// a notification's handler a microtask after it arrives, but drops the request's progress handler
// at once when the response arrives: a server's last progress and its result read in one chunk
// (a loaded machine, a fast server) lost that progress. Routed here, synchronously and in the order
// they were read, every progress reaches the call before its result does.
import type { Transport } from "./thirdParty.js"

export interface ProgressUpdate {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/**
 * Where one request's progress goes: the call's own object, linked into the connection's list of
 * routes by the fields below, so a route allocates nothing (a Map of routes allocated as it grew
 * and shrank with every call). The list holds the calls under way: a few, searched only when
 * progress comes.
 */
export interface ProgressRoute {
  /** Its token's number while it is routed, 0 otherwise; kept by `add` and `remove`. */
  routeId: number
  previousRoute: ProgressRoute | undefined
  nextRoute: ProgressRoute | undefined
  progressed(update: ProgressUpdate): void
}

export interface ProgressRoutes {
  /** Routes progress to `route` until `remove`; its request's `_meta.progressToken` is `progressToken(route)`. */
  readonly add: (route: ProgressRoute) => void
  readonly remove: (route: ProgressRoute) => void
}

const PREFIX = "alisio-"

/** The token of a routed request: a string, so it never meets the SDK's own (numbers, its request ids). */
export const progressToken = (route: ProgressRoute): string => `${PREFIX}${route.routeId}`

/** Wraps the transport's delivery to the client: call after `client.connect`, which sets it. */
export const routeProgress = (transport: Transport): ProgressRoutes => {
  let first: ProgressRoute | undefined
  let last = 0
  const find = (token: unknown): ProgressRoute | undefined => {
    if (typeof token !== "string") return undefined
    for (let route = first; route !== undefined; route = route.nextRoute) {
      if (token === progressToken(route)) return route
    }
    return undefined
  }
  const deliver = transport.onmessage
  transport.onmessage = (message, extra) => {
    if ("method" in message && message.method === "notifications/progress") {
      const params = message.params as (ProgressUpdate & { readonly progressToken?: unknown }) | undefined
      const route = find(params?.progressToken)
      if (route !== undefined) return route.progressed(params!)
    }
    deliver?.(message, extra)
  }
  return {
    add: (route) => {
      route.routeId = ++last
      route.previousRoute = undefined
      route.nextRoute = first
      if (first !== undefined) first.previousRoute = route
      first = route
    },
    remove: (route) => {
      if (route.routeId === 0) return
      route.routeId = 0
      if (route.previousRoute === undefined) first = route.nextRoute
      else route.previousRoute.nextRoute = route.nextRoute
      if (route.nextRoute !== undefined) route.nextRoute.previousRoute = route.previousRoute
      route.previousRoute = undefined
      route.nextRoute = undefined
    }
  }
}
