// One connection to an MCP server through the SDK's client: stdio (our transport), streamable
// HTTP or SSE. This module holds the SDK's values, so it is imported only when a server starts:
// a run without MCP servers never loads the SDK.
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { formatDuration } from "@alisio/domain/Durations"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import * as Deadlines from "./deadlines.js"
import { McpCallError, McpStartError } from "./errors.js"
import type { Environment, Launch } from "./expand.js"
import { stopPretenuring } from "./heap.js"
import { boundedFetch } from "./httpBounds.js"
import {
  appendLog,
  appendLogNow,
  closeFd,
  lastLine,
  openLog,
  type ServerLog,
  type StderrSink,
  stderrSink
} from "./logFile.js"
import { type ProgressRoutes, routeProgress } from "./progress.js"
import { errorCode, messageOf, startFailure } from "./startFailure.js"
import { type StdioTransport, spawnServer, stopServer, waitAtMost } from "./stdioTransport.js"
import {
  AjvJsonSchemaValidator,
  Client,
  ListRootsRequestSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResultSchema,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  ToolListChangedNotificationSchema,
  type Transport
} from "./thirdParty.js"
import { type RefusedTool, readPrompt, readTools } from "./toolList.js"

/** What a server says of one of its tools (`tools/list`). */
export interface McpToolInfo {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly inputSchema: { readonly [key: string]: unknown }
  readonly annotations?:
    | { readonly readOnlyHint?: boolean | undefined; readonly title?: string | undefined }
    | undefined
}

/** What a server says of one of its prompts (`prompts/list`). */
export interface McpPromptInfo {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly arguments?:
    | ReadonlyArray<{
        readonly name: string
        readonly description?: string | undefined
        readonly required?: boolean | undefined
      }>
    | undefined
}

export interface ConnectOptions {
  readonly server: string
  readonly launch: Launch
  /** The workspace: a stdio server's default folder, and the root it is told of. */
  readonly cwd: string
  /** Where variables a stdio server inherits come from. */
  readonly env: Environment
  readonly logFolder: string
  readonly startupMs: number
  readonly closeMs: number
  readonly clientVersion: string
  /** Called when the server says its list of tools, prompts or resources changed. */
  readonly onListChanged: (list: "tools" | "prompts" | "resources") => void
}

/** A live connection; closed with the scope it was made in. */
export interface Connection {
  /** The server's name in the configuration. */
  readonly server: string
  readonly client: Client
  /** Done when the connection closed, ours or not. */
  readonly closed: Deferred.Deferred<void>
  /** True once we began closing it: a close after that is not the server going away. */
  readonly closing: () => boolean
  /** Whether it closed, for a call's fast path (`closed` says the same as an Effect). */
  readonly isClosed: () => boolean
  /** Why it closed, as a clause: `exited with code 1: <its last stderr line>`. */
  readonly whyClosed: Effect.Effect<string>
  readonly log: string
  readonly hasTools: boolean
  readonly hasPrompts: boolean
  readonly hasResources: boolean
  /** The timeouts of its calls. */
  readonly deadlines: Deadlines.Deadlines
  /** Where the progress of its calls goes (`progress.ts`). */
  readonly progress: ProgressRoutes
}

// Variables a stdio server inherits, as the SDK's clients (Claude Desktop's among them) pass them,
// plus the locale and temporary folder; the rest it gets only by `env` in its settings.
const INHERITED = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"]

const inheritedEnvironment = (env: Environment): Record<string, string> => {
  const picked: Record<string, string> = {}
  for (const name of INHERITED) {
    const value = env[name]
    // A shell function exported through the environment is no value to hand on.
    if (value !== undefined && !value.startsWith("()")) picked[name] = value
  }
  return picked
}

// The SDK keeps its own timer per request (60 s by default). Ours run on the Effect clock, so the
// SDK's is set as far as a timer goes.
export const SDK_TIMEOUT_MS = 2_147_483_647

const describe = (launch: Launch): string =>
  launch.type === "stdio" ? [launch.command, ...launch.args].join(" ") : `${launch.type} ${launch.url}`

export { errorCode, messageOf }

/** Opens the transport for a launch; a stdio server is spawned here, its stderr into its log. */
const openTransport = (options: ConnectOptions, stderr: StderrSink | undefined) => {
  const { launch } = options
  if (launch.type === "stdio") {
    return spawnServer({
      command: launch.command,
      args: launch.args,
      env: { ...inheritedEnvironment(options.env), ...launch.env },
      cwd: launch.cwd === undefined ? options.cwd : path.resolve(options.cwd, launch.cwd),
      stderr
    })
  }
  const requestInit = { headers: launch.headers }
  const bounded = boundedFetch()
  if (launch.type === "sse") {
    const headers = launch.headers
    return new SSEClientTransport(new URL(launch.url), {
      requestInit,
      eventSourceInit: {
        fetch: (url, init) =>
          bounded(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } })
      }
    })
  }
  return new StreamableHTTPClientTransport(new URL(launch.url), { requestInit, fetch: bounded })
}

