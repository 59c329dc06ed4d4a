import { closeMatches } from "@alisio/domain/CloseMatches"
import {
  CommandError,
  type CommandInvocation,
  type CommandListing,
  type CommandOutput,
  type CommandSurface
} from "@alisio/domain/Command"
import type { StoreError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { Limits } from "@alisio/domain/Limits"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { coreCommands, surfaceCommands } from "./internal/commands/core/index.js"
import type {
  CatalogCommand,
  CommandProvider,
  CoreCommand,
  CoreServices,
  SurfaceCommand
} from "./internal/commands/entry.js"
import { type CatalogIndex, indexCommands, onSurface } from "./internal/commands/resolve.js"
import { readSettings, type SessionSettings } from "./internal/commands/sessionSettings.js"
import { fromCore, fromSkill, fromSurface, fromTemplate, pluginCommands } from "./internal/commands/sources.js"
import { discoverTemplates, pathStamps, type Stamp, type Template } from "./internal/commands/templates.js"
import type { FileDiagnostic } from "./internal/context/frontMatter.js"
import { templateRoots } from "./internal/context/sources.js"
import { PluginHost } from "./PluginHost.js"
import { SessionStore, type SessionStoreService } from "./SessionStore.js"
import { SystemContext } from "./SystemContext.js"
import { Tools } from "./Tools.js"

export { closeMatches, editDistance } from "@alisio/domain/CloseMatches"
export { columns } from "./internal/commands/core/shared.js"
export type {
  CatalogCommand,
  CommandProvider,
  CoreCommand,
  CoreInvocation,
  CoreServices,
  SurfaceCommand
} from "./internal/commands/entry.js"
export type { SessionSettings } from "./internal/commands/sessionSettings.js"
export { expandTemplate } from "./internal/commands/templates.js"
export { coreCommands, surfaceCommands }

export interface Options {
  /** The model new sessions run with (`defaultModel` of the configuration), for `/model`. */
  readonly defaultModel?: string | undefined
  /** The user's limits (configuration and flags), for commands that talk to the model (`/compact`). */
  readonly limits?: Limits | undefined
  /** The core commands (default `coreCommands`); more join as values. */
  readonly core?: ReadonlyArray<CoreCommand> | undefined
  /** The surface commands declared for the UIs (default `surfaceCommands`). */
  readonly surface?: ReadonlyArray<SurfaceCommand> | undefined
  /** Sources of more commands, e.g. MCP prompts; `contribute` adds one later. */
  readonly providers?: ReadonlyArray<CommandProvider> | undefined
}

/**
 * The slash commands of every surface (CMD-1, CMD-2): builtin ones (core commands, which run
 * here, and surface commands, which the UIs handle), the plugin host's, those other sources
 * contribute (MCP prompts), prompt templates and skills (`skill:<id>`). On a name clash the
 * source earlier in that order wins; the other is listed as shadowed, never dropped.
 */
export class CommandCatalog extends Context.Tag("@alisio/runtime/CommandCatalog")<
  CommandCatalog,
  {
    /** Every command in precedence order (shadowed ones flagged); only those of `surface` when given. */
    readonly list: (surface?: CommandSurface) => Effect.Effect<ReadonlyArray<CommandListing>>
    /** The command `name` runs on `surface`: `unknown` (with close matches) or `unavailable` when none. */
    readonly resolve: (name: string, surface?: CommandSurface) => Effect.Effect<CommandListing, CommandError>
    /** Runs a command: core ones give text, templates and skills the prompt to send. */
    readonly execute: (
      name: string,
      args: string,
      invocation?: CommandInvocation
    ) => Effect.Effect<CommandOutput, CommandError>
    /** Problems with template and skill files (each names its file; the file is used unless it says so). */
    readonly diagnostics: Effect.Effect<ReadonlyArray<FileDiagnostic>>
    /** Adds a source of commands for the life of the scope. */
    readonly contribute: (provider: CommandProvider) => Effect.Effect<void, never, Scope.Scope>
    /** Reads the template folders again. */
    readonly reload: Effect.Effect<void>
    /**
     * Reads the template folders again if a template was added, removed, renamed or edited since
     * they were read (the folders' and files' times and sizes say so; no file is read otherwise). `list` does it, and so does `resolve`
     * when a name is unknown: a template added during a session is usable at once.
     */
    readonly refresh: Effect.Effect<void>
  }
>() {}

/** The slash command typed on a surface that has no such command: unknown, with close matches. */
const unknown = (name: string, available: Iterable<string>) => {
  const suggestions = closeMatches(name, available)
  return new CommandError({
    reason: "unknown",
    command: name,
    message:
      suggestions.length === 0
        ? `No command is named /${name}.`
        : `No command is named /${name}; did you mean ${suggestions.map((s) => `/${s}`).join(", ")}?`,
    suggestions
  })
}

export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const context = yield* SystemContext
    // Only the services core commands need come from here; optional ones (`Compaction`,
    // `Providers`, `PluginHost`) are read from the caller's context when a command runs.
    const services = Context.pick(SessionStore, Tools, SystemContext)(yield* Effect.context<CoreServices>())
    const host = Option.getOrUndefined(yield* Effect.serviceOption(PluginHost))
    const { cwd } = context.options
    const environment = { services, cwd, defaultModel: options.defaultModel, limits: options.limits }
    const builtin: ReadonlyArray<CatalogCommand> = [
      ...(options.core ?? coreCommands).map((command) => fromCore(command, environment)),
      ...(options.surface ?? surfaceCommands).map(fromSurface)
    ]
    const skills = context.skills.skills.map(fromSkill)
    const contributed = yield* Ref.make<ReadonlyArray<CommandProvider>>(options.providers ?? [])

    // Templates are read on first use: a run that types no slash command never reads the folders.
    type Discovered = {
      readonly templates: ReadonlyArray<CatalogCommand>
      readonly diagnostics: ReadonlyArray<FileDiagnostic>
      readonly paths: ReadonlyArray<string>
      readonly stamps: ReadonlyArray<Stamp>
    }
    const discovered = yield* Ref.make(Option.none<Discovered>())
    const templates = Effect.flatMap(Ref.get(discovered), (cached) =>
      Option.isSome(cached)
        ? Effect.succeed(cached.value)
        : Effect.tap(
            Effect.map(Effect.flatMap(templateRoots(context.options), discoverTemplates), (found) => ({
              ...found,
              templates: found.templates.map((template: Template) => fromTemplate(template))
            })),
            (value) => Ref.set(discovered, Option.some(value))
          )
    )

    const index = Effect.gen(function* () {
      const [fromHost, providers, fromFiles] = yield* Effect.all([
        host === undefined ? Effect.succeed([]) : pluginCommands(host, cwd),
        Ref.get(contributed),
        templates
      ])
      const others = yield* Effect.forEach(providers, (provider) => provider.commands)
      return indexCommands([...builtin, ...fromHost, ...others.flat(), ...fromFiles.templates, ...skills])
    })

    const refresh = Effect.flatMap(Ref.get(discovered), (cached) =>
      Option.isNone(cached)
        ? Effect.void
        : Effect.flatMap(pathStamps(cached.value.paths), (stamps) =>
            stamps.every((stamp, i) => stamp === cached.value.stamps[i])
              ? Effect.void
              : Ref.set(discovered, Option.none())
          )
    )

    /** The index that knows `name` if a change to the template folders brought it, else the one given. */
    const withRefresh = (name: string, built: CatalogIndex) =>
      built.effective.has(name) ? Effect.succeed(built) : Effect.zipRight(refresh, index)

    const find = (name: string, surface?: CommandSurface) =>
      Effect.flatMap(
        Effect.flatMap(index, (built) => withRefresh(name, built)),
        (built) => {
          const command = built.effective.get(name)
          if (command === undefined) {
            const names = [...built.effective.values()].filter((c) => onSurface(c, surface)).map((c) => c.name)
            return Effect.fail(unknown(name, names))
          }
          if (!onSurface(command, surface)) {
            return Effect.fail(
              new CommandError({
                reason: "unavailable",
                command: name,
                message: `/${name} is a command of ${command.surfaces.join(" and ")}, not of ${surface}.`
              })
            )
          }
          const listing = built.listings.find((entry) => entry.name === name && entry.shadowedBy === undefined)!
          return Effect.succeed({ command, listing })
        }
      )

    return CommandCatalog.of({
      list: (surface) =>
        Effect.map(Effect.zipRight(refresh, index), (built) =>
          built.listings.filter((listing) => onSurface(listing, surface))
        ),
      resolve: (name, surface) => Effect.map(find(name, surface), (found) => found.listing),
      execute: (name, args, invocation = {}) =>
        Effect.flatMap(find(name, invocation.surface), ({ command }) =>
          command.run === undefined
            ? Effect.fail(
                new CommandError({
                  reason: "unavailable",
                  command: name,
                  message: `/${name} is handled by the interactive interface (${command.surfaces.join(", ")}).`
                })
              )
            : command.run(args.trim(), invocation)
        ),
      diagnostics: Effect.map(templates, (found) => [...found.diagnostics, ...context.skills.diagnostics]),
      contribute: (provider) =>
        Effect.acquireRelease(
          Ref.update(contributed, (all) => [...all, provider]),
          () => Ref.update(contributed, (all) => all.filter((p) => p !== provider))
        ),
      reload: Ref.set(discovered, Option.none()),
      refresh
    })
  })

/** The catalog over a `SystemContext`, the store and tools; uses `PluginHost`, `Providers` and `Compaction` when present. */
export const layer = (options: Options = {}): Layer.Layer<CommandCatalog, never, CoreServices> =>
  Layer.effect(CommandCatalog, make(options))

/** What `/model` and `/effort` set for a session (`alisio run -s` reads it for the session's next run). */
export const sessionSettings = (
  store: SessionStoreService,
  sessionId: SessionId
): Effect.Effect<SessionSettings, StoreError> => readSettings(store, sessionId)
