import type * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** Where a slash command can be used. */
export const CommandSurface = Schema.Literal("tui", "web", "api")
export type CommandSurface = typeof CommandSurface.Type

/** Every surface: what a command is available on unless it says otherwise. */
export const allSurfaces: ReadonlyArray<CommandSurface> = ["tui", "web", "api"]

/**
 * How a command runs (CMD-2): `core` commands run through the catalog and return text; `prompt`
 * commands (templates, skills) expand into the prompt the user sends; `surface` commands are
 * handled by each UI.
 */
export const CommandExecution = Schema.Literal("core", "surface", "prompt")
export type CommandExecution = typeof CommandExecution.Type

/**
 * Where a command comes from, in precedence order on a name clash (CMD-1): builtin, plugin, MCP
 * prompt, prompt template, skill.
 */
export const CommandSource = Schema.Literal("builtin", "plugin", "mcp", "template", "skill")
export type CommandSource = typeof CommandSource.Type

/** The rank of a source: lower wins a name clash (CMD-1). */
export const sourceRank = (source: CommandSource): number => CommandSource.literals.indexOf(source)

/** A slash command as the catalog lists it. */
export const CommandDescriptor = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  surfaces: Schema.Array(CommandSurface),
  execution: CommandExecution,
  source: CommandSource,
  /** What the arguments look like, e.g. `<file>` or `[focus]`. */
  argumentHint: Schema.optional(Schema.String)
})
export type CommandDescriptor = typeof CommandDescriptor.Type

/** A command in a listing: where it comes from, and, when another command holds its name, which. */
export const CommandListing = Schema.Struct({
  ...CommandDescriptor.fields,
  /** `core`, `plugin <id>`, or the file it was read from. */
  from: Schema.String,
  /** Present when a command of higher precedence has the same name: this one cannot be run. */
  shadowedBy: Schema.optional(Schema.Struct({ source: CommandSource, from: Schema.String }))
})
export type CommandListing = typeof CommandListing.Type

/**
 * What running a command gives the surface: text to show (`Text`), a prompt to send as the
 * user's (`Prompt`: a template or skill expanded), or text and the session to go on in
 * (`Switch`: `sessionId` absent means a new session).
 */
export const CommandOutput = Schema.Union(
  Schema.TaggedStruct("Text", { text: Schema.String }),
  Schema.TaggedStruct("Prompt", { prompt: Schema.String }),
  Schema.TaggedStruct("Switch", { text: Schema.String, sessionId: Schema.optional(Schema.String) })
)
export type CommandOutput = typeof CommandOutput.Type

/**
 * A command that could not run: `unknown` (no such name; `suggestions` holds close ones),
 * `unavailable` (not on this surface, or needs something absent), `usage` (bad arguments, or a
 * session it needs), `failed` (it ran and failed).
 */
export class CommandError extends Schema.TaggedError<CommandError>()("CommandError", {
  reason: Schema.Literal("unknown", "unavailable", "usage", "failed"),
  command: Schema.String,
  message: Schema.String,
  suggestions: Schema.optional(Schema.Array(Schema.String))
}) {}

/** Where a command runs: the session it acts on, the workspace, the surface asking. */
export interface CommandInvocation {
  readonly sessionId?: string | undefined
  /** The workspace; defaults to the catalog's. */
  readonly cwd?: string | undefined
  /** The surface asking; a command not declared for it is `unavailable`. */
  readonly surface?: CommandSurface | undefined
}

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

/** A command name: lower-case letters, digits, `:`, `_` and `-`, starting with a letter or digit. */
export const commandNamePattern = /^[a-z0-9][a-z0-9:_-]*$/

/** A slash command read from typed text. */
export interface SlashCommand {
  /** The command name, in lower case. */
  readonly name: string
  readonly args: string
  /**
   * Typed with capitals (`/Upper x`): the command of the lower-case name if there is one, else the
   * text is a prompt (`/Usr is…`); a lower-case name no command has is an unknown command.
   */
  readonly folded?: true
}

/**
 * Reads typed text as a slash command: `/name` as its first word, `name` matching
 * `commandNamePattern` once in lower case, then whitespace or the end; the rest (trimmed) is the
 * arguments. Anything else is a prompt: `/usr/bin is…` (a `/` follows the name), `/Users/…`,
 * ` /tmp` (a leading space: how to send text that starts with `/`).
 */
export const parseSlashCommand = (text: string): Option.Option<SlashCommand> => {
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text)
  if (match === null) return Option.none()
  const name = match[1]!.toLowerCase()
  if (!commandNamePattern.test(name)) return Option.none()
  const args = (match[2] ?? "").trim()
  return Option.some(name === match[1] ? { name, args } : { name, args, folded: true })
}
