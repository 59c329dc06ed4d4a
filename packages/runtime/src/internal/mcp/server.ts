// One configured MCP server through its life: not started → starting → connected, and from
// there stopped (it went away: its tools stay, and the next call starts it once more) or failed
// (it never started, or went away twice: its tools are gone). Transitions hold the server's lock;
// calls do not, so calls run side by side and a slow one never holds up another.
import { formatDuration } from "@alisio/domain/Durations"
import { ToolError } from "@alisio/domain/Errors"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { McpServer } from "../../ConfigSchema.js"
import type {
  McpFailure,
  McpPromptDescriptor,
  McpServerReport,
  McpServerStatus,
  McpToolReport
} from "../../McpServers.js"
import { register, type ToolOrigin } from "../../ToolOrigins.js"
import { Tools } from "../../Tools.js"
import type { ToolServer } from "./call.js"
import type { Connection, McpPromptInfo, McpToolInfo, ToolList } from "./connection.js"
import { McpCallError } from "./errors.js"
import { type Environment, expandServer } from "./expand.js"
import { logFileOf } from "./logFile.js"
import { mcpName, promptCommandName, safeName } from "./names.js"
import type { McpResourceContent, McpResourceInfo } from "./resourceRequests.js"
import { targetOf, timeoutsOf } from "./serverConfig.js"
import { chooseTools } from "./toolList.js"

// The SDK (and zod, ajv) load when the first server starts, not with the runtime; once loaded,
// calls take it from here rather than through `import()` again.
let sdkModule: typeof import("./sdk.js") | undefined
const loadSdk = Effect.suspend(() =>
  sdkModule !== undefined
    ? Effect.succeed(sdkModule)
    : Effect.map(
        Effect.promise(() => import("./sdk.js")),
        (loaded) => (sdkModule = loaded)
      )
)

/** What every server shares: the service's settings, the tool registry, where failures go. */
export interface ServerContext {
  readonly cwd: string
  readonly logFolder: string
  readonly env: Environment
  readonly closeMs: number
  readonly defaultStartupMs: number
  readonly defaultCallMs: number
  readonly clientVersion: string
  readonly tools: Tools["Type"]
  /** The service's scope: watchers live in it. */
  readonly scope: Scope.Scope
  readonly fail: (failure: Omit<McpFailure, "seq">) => Effect.Effect<void>
  readonly diagnostic: (line: string) => Effect.Effect<void>
}

export interface ServerHandle {
  readonly name: string
  /** Starts it if it never was; applies a tool list it said changed. Never fails. */
  readonly ready: Effect.Effect<void>
  readonly report: Effect.Effect<McpServerReport>
  readonly prompts: Effect.Effect<ReadonlyArray<McpPromptDescriptor>>
  readonly getPrompt: (
    prompt: string,
    args: { readonly [name: string]: string }
  ) => Effect.Effect<
    {
      readonly description?: string | undefined
      readonly messages: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: unknown }>
    },
    McpCallError
  >
  /** Its resources when it runs (listed once per connection, again when it says they changed); else none. */
  readonly resources: Effect.Effect<ReadonlyArray<McpResourceInfo>>
  /** Reads a resource, starting the server if it never was; the error is a clause. */
  readonly readResource: (uri: string) => Effect.Effect<ReadonlyArray<McpResourceContent>, McpCallError>
  /** Closes its connection and removes its tools. */
  readonly close: Effect.Effect<void>
}

type State =
  | { readonly _tag: "Disabled" }
  | { readonly _tag: "NotStarted" }
  | { readonly _tag: "Starting" }
  | { readonly _tag: "Connected"; readonly connection: Connection; readonly scope: Scope.CloseableScope }
  | { readonly _tag: "Stopped" }
  | { readonly _tag: "Failed" }

const statusOf: Record<State["_tag"], McpServerStatus> = {
  Disabled: "disabled",
  NotStarted: "not_started",
  Starting: "starting",
  Connected: "connected",
  Stopped: "stopped",
  Failed: "failed"
}

