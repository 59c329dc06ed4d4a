import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ChildSessionsApi } from "./ChildSession.js"
import type { PluginCommand } from "./Command.js"
import type { ExtensionPoint, ExtensionPoints } from "./Extensions.js"
import type { LanguageModelService } from "./LanguageModel.js"
import type { RunEventOf, RunEventType } from "./RunEvent.js"
import type { SqlDatabase, SqlDatabaseError } from "./SqlDatabase.js"
import type { Tool } from "./Tool.js"

/** What a plugin is given: already narrowed to it (prefixes, trust, degraded effects). */
export interface PluginApiService {
  readonly id: string
  /** Whether this plugin is builtin (host trust path) or external (PL-2, PL-3). */
  readonly builtin: boolean
  /** The plugin's own configuration (`builtinPlugins.<id>` or its entry in `plugins`). */
  readonly config: unknown
  readonly tools: { readonly register: (tool: Tool) => Effect.Effect<void> }
  readonly commands: { readonly register: (command: PluginCommand) => Effect.Effect<void> }
  readonly providers: { readonly register: (id: string, model: LanguageModelService) => Effect.Effect<void> }
  readonly events: {
    readonly on: <K extends RunEventType>(
      type: K,
      handler: (event: RunEventOf<K>) => Effect.Effect<void>
    ) => Effect.Effect<void, never, Scope.Scope>
  }
  readonly storage: {
    /** Opens a SQLite file under the plugin's state folder, closed with the plugin's scope (PL-4). */
    readonly sqlite: (path: string) => Effect.Effect<SqlDatabase, SqlDatabaseError, Scope.Scope>
  }
  readonly sessions: ChildSessionsApi
  readonly extensions: {
    readonly provide: <P extends ExtensionPoint>(
      point: P,
      provider: ExtensionPoints[P],
      options?: { readonly priority?: number }
    ) => Effect.Effect<void>
  }
  readonly ui: {
    readonly notify: (message: string) => Effect.Effect<void>
    readonly panel: (id: string, lines: ReadonlyArray<string>) => Effect.Effect<void>
  }
}

/** The API a plugin's `setup` reads from its context. */
export class PluginApi extends Context.Tag("@alisio/domain/PluginApi")<PluginApi, PluginApiService>() {}

/** A plugin: an id, a version and a scoped setup effect. */
export interface PluginDefinition {
  readonly id: string
  readonly version: string
  readonly description?: string
  readonly setup: Effect.Effect<void, unknown, PluginApi | Scope.Scope>
}

/** Declares a plugin; the identity function that gives authors type checking. */
export const definePlugin = (definition: PluginDefinition): PluginDefinition => definition
