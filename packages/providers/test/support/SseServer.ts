// A real HTTP server on 127.0.0.1 that replays scripted answers, for the adapter tests.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** One scripted answer. */
export interface Reply {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string | Uint8Array
  /** Write the body in pieces of random size (1..maxPiece bytes, seeded), yielding between writes. */
  readonly pieces?: { readonly seed: number; readonly maxPiece: number }
  /** After the body, destroy the socket instead of ending the response (a dropped connection). */
  readonly drop?: boolean
  /** After the body, keep the response open until the client goes away. */
  readonly hang?: boolean
  /** Send nothing at all, not even the headers, until the client goes away. */
  readonly stall?: boolean
}

export interface Recorded {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly body: unknown
}

export interface SseServer {
  /** The base URL to give the adapter, `http://127.0.0.1:<port>/v1`. */
  readonly baseURL: string
  readonly requests: ReadonlyArray<Recorded>
  /** Completes when the server sees a client close a response it had not finished. */
  readonly clientClosed: Effect.Effect<void>
  /** How many TCP connections clients opened so far. */
  readonly connections: () => number
}

/** A seeded PRNG (mulberry32), so a failing split can be replayed. */
export const seeded = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Cuts `bytes` into random-sized pieces of 1..maxPiece bytes. */
export const splitRandomly = (bytes: Uint8Array, seed: number, maxPiece: number): Array<Uint8Array> => {
  const random = seeded(seed)
  const pieces: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(random() * maxPiece)
    pieces.push(bytes.subarray(at, at + size))
    at += size
  }
  return pieces
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

const readBody = (req: IncomingMessage): Promise<unknown> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      try {
        resolve(text.length > 0 ? JSON.parse(text) : undefined)
      } catch {
        resolve(text)
      }
    })
  })

const answer = async (res: ServerResponse, reply: Reply): Promise<void> => {
  if (reply.stall === true) return
  res.socket?.setNoDelay(true)
  res.writeHead(reply.status ?? 200, { "content-type": "text/event-stream", ...reply.headers })
  res.flushHeaders()
  const body = typeof reply.body === "string" ? Buffer.from(reply.body, "utf8") : (reply.body ?? new Uint8Array())
  const pieces = reply.pieces === undefined ? [body] : splitRandomly(body, reply.pieces.seed, reply.pieces.maxPiece)
  for (const piece of pieces) {
    if (res.destroyed) return
    if (piece.length > 0) res.write(piece)
    if (reply.pieces !== undefined) await nextTurn()
  }
  if (reply.drop === true) {
    await nextTurn()
    res.socket?.destroy()
  } else if (reply.hang !== true) {
    res.end()
  }
}

/**
 * Starts the server for the scope. `handle` picks the answer for the n-th request (0-based);
 * requests are recorded with their JSON bodies.
 */
export const make = (handle: (request: Recorded, n: number) => Reply): Effect.Effect<SseServer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const requests: Array<Recorded> = []
    const closed = yield* Deferred.make<void>()
    const server = createServer((req, res) => {
      res.on("close", () => {
        if (!res.writableFinished) Deferred.unsafeDone(closed, Effect.void)
      })
      void readBody(req).then((body) => {
        const recorded: Recorded = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body }
        requests.push(recorded)
        return answer(res, handle(recorded, requests.length - 1))
      })
    })
    let connections = 0
    server.on("connection", () => connections++)
    const port = yield* Effect.acquireRelease(
      Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    return {
      baseURL: `http://127.0.0.1:${port}/v1`,
      requests,
      clientClosed: Deferred.await(closed),
      connections: () => connections
    }
  })

/** Serves the same answer to every request. */
export const always = (reply: Reply) => make(() => reply)

/** Serves the answers in order; past the end, the last one again. */
export const sequence = (...replies: ReadonlyArray<Reply>) => make((_, n) => replies[Math.min(n, replies.length - 1)]!)