export const makeServer = (name: string, config: McpServer, context: ServerContext): Effect.Effect<ServerHandle> =>
  Effect.gen(function* () {
    const origin: ToolOrigin = { _tag: "McpServer", server: safeName(name) }
    const { callMs, startupMs } = timeoutsOf(config.timeout, {
      startupMs: context.defaultStartupMs,
      callMs: context.defaultCallMs
    })
    const log = config.type === "stdio" ? logFileOf(context.logFolder, name) : undefined
    const lock = yield* Effect.makeSemaphore(1)
    let state: State = config.enabled === false ? { _tag: "Disabled" } : { _tag: "NotStarted" }
    let toolsScope: Scope.CloseableScope | undefined
    let registered: ReadonlyArray<McpToolReport> = []
    let promptInfos: ReadonlyArray<McpPromptInfo> = []
    let problem: string | undefined
    // Prompts that could not be listed: told apart from `problem`, which tools and restarts reset.
    let promptProblem: string | undefined
    let restarted = false
    // Bumped by the server's list_changed notifications; a list is read again when it moved on.
    const versions = { tools: 0, prompts: 0, resources: 0 }
    const applied = { tools: 0, prompts: 0 }
    // The resources of the live connection, and the version of the list they are.
    let resourceList:
      | { readonly connection: Connection; readonly version: number; readonly infos: ReadonlyArray<McpResourceInfo> }
      | undefined

    const matches = (list: ReadonlyArray<string>, info: McpToolInfo) =>
      list.some((entry) => entry === info.name || entry === safeName(info.name) || entry === mcpName(name, info.name))
    const offered = (info: McpToolInfo) =>
      (config.allowedTools === undefined || matches(config.allowedTools, info)) &&
      (config.disabledTools === undefined || !matches(config.disabledTools, info))

    const dropTools = Effect.gen(function* () {
      const scope = toolsScope
      toolsScope = undefined
      registered = []
      if (scope !== undefined) yield* Scope.close(scope, Exit.void)
    })

    /** Registers the tools the server lists (through ToolOrigins), replacing the ones it had. */
    const registerTools = (list: ToolList) =>
      Effect.gen(function* () {
        const sdk = yield* loadSdk
        yield* dropTools
        const scope = yield* Scope.make(ExecutionStrategy.sequential)
        toolsScope = scope
        const reports: Array<McpToolReport> = []
        const chosen = chooseTools(list, offered)
        const refused = [...chosen.refused]
        let count = chosen.count
        for (const info of chosen.wanted) {
          const tool = sdk.toTool(info, origin.server, toolServer)
          const result = yield* register(tool, origin).pipe(
            Scope.extend(scope),
            Effect.provideService(Tools, context.tools),
            Effect.either
          )
          if (Either.isRight(result)) {
            const { description, effect, name: publicName } = result.right
            reports.push({ name: publicName, serverName: info.name, effect, description })
          } else {
            refused.push(result.left.message)
            count += 1
          }
        }
        registered = reports
        if (refused.length > 0) {
          problem = `${count} of its tools could not be offered: ${refused.join(" ")}`
          yield* context.diagnostic(`MCP server ${name}: ${problem}`)
        }
      })

    const failStart = (message: string, logFile: string | undefined) =>
      Effect.gen(function* () {
        state = { _tag: "Failed" }
        problem = message
        yield* dropTools
        yield* context.fail({ server: name, stage: "start", message, log: logFile })
      })

    /** The connection went away without us closing it: stopped (restart once) or failed. */
    const onClosed = (connection: Connection) =>
      Effect.gen(function* () {
        if (connection.closing() || state._tag !== "Connected" || state.connection !== connection) return
        const why = yield* connection.whyClosed
        yield* Scope.close(state.scope, Exit.void)
        const willRestart = !restarted
        state = { _tag: willRestart ? "Stopped" : "Failed" }
        problem = why
        if (!willRestart) yield* dropTools
        yield* context.fail({ server: name, stage: "closed", message: why, willRestart, log: connection.log })
      })

    const start: Effect.Effect<void> = Effect.gen(function* () {
      const previous = state
      state = { _tag: "Starting" }
      const expanded = expandServer(config, context.env)
      if (expanded._tag === "Left") return yield* failStart(expanded.message, undefined)
      const sdk = yield* loadSdk
      const scope = yield* Scope.make(ExecutionStrategy.sequential)
      applied.tools = versions.tools
      applied.prompts = versions.prompts
      const attempt = Effect.gen(function* () {
        const connection = yield* sdk
          .connect({
            server: name,
            launch: expanded.launch,
            cwd: context.cwd,
            env: context.env,
            logFolder: context.logFolder,
            startupMs,
            closeMs: context.closeMs,
            clientVersion: context.clientVersion,
            onListChanged: (list) => {
              versions[list] += 1
            }
          })
          .pipe(Scope.extend(scope))
        // Prompts that cannot be listed (a server that says it has some and answers no list) cost
        // the server its prompts, not its tools.
        const promptList = sdk.listPrompts(connection).pipe(
          Effect.tap(() => {
            promptProblem = undefined
          }),
          Effect.catchAll((why) => {
            promptProblem = `its prompts could not be listed: ${why}`
            return Effect.as(
              context.diagnostic(`MCP server ${name}: ${promptProblem}`),
              [] as ReadonlyArray<McpPromptInfo>
            )
          })
        )
        const listed = Effect.all([sdk.listTools(connection), promptList]).pipe(
          Effect.timeoutFail({
            duration: startupMs,
            onTimeout: () => `it did not list its tools within ${formatDuration(startupMs)}`
          }),
          Effect.mapError((message) => ({ _tag: "McpStartError" as const, message, log: connection.log }))
        )
        const [tools, prompts] = yield* listed
        return { connection, tools, prompts }
      })
      const exit = yield* Effect.exit(attempt)
      if (Exit.isFailure(exit)) {
        yield* Scope.close(scope, exit)
        if (Cause.isInterruptedOnly(exit.cause)) {
          // A run stopped while it waited: the next one starts the server again.
          state = previous._tag === "Starting" ? { _tag: "NotStarted" } : previous
          return yield* Effect.interrupt
        }
        const failure = Cause.failureOption(exit.cause)
        const message = Option.isSome(failure) ? failure.value.message : Cause.pretty(exit.cause)
        const logFile = Option.isSome(failure) ? failure.value.log : log
        return yield* failStart(message, logFile)
      }
      const { connection, prompts, tools } = exit.value
      state = { _tag: "Connected", connection, scope }
      problem = undefined
      promptInfos = prompts
      yield* registerTools(tools)
      yield* Effect.forkIn(
        Effect.flatMap(Deferred.await(connection.closed), () => lock.withPermits(1)(onClosed(connection))),
        context.scope
      )
    })

    /** Reads a list again when the server said it changed; a failure keeps what was there. */
    const refresh = Effect.gen(function* () {
      if (state._tag !== "Connected") return
      const { connection } = state
      const sdk = yield* loadSdk
      if (applied.tools !== versions.tools) {
        applied.tools = versions.tools
        const tools = yield* Effect.either(sdk.listTools(connection).pipe(Effect.timeout(startupMs)))
        if (Either.isRight(tools)) yield* registerTools(tools.right)
        else yield* context.diagnostic(`MCP server ${name}: its new tool list could not be read: ${String(tools.left)}`)
      }
      if (applied.prompts !== versions.prompts) {
        applied.prompts = versions.prompts
        const prompts = yield* Effect.either(sdk.listPrompts(connection).pipe(Effect.timeout(startupMs)))
        if (Either.isRight(prompts)) promptInfos = prompts.right
      }
    })

    const ready = lock.withPermits(1)(
      Effect.suspend(() => (state._tag === "NotStarted" ? start : state._tag === "Connected" ? refresh : Effect.void))
    )

    /** A connection to call on: started again once after it went away. */
    const usable: Effect.Effect<Connection, ToolError> = Effect.suspend(() =>
      // The common case takes no lock: a live connection.
      state._tag === "Connected" && !state.connection.isClosed() ? Effect.succeed(state.connection) : changing
    )
    const changing: Effect.Effect<Connection, ToolError> = lock.withPermits(1)(
      Effect.gen(function* () {
        if (state._tag === "Connected") {
          if (!(yield* Deferred.isDone(state.connection.closed))) return state.connection
          yield* onClosed(state.connection)
        }
        if (state._tag === "Stopped") {
          restarted = true
          yield* start
        } else if (state._tag === "NotStarted") {
          yield* start
        }
        if (state._tag === "Connected") return state.connection
        return yield* new ToolError({
          message: `The MCP server ${name} is not running${problem === undefined ? "" : `: ${problem}`}.`
        })
      })
    )

    // What this server's tools call through (call.ts): the live connection, taken with no lock and
    // no module lookup on the common call (`pnpm bench mcp`), or one started (again) under the lock.
    const toolServer: ToolServer = {
      live: () => (state._tag === "Connected" && !state.connection.isClosed() ? state.connection : undefined),
      connection: changing,
      timeoutMs: callMs
    }

    const report = Effect.sync((): McpServerReport => {
      const problems = [problem, state._tag === "Connected" ? promptProblem : undefined].filter(
        (text) => text !== undefined
      )
      return {
        name,
        transport: config.type,
        target: targetOf(config),
        status: statusOf[state._tag],
        tools: registered,
        prompts: promptInfos.map((prompt) => promptCommandName(name, prompt.name)),
        ...(problems.length === 0 ? {} : { error: problems.join("; ") }),
        ...(log === undefined ? {} : { log })
      }
    })

    const prompts = lock.withPermits(1)(
      Effect.gen(function* () {
        if (state._tag === "Connected" && applied.prompts !== versions.prompts) yield* refresh
        if (state._tag !== "Connected") return []
        return promptInfos.map(
          (prompt): McpPromptDescriptor => ({
            name: promptCommandName(name, prompt.name),
            server: name,
            prompt: prompt.name,
            description: prompt.description ?? prompt.title ?? "",
            arguments: (prompt.arguments ?? []).map((argument) => ({
              name: argument.name,
              description: argument.description,
              required: argument.required === true
            }))
          })
        )
      })
    )

    /** A request on a connection (the server started if it never was), within the call timeout. */
    const request = <A>(
      send: (sdk: typeof import("./sdk.js"), connection: Connection) => Effect.Effect<A, McpCallError>
    ): Effect.Effect<A, McpCallError> =>
      Effect.gen(function* () {
        const connection = yield* usable.pipe(
          Effect.mapError((error) => new McpCallError({ message: error.message, closed: false }))
        )
        const sdk = yield* loadSdk
        return yield* send(sdk, connection).pipe(
          Effect.timeoutFail({
            duration: callMs,
            onTimeout: () =>
              new McpCallError({ message: `did not answer within ${formatDuration(callMs)}`, closed: false })
          })
        )
      })

    const getPrompt: ServerHandle["getPrompt"] = (prompt, args) =>
      request((sdk, connection) => sdk.getPrompt(connection, prompt, args))

    const readResource: ServerHandle["readResource"] = (uri) =>
      request((sdk, connection) => sdk.readResource(connection, uri))

    const resources: ServerHandle["resources"] = Effect.suspend(() => {
      if (state._tag !== "Connected" || sdkModule === undefined || !state.connection.hasResources) {
        return Effect.succeed([])
      }
      const { connection } = state
      const cached = resourceList
      if (cached !== undefined && cached.connection === connection && cached.version === versions.resources) {
        return Effect.succeed(cached.infos)
      }
      const version = versions.resources
      return sdkModule.listResources(connection).pipe(
        Effect.timeout(startupMs),
        // A list that cannot be read offers what was there, and is not asked for again until it changes.
        Effect.orElseSucceed(() => (cached?.connection === connection ? cached.infos : [])),
        Effect.tap((infos) =>
          Effect.sync(() => {
            resourceList = { connection, version, infos }
          })
        )
      )
    })

    const close = lock.withPermits(1)(
      Effect.gen(function* () {
        if (state._tag === "Connected") yield* Scope.close(state.scope, Exit.void)
        if (state._tag !== "Disabled") state = { _tag: "NotStarted" }
        yield* dropTools
      })
    )

    return { name, ready, report, prompts, getPrompt, resources, readResource, close } satisfies ServerHandle
  })
