// The stdio transport of an MCP server, ours rather than the SDK's: the SDK's spawns the server in
// Alisio's process group (a Ctrl-C on the terminal would kill it before it hears the cancellation)
// and stops only the process it started. Here the server leads a session and process group of its
// own, carries the marker `processTree` tracks, and writes its stderr into its log file; stopping
// it stops everything it started, as `bash` commands are stopped (TL-7, MCP-1).
import { type ChildProcess, spawn } from "node:child_process"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { makeMarker, stopCommand, type TrackedCommand, track } from "../../tools/internal/processTree.js"
import { normalizeMessage, oversizedAnswer } from "./answers.js"
import type { StderrSink } from "./logFile.js"
import { type JSONRPCMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE, serializeMessage, type Transport } from "./thirdParty.js"

/** How a server process ended. */
export interface ProcessExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

// Leaders of the server process groups still running. Finalizers stop them; this is the net for an
// exit that skips finalizers (a second Ctrl-C calls process.exit): their groups are killed on the
// way out, synchronously, as the 'exit' event requires.
const liveGroups = new Set<number>()
let exitHookInstalled = false
const killLiveGroups = () => {
  for (const leader of liveGroups) {
    try {
      process.kill(-leader, "SIGKILL")
    } catch {
      // Already gone.
    }
  }
}

/**
 * One line of the server's stdout as a message. Only its JSON and its envelope are checked here:
 * the SDK's Protocol checks each message against its JSON-RPC schemas before it uses it (and the
 * result against the request's), so the SDK's ReadBuffer parsing every line with those schemas
 * too was the same check twice, and a quarter of the garbage of an MCP call (bench/README.md).
 */
const parseLine = (line: string): JSONRPCMessage => {
  const message: unknown = JSON.parse(line)
  if (
    typeof message !== "object" ||
    message === null ||
    Array.isArray(message) ||
    (message as { readonly jsonrpc?: unknown }).jsonrpc !== "2.0"
  ) {
    throw new Error(`Not a JSON-RPC 2.0 message: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`)
  }
  return normalizeMessage(message as { readonly [key: string]: unknown })
}

/** How much of a line too long to read is kept at each end: enough for its `jsonrpc` and `id`. */
const EDGE_BYTES = 512
const lastBytes = (buffer: Buffer): Buffer =>
  buffer.length <= EDGE_BYTES ? buffer : buffer.subarray(buffer.length - EDGE_BYTES)

