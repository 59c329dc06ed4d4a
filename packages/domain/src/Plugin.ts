import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { ChildSessionsApi } from "./ChildSession.js"
import type { PluginCommand } from "./Command.js"
import type { ExtensionPoint, ExtensionPoints } from "./Extensions.js"
import type { SessionId } from "./Ids.js"
import type { LanguageModelService } from "./LanguageModel.js"
import type { RunEventDataMap, RunEventOf, RunEventType } from "./RunEvent.js"
import type { SqlDatabase, SqlDatabaseError } from "./SqlDatabase.js"
import type { Tool } from "./Tool.js"

/** The version of this contract; a plugin folder's `alisio-plugin.json` names the one it was written for. */
export const PLUGIN_API_VERSION = 1 as const

/** What a plugin id may be: lower-case letters, digits, `-` and `_`, starting with a letter or digit. */
export const pluginIdPattern = /^[a-z0-9][a-z0-9_-]{0,63}$/

/** `alisio-plugin.json`, the manifest of a folder plugin: the contract version and the ESM entry file. */
export const PluginManifest = Schema.Struct({
  apiVersion: Schema.Literal(PLUGIN_API_VERSION),
  entry: Schema.String
})
export type PluginManifest = typeof PluginManifest.Type

/** A plugin asked for something the host refuses: a taken name, a path escaping its folder, a bad value. */
export class PluginError extends Schema.TaggedError<PluginError>()("PluginError", {
  pluginId: Schema.String,
  message: Schema.String
}) {}

/** A one-shot completion with the session's provider (`api.model.complete`), e.g. for summaries. */
export interface CompletionRequest {
  readonly prompt: string
  readonly system?: string | undefined
  /** The session whose model to use; the active model otherwise. */
  readonly sessionId?: SessionId | undefined
  readonly maxOutputTokens?: number | undefined
}

/** What a context provider knows when a run starts. */
export interface ContextInput {
  /** The session the run resumes; absent when the run starts a new one. */
  readonly sessionId?: SessionId | undefined
  /** The workspace (its real path). */
  readonly cwd: string
  /** The user's prompt of the run that starts. */
  readonly prompt: string
  readonly model: string
}

/** Text a plugin adds to the system context of a run; `undefined` or `""` adds nothing. */
export type ContextProvider = (input: ContextInput) => Effect.Effect<string | undefined>

/** What a `compaction.before` hook is told: a compaction is about to summarise older turns (CTX-1). */
export interface BeforeCompactInput {
  readonly sessionId: SessionId
  /** The run compacting, absent for `/compact` outside a run. */
  readonly runId?: string | undefined
  /** `threshold`, `context_length_exceeded` (inside a run), or `manual` (`/compact`). */
  readonly reason: "threshold" | "context_length_exceeded" | "manual"
  /** How many stored messages are about to be summarised. */
  readonly messages: number
  /** The person's focus given to `/compact`, if any. */
  readonly focus?: string | undefined
}

/** What a `compaction.after` hook sees: the summary that now stands for the older turns. */
export interface AfterCompactInput {
  readonly sessionId: SessionId
  readonly runId?: string | undefined
  readonly reason: BeforeCompactInput["reason"]
  readonly summary: string
  readonly tokensBefore: number
  readonly tokensAfter: number
  /** Stored messages the summary stands for. */
  readonly messagesCompacted: number
}

/**
 * Runs before a compaction; the text it returns is added to the summary's instructions (say what
 * must be kept, e.g. open tasks your plugin tracks). `undefined` or `""` adds nothing.
 */
export type BeforeCompactHook = (input: BeforeCompactInput) => Effect.Effect<string | undefined, unknown>

/** Runs after a compaction was stored. */
export type AfterCompactHook = (input: AfterCompactInput) => Effect.Effect<void, unknown>

/** The per-plugin folders the host creates (0700) for the plugin's own files. */
export interface PluginPaths {
  readonly state: string
  readonly config: string
  readonly cache: string
  /** Alisio's configuration folder, `<config>`, where the person keeps files for every project (read it, do not write it). */
  readonly configHome: string
}

/** A plugin the host has loaded, as other plugins see it (`api.plugins`). */
export interface LoadedPluginInfo {
  readonly id: string
  readonly builtin: boolean
  /** An external plugin's folder (real path), where it may ship files for other plugins (`agents/`). */
  readonly root?: string | undefined
}

/**
 * What a plugin is given: already narrowed to it (PL-2, PL-3). For an external plugin, tool names
 * are prefixed `p_<hash>_`, command names `<id>:`, and `internal` effects become `external`.
 * Everything registered is removed when the plugin's scope closes.
 */
