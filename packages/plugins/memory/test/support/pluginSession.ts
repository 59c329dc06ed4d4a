// Runs a plugin's `setup` against a PluginApi built from real parts (the runtime's real
// `openSqlite` over a folder) and a small registry recording what it registers. One call is one
// "session" of Alisio; a later call over the same folder is the next session. The `PluginSession`
// shape is what the tests use, so this builder can be replaced by the host (`PluginHost.layer`).

import type { PluginCommand } from "@alisio/domain/Command"
import { ToolError } from "@alisio/domain/Errors"
import { RunId, SessionId, ToolCallId } from "@alisio/domain/Ids"
import {
  type ContextProvider,
  PluginApi,
  type PluginApiService,
  type PluginDefinition,
  PluginError
} from "@alisio/domain/Plugin"
import type { Tool, ToolContext } from "@alisio/domain/Tool"
import { openSqlite } from "@alisio/runtime/PluginStorage"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { makeTempDir } from "../../../../runtime/test/helpers/tempDir.js"

export interface ToolOutcome {
  readonly text: string
  readonly isError: boolean
}

export interface PluginSession {
  readonly tools: ReadonlyMap<string, Tool>
  readonly commands: ReadonlyMap<string, PluginCommand>
  readonly contextProviders: ReadonlyArray<ContextProvider>
  /** Calls a registered tool as the runner would, in workspace `cwd`. */
  readonly callTool: (name: string, args: unknown, cwd: string) => Effect.Effect<ToolOutcome, ToolError>
  /** Runs a registered command with its raw argument text. */
  readonly runCommand: (name: string, args: string, cwd: string) => Effect.Effect<string, unknown>
  /** What the context providers add when a run starts in `cwd` with `prompt`. */
  readonly contextFor: (cwd: string, prompt: string) => Effect.Effect<string>
}

export interface PluginSessionOptions {
  /** The plugin's state folder (shared by the sessions of a test). */
  readonly stateDir: string
  readonly config?: unknown
}

const toolContext = (cwd: string, name: string): ToolContext => ({
  sessionId: SessionId.make("ses-memory-test"),
  runId: RunId.make("run-memory-test"),
  toolCallId: ToolCallId.make(`call-${name}`),
  cwd,
  readOnly: false,
  progress: () => Effect.void,
  approveExternalPath: (target) => Effect.fail(new ToolError({ message: `access to ${target} was denied` })),
  askUser: () => Effect.fail(new ToolError({ message: "headless test" }))
})

/** Runs `plugin.setup` in the current scope; closing the scope ends the session. */
export const startPluginSession = (
  plugin: PluginDefinition,
  options: PluginSessionOptions
): Effect.Effect<PluginSession, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const tools = new Map<string, Tool>()
    const commands = new Map<string, PluginCommand>()
    const contextProviders: Array<ContextProvider> = []
    const state = new Map<string, unknown>()
    const taken = (what: string, name: string) =>
      new PluginError({ pluginId: plugin.id, message: `${what} ${name} is already registered` })
    const api: PluginApiService = {
      id: plugin.id,
      builtin: true,
      config: options.config,
      paths: {
        state: options.stateDir,
        config: options.stateDir,
        cache: options.stateDir,
        configHome: options.stateDir
      },
      trustProject: false,
      plugins: Effect.succeed([]),
      tools: {
        register: (tool) =>
          tools.has(tool.name)
            ? Effect.fail(taken("tool", tool.name))
            : Effect.sync(() => tools.set(tool.name, tool as Tool))
      },
      commands: {
        register: (command) =>
          commands.has(command.name)
            ? Effect.fail(taken("command", command.name))
            : Effect.sync(() => commands.set(command.name, command))
      },
      providers: { register: (id) => Effect.fail(taken("provider", id)) },
      events: { on: () => Effect.void },
      context: { provide: (provider) => Effect.sync(() => contextProviders.push(provider)) },
      compaction: { before: () => Effect.void, after: () => Effect.void },
      decisions: { completed: () => Effect.void, fallback: () => Effect.void },
      storage: { sqlite: (file) => openSqlite({ folder: options.stateDir, path: file, pluginId: plugin.id }) },
      state: {
        get: (key) => Effect.sync(() => Option.fromNullable(state.get(key))),
        set: (key, value) => Effect.sync(() => void state.set(key, value))
      },
      sessions: {
        spawn: () => Effect.die("no child sessions in this test"),
        await: () => Effect.die("no child sessions in this test"),
        awaitWithin: () => Effect.die("no child sessions in this test"),
        status: () => Effect.die("no child sessions in this test"),
        toolCalls: () => Effect.succeed([]),
        abort: () => Effect.void,
        list: () => Effect.succeed([]),
        notify: () => Effect.void,
        expectNotice: () => Effect.void,
        forkInRun: () => Effect.die("no child sessions in this test")
      },
      model: {
        complete: () => Effect.fail(new PluginError({ pluginId: plugin.id, message: "no model in this test" }))
      },
      extensions: { provide: () => Effect.void },
      ui: { notify: () => Effect.void, panel: () => Effect.void }
    }
    yield* Effect.provideService(plugin.setup, PluginApi, api)

    return {
      tools,
      commands,
      contextProviders,
      callTool: (name, args, cwd) => {
        const tool = tools.get(name)
        if (tool === undefined) return Effect.fail(new ToolError({ message: `no tool ${name}` }))
        return Effect.map(tool.execute(args, toolContext(cwd, name)), (result) => ({
          text: result.content.map((part) => (part._tag === "text" ? part.text : "")).join(""),
          isError: result.isError === true
        }))
      },
      runCommand: (name, args, cwd) => {
        const command = commands.get(name)
        if (command === undefined) return Effect.fail(`no command ${name}`)
        return command.execute(args, { sessionId: "ses-memory-test", cwd })
      },
      contextFor: (cwd, prompt) =>
        Effect.map(
          Effect.forEach(contextProviders, (provide) =>
            provide({ sessionId: SessionId.make("ses-memory-test"), cwd, prompt, model: "fake" })
          ),
          (parts) => parts.filter((part) => part !== undefined && part !== "").join("\n\n")
        )
    } satisfies PluginSession
  })

/** A fresh temporary folder (real path), removed when the scope closes. */
export const tempDir = (prefix: string) => makeTempDir(`alisio-${prefix}-`)