export class StdioTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined

  /** The server's process group as `processTree` tracks it; undefined until it spawned. */
  tracked: TrackedCommand | undefined
  /** How the process ended, once it did. */
  exit: ProcessExit | undefined
  /** Why it could not start (`spawn` failed: no such command, not executable…). */
  spawnError: Error | undefined

  /** What the server wrote after its last complete line. */
  private pending: Buffer | undefined
  /** The start and the end so far of a line past the limit, while the rest of it is skipped. */
  private skipping: { readonly head: string; tail: Buffer } | undefined
  private readonly spawned: Promise<void>
  private readonly closedProcess: Promise<void>
  private closeReported = false

  constructor(
    private readonly child: ChildProcess,
    marker: string
  ) {
    this.spawned = new Promise((resolve, reject) => {
      child.once("spawn", () => {
        if (child.pid !== undefined) {
          this.tracked = track(child.pid, marker)
          liveGroups.add(child.pid)
          if (!exitHookInstalled) {
            exitHookInstalled = true
            process.on("exit", killLiveGroups)
          }
        }
        resolve()
      })
      child.once("error", (error) => {
        this.spawnError = error
        reject(error)
      })
    })
    // A failed spawn is reported by start(); nobody else waits on this promise.
    this.spawned.catch(() => undefined)
    this.closedProcess = new Promise((resolve) => {
      child.once("close", (code, signal) => {
        this.exit = { code, signal }
        resolve()
        this.reportClose()
      })
      child.once("error", () => {
        if (child.pid === undefined) {
          resolve()
          this.reportClose()
        }
      })
    })
    // Each complete line, in order; the rest is kept for the next chunk.
    child.stdout?.on("data", (chunk: Buffer) => this.read(chunk))
    child.stdout?.on("error", (error) => this.onerror?.(error))
    // EPIPE when the server went away: its close says so.
    child.stdin?.on("error", () => undefined)
  }

  /**
   * One chunk of stdout: its complete lines delivered in order, the rest kept for the next one. A
   * line past the limit is skipped to its end, keeping its start and end: if they tell the request
   * it answers, that request fails at once rather than waiting for its timeout (`answers.ts`).
   */
  private read(chunk: Buffer) {
    let data = chunk
    const skipping = this.skipping
    if (skipping !== undefined) {
      const end = data.indexOf(10)
      skipping.tail = lastBytes(Buffer.concat([skipping.tail, end === -1 ? data : data.subarray(0, end)]))
      if (end === -1) return
      this.skipping = undefined
      this.onerror?.(new Error(`ReadBuffer exceeded maximum size of ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes`))
      const answer = oversizedAnswer(skipping.head, skipping.tail.toString("utf8"), STDIO_DEFAULT_MAX_BUFFER_SIZE)
      if (answer !== undefined) this.onmessage?.(answer)
      data = data.subarray(end + 1)
    }
    const buffer = this.pending === undefined ? data : Buffer.concat([this.pending, data])
    this.pending = undefined
    let start = 0
    for (let end = buffer.indexOf(10); end !== -1; end = buffer.indexOf(10, start)) {
      const line = buffer.toString("utf8", start, end > start && buffer[end - 1] === 13 ? end - 1 : end)
      start = end + 1
      let message: JSONRPCMessage
      try {
        message = parseLine(line)
      } catch (error) {
        // A line that is not JSON-RPC (a server printing to stdout): reported, then skipped.
        this.onerror?.(error as Error)
        continue
      }
      this.onmessage?.(message)
    }
    if (start >= buffer.length) return
    const rest = start === 0 ? buffer : buffer.subarray(start)
    if (rest.length <= STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      this.pending = rest
    } else {
      this.skipping = { head: rest.toString("utf8", 0, EDGE_BYTES), tail: lastBytes(rest) }
    }
  }

  start(): Promise<void> {
    return this.spawned
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child.stdin
      if (stdin === null || !stdin.writable || this.exit !== undefined) {
        reject(new Error("The server is not running"))
        return
      }
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once("drain", () => resolve())
    })
  }

  /** Ends the server's stdin (a well-behaved server exits); the process itself is stopped by `stop`. */
  close(): Promise<void> {
    try {
      this.child.stdin?.end()
    } catch {
      // Already closed.
    }
    this.reportClose()
    return Promise.resolve()
  }

  /** Resolves when the process has ended (or never started). */
  get ended(): Promise<void> {
    return this.closedProcess
  }

  private reportClose() {
    if (this.closeReported) return
    this.closeReported = true
    this.onclose?.()
  }

  /** Forgets the process group once it was stopped. */
  released() {
    if (this.child.pid !== undefined) liveGroups.delete(this.child.pid)
  }
}

/**
 * Spawns a server: its own session and process group, a marker, stderr into `stderr` (closed once
 * the server and whatever holds its stderr are done), or nowhere.
 */
export const spawnServer = (options: {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: { readonly [name: string]: string }
  readonly cwd: string
  readonly stderr: StderrSink | undefined
}): StdioTransport => {
  const marker = makeMarker()
  const { stderr } = options
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: { ...options.env, [marker.name]: marker.value },
    detached: true,
    stdio: ["pipe", "pipe", stderr === undefined ? "ignore" : "pipe"],
    windowsHide: true
  })
  if (stderr !== undefined && child.stderr !== null) {
    child.stderr.on("data", stderr.write)
    child.stderr.once("close", stderr.close)
    child.stderr.once("error", stderr.close)
  }
  return new StdioTransport(child, `${marker.name}=${marker.value}`)
}

/**
 * The clock of waits on the operating system and the network while closing: real time, so a
 * TestClock standing still never keeps a server running.
 */
export const liveClock = Clock.make()

/**
 * Waits for a promise at most `ms` of real time; `true` when it settled. Interruptible even inside
 * a finalizer, or the bound could never cut the wait short.
 */
export const waitAtMost = (promise: Promise<unknown>, ms: number): Effect.Effect<boolean> =>
  Effect.interruptible(Effect.promise(() => promise)).pipe(
    Effect.timeoutTo({ duration: ms, onSuccess: () => true, onTimeout: () => false }),
    Effect.withClock(liveClock)
  )

/**
 * Stops a server and everything it started: its stdin is closed first (a server exits on that),
 * then what still runs of its process group and session gets SIGTERM, and SIGKILL after the grace.
 */
export const stopServer = (transport: StdioTransport, graceMs: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    yield* Effect.promise(() => transport.close())
    const ended = yield* waitAtMost(transport.ended, Math.min(graceMs, 500))
    // The leader may be gone and still have left children behind (npx → node): always sweep.
    if (transport.tracked !== undefined) yield* stopCommand(transport.tracked, ended ? 200 : graceMs)
    transport.released()
  }).pipe(Effect.uninterruptible)