/**
 * Makes the cancellations still being sent visible, so a close can let them out first. Only they
 * are tracked: tracking every send cost each call a promise and a Set's churn.
 */
const trackCancellations = (transport: Transport): Set<Promise<void>> => {
  const pending = new Set<Promise<void>>()
  const send = transport.send.bind(transport)
  transport.send = (message, options) => {
    const sending = send(message, options)
    if ("method" in message && message.method === "notifications/cancelled") {
      pending.add(sending)
      const done = () => void pending.delete(sending)
      sending.then(done, done)
    }
    return sending
  }
  return pending
}

const isStdio = (transport: Transport): transport is StdioTransport => "tracked" in transport

/**
 * Connects to a server within `startupMs`: spawns or reaches it, and completes MCP's handshake.
 * Closing the scope closes the connection and, for stdio, stops every process of the server.
 */
export const connect = (options: ConnectOptions): Effect.Effect<Connection, McpStartError, Scope.Scope> =>
  Effect.gen(function* () {
    const { launch, server } = options
    stopPretenuring()
    const opened = yield* openLog(options.logFolder, server, describe(launch))
    const log: ServerLog = opened.log
    const stderr = launch.type === "stdio" && opened.fd !== "ignore" ? yield* stderrSink(log, opened.fd) : undefined
    const closed = yield* Deferred.make<void>()
    let closing = false

    const transport = yield* Effect.acquireRelease(
      Effect.try({
        try: () => openTransport(options, stderr),
        catch: (error) => new McpStartError({ message: startFailure(error, launch), log: log.file })
      }).pipe(
        Effect.onExit((exit) => (stderr === undefined || Exit.isFailure(exit) ? closeFd(opened.fd) : Effect.void))
      ),
      (transport) => (isStdio(transport) ? stopServer(transport, options.closeMs) : Effect.void)
    )
    const pendingSends = trackCancellations(transport)
    let isClosed = false
    transport.onclose = () => {
      isClosed = true
      Deferred.unsafeDone(closed, Exit.void)
    }

    const client = new Client(
      { name: "alisio", version: options.clientVersion },
      { capabilities: { roots: { listChanged: false } }, jsonSchemaValidator: new AjvJsonSchemaValidator() }
    )
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(options.cwd).href, name: path.basename(options.cwd) }]
    }))
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => options.onListChanged("tools"))
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => options.onListChanged("prompts"))
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => options.onListChanged("resources"))
    // Protocol noise (a stray line on stdout, a failed notification) goes to the log, not the terminal.
    let lost: string | undefined
    client.onerror = (error) => {
      const message = messageOf(error)
      appendLogNow(log.file, `error: ${message}`)
      // The SDK gave up reaching a streamable HTTP server again (it went away), but leaves the
      // requests it sent waiting: closed here, they fail at once rather than at their timeout.
      if (lost === undefined && !isStdio(transport) && message.startsWith("Maximum reconnection attempts")) {
        lost = "it could no longer be reached"
        void client.close().catch(() => undefined)
      }
    }

    // How it ended, and the last thing it said on stderr.
    const closeReason = Effect.gen(function* () {
      if (!isStdio(transport)) return { how: lost ?? "its connection closed", said: undefined }
      const exit = transport.exit
      const how =
        exit === undefined
          ? "its connection closed"
          : exit.signal !== null
            ? `it was killed by ${exit.signal}`
            : `it exited with code ${exit.code}`
      return { how, said: yield* lastLine(log) }
    })
    const whyClosed = Effect.map(closeReason, ({ how, said }) => (said === undefined ? how : `${how}: ${said}`))

    // Our close: say so first, let a cancellation still being sent go out, then close.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        closing = true
        // Real time: what is waited for is the network, not the fiber's clock.
        yield* waitAtMost(Promise.allSettled([...pendingSends]), 1_000)
        if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
          yield* waitAtMost(
            transport.terminateSession().catch(() => undefined),
            1_000
          )
        }
        yield* waitAtMost(
          client.close().catch(() => undefined),
          options.closeMs
        )
        yield* appendLog(log.file, "stopped")
      })
    )

    yield* Effect.tryPromise({
      try: (signal) => client.connect(transport, { signal, timeout: SDK_TIMEOUT_MS }),
      catch: (error) => error
    }).pipe(
      Effect.timeoutFail({
        duration: options.startupMs,
        // Every run waits this long for it before its first request (MCP-1), so the line names the way out.
        onTimeout: () =>
          `it did not answer within ${formatDuration(options.startupMs)}, which each run waits for it; check its command and log, or set enabled: false (or a shorter timeout) in its settings`
      }),
      Effect.catchAll((error) =>
        Effect.gen(function* () {
          if (typeof error === "string") return yield* new McpStartError({ message: error, log: log.file })
          if (isStdio(transport) && transport.spawnError !== undefined) {
            return yield* new McpStartError({ message: startFailure(transport.spawnError, launch), log: log.file })
          }
          if (isStdio(transport) && (yield* Deferred.isDone(closed))) {
            // Give the process a moment to be reaped, so its exit code is known.
            yield* waitAtMost(transport.ended, 200)
            const { how, said } = yield* closeReason
            const message = `${how.replace(/^it /, "")} before answering${said === undefined ? "" : `: ${said}`}`
            return yield* new McpStartError({ message, log: log.file })
          }
          return yield* new McpStartError({ message: startFailure(error, launch), log: log.file })
        })
      )
    )
    yield* appendLog(log.file, `connected (${JSON.stringify(client.getServerVersion() ?? {})})`)
    const capabilities = client.getServerCapabilities() ?? {}
    const deadlines = yield* Deadlines.make
    const progress = routeProgress(transport)
    return {
      server,
      client,
      closed,
      closing: () => closing,
      isClosed: () => isClosed,
      whyClosed,
      log: log.file,
      hasTools: capabilities.tools !== undefined,
      hasPrompts: capabilities.prompts !== undefined,
      hasResources: capabilities.resources !== undefined,
      deadlines,
      progress
    } satisfies Connection
  })

