// The shapes the catalog is built from: a command as any source gives it, a core command (a
// value, run with the catalog's services), a surface command (declared for the UIs only).

import type {
  CommandError,
  CommandExecution,
  CommandInvocation,
  CommandOutput,
  CommandSource,
  CommandSurface
} from "@alisio/domain/Command"
import type { SessionId } from "@alisio/domain/Ids"
import type { Limits } from "@alisio/domain/Limits"
import type * as Effect from "effect/Effect"
import type { SessionStore } from "../../SessionStore.js"
import type { SystemContext } from "../../SystemContext.js"
import type { Tools } from "../../Tools.js"

/** A command as a source gives it to the catalog. */
export interface CatalogCommand {
  readonly name: string
  readonly description: string
  readonly source: CommandSource
  readonly surfaces: ReadonlyArray<CommandSurface>
  readonly execution: CommandExecution
  readonly argumentHint?: string | undefined
  /** Where it comes from, for listings: `core`, `plugin <id>`, the file it was read from. */
  readonly from: string
  /** Runs it; absent for `surface` commands, which each UI handles. */
  readonly run?:
    | ((args: string, invocation: CommandInvocation) => Effect.Effect<CommandOutput, CommandError>)
    | undefined
}

/**
 * A source of commands beside the builtin ones and the plugin host's: MCP prompts, for instance.
 * `commands` is read on every listing and resolution, so it should be cheap (a `Ref.get`).
 */
export interface CommandProvider {
  /** Names the provider in diagnostics. */
  readonly id: string
  readonly commands: Effect.Effect<ReadonlyArray<CatalogCommand>>
}

/** What a core command is told about the call. */
export interface CoreInvocation {
  readonly name: string
  readonly args: string
  readonly sessionId: SessionId | undefined
  /** The workspace. */
  readonly cwd: string
  /** The model new sessions run with (`defaultModel` of the configuration), when known. */
  readonly defaultModel: string | undefined
  /** The user's limits, when the surface knows them. */
  readonly limits?: Limits | undefined
  /** The surface asking, when known: its remedies differ (`-s <id>` in a shell, `/resume` in the UI). */
  readonly surface?: CommandSurface | undefined
}

/** What core commands may use; optional services (`Providers`, `PluginHost`, `Compaction`) through `Effect.serviceOption`. */
export type CoreServices = SessionStore | Tools | SystemContext

/** A builtin command that runs in the catalog (CMD-2): a value, so the list of them is data. */
export interface CoreCommand {
  readonly name: string
  readonly description: string
  readonly argumentHint?: string | undefined
  /** Default: every surface. */
  readonly surfaces?: ReadonlyArray<CommandSurface> | undefined
  readonly run: (invocation: CoreInvocation) => Effect.Effect<CommandOutput, CommandError, CoreServices>
}

/** A builtin command each UI handles itself (help, exit, copy, …): declared so every surface lists it. */
export interface SurfaceCommand {
  readonly name: string
  readonly description: string
  readonly argumentHint?: string | undefined
  readonly surfaces: ReadonlyArray<CommandSurface>
}