export interface PluginApiService {
  readonly id: string
  /** Whether this plugin is builtin (host trust path) or external (PL-2, PL-3). */
  readonly builtin: boolean
  /** The plugin's own configuration (`builtinPlugins.<id>` or its entry in `plugins`). */
  readonly config: unknown
  /**
   * Where the setting at `path` of `config` was written (the configuration file that wins for it),
   * for messages that name the file to fix; `undefined` when the host cannot tell.
   */
  readonly configSource?: ((path: ReadonlyArray<string>) => string | undefined) | undefined
  readonly paths: PluginPaths
  /**
   * Whether the person trusts the project's own files (`--trust-project`): read project files that
   * steer the model or run code (agents, prompts, plugins) only when it holds.
   */
  readonly trustProject: boolean
  /** The plugins loaded so far, in load order; read it when needed (plugins load after each other). */
  readonly plugins: Effect.Effect<ReadonlyArray<LoadedPluginInfo>>
  /** Registers a tool; it may fail with the plugin's own errors, whose message the model reads. */
  readonly tools: { readonly register: (tool: Tool<never, unknown>) => Effect.Effect<void, PluginError> }
  readonly commands: { readonly register: (command: PluginCommand) => Effect.Effect<void, PluginError> }
  readonly providers: {
    readonly register: (id: string, model: LanguageModelService) => Effect.Effect<void, PluginError>
  }
  /** Observes run events after they are stored; a slow or failing observer never delays or breaks a run. */
  readonly events: {
    readonly on: <K extends RunEventType>(
      type: K,
      handler: (event: RunEventOf<K>) => Effect.Effect<void, unknown>
    ) => Effect.Effect<void, never, Scope.Scope>
  }
  /**
   * Observes compaction (CTX-1): `before` may add instructions for the summary, `after` sees it.
   * Each hook is bounded in time; a failing or slow hook is a diagnostic, never a failed compaction.
   * Hooks are removed when the plugin's scope closes.
   */
  readonly compaction: {
    readonly before: (hook: BeforeCompactHook) => Effect.Effect<void>
    readonly after: (hook: AfterCompactHook) => Effect.Effect<void>
  }
  /** Adds text to the system context of every run (CTX-2). */
  readonly context: { readonly provide: (provider: ContextProvider) => Effect.Effect<void> }
  readonly storage: {
    /** Opens a SQLite file under the plugin's state folder, closed with the plugin's scope (PL-4). */
    readonly sqlite: (path: string) => Effect.Effect<SqlDatabase, SqlDatabaseError | PluginError, Scope.Scope>
  }
  /** Small JSON values kept for the plugin in the session database. */
  readonly state: {
    readonly get: (key: string) => Effect.Effect<Option.Option<unknown>, PluginError>
    readonly set: (key: string, value: unknown) => Effect.Effect<void, PluginError>
  }
  readonly sessions: ChildSessionsApi
  readonly model: { readonly complete: (request: CompletionRequest) => Effect.Effect<string, PluginError> }
  readonly extensions: {
    readonly provide: <P extends ExtensionPoint>(
      point: P,
      provider: ExtensionPoints[P],
      options?: { readonly priority?: number | undefined }
    ) => Effect.Effect<void>
  }
  /**
   * Reports a decision the plugin made during a run (EV-6), from its tool or command: the
   * metadata only, never the state sent to the decision provider. It is a `decision_completed` or
   * `decision_fallback` event of the current run, stored unless `decisions.telemetry` is false
   * (then observers see it, the session database does not). Outside a run it fails.
   */
  readonly decisions: {
    readonly completed: (data: RunEventDataMap["decision_completed"]) => Effect.Effect<void, PluginError>
    readonly fallback: (data: RunEventDataMap["decision_fallback"]) => Effect.Effect<void, PluginError>
  }
  /** Recorded for the surfaces: a headless run prints `notify` on stderr; the TUI renders panels. */
  readonly ui: {
    readonly notify: (
      message: string,
      options?: { readonly level?: "info" | "warning" | "error" }
    ) => Effect.Effect<void>
    readonly panel: (id: string, lines: ReadonlyArray<string>) => Effect.Effect<void>
  }
}

/** The API a plugin's `setup` reads from its context. */
export class PluginApi extends Context.Tag("@alisio/domain/PluginApi")<PluginApi, PluginApiService>() {}

/** A plugin: an id, a version and a scoped setup effect. */
export interface PluginDefinition {
  /** Lower-case letters, digits, `-` and `_`; unique among loaded plugins. */
  readonly id: string
  readonly version: string
  readonly description?: string | undefined
  readonly setup: Effect.Effect<void, unknown, PluginApi | Scope.Scope>
}

/** Declares a plugin; the identity function that gives authors type checking. */
export const definePlugin = (definition: PluginDefinition): PluginDefinition => definition