/** Every page of a list request. */
export const allPages = <A>(
  page: (
    cursor: string | undefined
  ) => Promise<{ readonly items: ReadonlyArray<A>; readonly next?: string | undefined }>
) =>
  Effect.tryPromise({
    try: async () => {
      const items: Array<A> = []
      let cursor: string | undefined
      // A server that hands out the same cursor for ever would keep a start waiting until its timeout.
      for (let pages = 0; pages < 100; pages++) {
        const result = await page(cursor)
        items.push(...result.items)
        if (result.next === undefined || result.next === cursor) break
        cursor = result.next
      }
      return items
    },
    catch: (error) => messageOf(error)
  })

/** A server's tools (every page), and a sentence for each tool that cannot be offered (`toolList.ts`). */
export interface ToolList {
  readonly tools: ReadonlyArray<McpToolInfo>
  readonly refused: ReadonlyArray<RefusedTool>
}

export const listTools = (connection: Connection): Effect.Effect<ToolList, string> =>
  connection.hasTools
    ? Effect.map(
        allPages<ToolList>(async (cursor) => {
          // Read with the SDK's loosest schema, and tool by tool here.
          const result = await connection.client.request(
            { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
            ResultSchema,
            { timeout: SDK_TIMEOUT_MS }
          )
          const read = readTools(result)
          if (typeof read === "string") throw new Error(read)
          return { items: [read], next: typeof result.nextCursor === "string" ? result.nextCursor : undefined }
        }),
        (pages) => ({ tools: pages.flatMap((page) => page.tools), refused: pages.flatMap((page) => page.refused) })
      )
    : Effect.succeed({ tools: [], refused: [] })

export const listPrompts = (connection: Connection): Effect.Effect<ReadonlyArray<McpPromptInfo>, string> =>
  connection.hasPrompts
    ? allPages(async (cursor) => {
        // Read with the SDK's loosest schema: a prompt without a name is left out, not the list.
        const result = await connection.client.request(
          { method: "prompts/list", params: cursor === undefined ? {} : { cursor } },
          ResultSchema,
          { timeout: SDK_TIMEOUT_MS }
        )
        if (!Array.isArray(result.prompts)) throw new Error("its prompts/list answer holds no list of prompts")
        return {
          items: (result.prompts as ReadonlyArray<unknown>).flatMap(readPrompt),
          next: typeof result.nextCursor === "string" ? result.nextCursor : undefined
        }
      })
    : Effect.succeed([])

/** A prompt with its arguments filled in (`prompts/get`). */
export const getPrompt = (
  connection: Connection,
  name: string,
  args: { readonly [key: string]: string }
): Effect.Effect<
  {
    readonly description?: string | undefined
    readonly messages: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: unknown }>
  },
  McpCallError
> =>
  Effect.tryPromise({
    try: () => connection.client.getPrompt({ name, arguments: { ...args } }, { timeout: SDK_TIMEOUT_MS }),
    catch: (error) => new McpCallError({ message: messageOf(error).replace(/^MCP error -?\d+: /, ""), closed: false })
  })
