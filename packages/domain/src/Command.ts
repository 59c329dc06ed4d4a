import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** Where a slash command can be used. */
export const CommandSurface = Schema.Literal("tui", "web", "api")
export type CommandSurface = typeof CommandSurface.Type

/** `core` commands run through the catalog; `surface` commands are handled by each UI (CMD-2). */
export const CommandExecution = Schema.Literal("core", "surface")
export type CommandExecution = typeof CommandExecution.Type

/** Where a command comes from, in precedence order on a name clash (CMD-1). */
export const CommandSource = Schema.Literal("builtin", "plugin", "template", "skill")
export type CommandSource = typeof CommandSource.Type

/** A slash command as the catalog lists it. */
export const CommandDescriptor = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  surfaces: Schema.Array(CommandSurface),
  execution: CommandExecution,
  source: CommandSource
})
export type CommandDescriptor = typeof CommandDescriptor.Type

/** What a plugin command knows about where it runs. */
export interface PluginCommandContext {
  readonly sessionId?: string | undefined
  /** The workspace (its real path); commands scoped to a project need it. */
  readonly cwd?: string | undefined
}

/** A command a plugin registers; `execute` gets the raw argument text. */
export interface PluginCommand {
  readonly name: string
  readonly description: string
  readonly surfaces?: ReadonlyArray<CommandSurface>
  readonly execute: (args: string, context: PluginCommandContext) => Effect.Effect<string, unknown>
}
