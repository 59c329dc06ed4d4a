import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type { CommandDescriptor, PluginCommandContext } from "@alisio/domain/Command"
import { LanguageModel } from "@alisio/domain/LanguageModel"
import type { ContextInput, PluginDefinition } from "@alisio/domain/Plugin"
import { PluginError } from "@alisio/domain/Plugin"
import { PluginFailureStage } from "@alisio/domain/RunEvent"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { ChildSessions } from "./ChildSessions.js"
import { CompactionHooks } from "./Compaction.js"
import * as ExtensionsModule from "./Extensions.js"
import { Extensions, type ExtensionsService } from "./Extensions.js"
import { contextFor, contextSections, runCommand } from "./internal/plugins/contributions.js"
import type {
  HostInternals,
  PluginHomes,
  PluginTimeouts,
  RegisteredCommand,
  RegisteredContext
} from "./internal/plugins/host.js"
import { makeLifecycle, type Placement } from "./internal/plugins/lifecycle.js"
import { loadBuiltin, loadExternal } from "./internal/plugins/loading.js"
import type { SourcesInput } from "./internal/plugins/sources.js"
import * as PluginUiModule from "./PluginUi.js"
import { PluginUi } from "./PluginUi.js"
import { Providers } from "./Providers.js"
import { RunEvents } from "./RunEvents.js"
import { SessionStore } from "./SessionStore.js"
import { Tools } from "./Tools.js"

export type { PluginHomes, PluginTimeouts } from "./internal/plugins/host.js"
export type { ExternalCandidate, ExternalOrigin, PluginEntry, SourcesInput } from "./internal/plugins/sources.js"

/** Something wrong with a plugin, told in one line (PL-6); the host keeps running. */
export const PluginDiagnostic = Schema.Struct({
  /** The plugin's id, or where it was looked for when it never got one. */
  pluginId: Schema.String,
  stage: PluginFailureStage,
  message: Schema.String
})
export type PluginDiagnostic = typeof PluginDiagnostic.Type

/** One plugin as `alisio plugins list` shows it. */
export const PluginReport = Schema.Struct({
  /** The plugin's id; for a plugin that was never imported, where it was found. */
  id: Schema.String,
  version: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  source: Schema.Literal("builtin", "external"),
  /** `builtin`, `--plugin <spec>`, `config <spec>`, or the folder it was found in. */
  from: Schema.String,
  enabled: Schema.Boolean,
  trusted: Schema.Boolean,
  /** Whether its setup ran to the end and its registrations are live. */
  loaded: Schema.Boolean,
  tools: Schema.Array(Schema.String),
  commands: Schema.Array(Schema.String),
  providers: Schema.Array(Schema.String),
  diagnostics: Schema.Array(Schema.String)
})
export type PluginReport = typeof PluginReport.Type

/** A builtin plugin as the CLI registers it (PL-1, PKG-2): its id, and its definition loaded on demand. */
export interface BuiltinPlugin {
  readonly id: string
  readonly load: () => PluginDefinition | Promise<PluginDefinition>
}

/** What one plugin's context providers added for a run. */
export interface PluginContextSection {
  readonly pluginId: string
  readonly text: string
}

/** A command a plugin registered, as the command catalog (CMD-1) lists it. */
export type PluginCommandEntry = CommandDescriptor & { readonly pluginId: string }

export interface Options {
  /** Plugins given as values (tests, embedders): builtin unless marked `external`. */
  readonly plugins?: ReadonlyArray<PluginDefinition | PluginValue> | undefined
  /** The CLI's builtin registry. */
  readonly builtin?: ReadonlyArray<BuiltinPlugin> | undefined
  /** `builtinPlugins` of the configuration: `enabled: false` turns one off; the rest is its config. */
  readonly builtinConfig?: { readonly [id: string]: { readonly [key: string]: unknown } } | undefined
  /**
   * The configuration files `builtinConfig` merges, weakest first, each with its own
   * `builtinPlugins`: a plugin's `api.configSource` names the file that set a key.
   */
  readonly builtinConfigFiles?: ReadonlyArray<BuiltinConfigFile> | undefined
  /** Where to look for external plugins; none are loaded without it. */
  readonly external?: SourcesInput | undefined
  /** Whether the project's own files are trusted (`api.trustProject`); `external.trustProject` by default. */
  readonly trustProject?: boolean | undefined
  /** Read-only runs load builtin plugins only; external ones are not even imported (PL-3). */
  readonly readOnly?: boolean | undefined
  /** `--disable-plugin` ids. */
  readonly disabled?: ReadonlyArray<string> | undefined
  /** Roots of the per-plugin folders; a temporary folder, removed when the host closes, by default. */
  readonly homes?: PluginHomes | undefined
  readonly timeouts?: Partial<PluginTimeouts> | undefined
  /** `decisions.telemetry` of the configuration: false keeps reported decisions out of the store (EV-6). */
  readonly decisionTelemetry?: boolean | undefined
}

/** One configuration file's `builtinPlugins`. */
export interface BuiltinConfigFile {
  readonly file: string
  readonly builtinPlugins?: { readonly [id: string]: { readonly [key: string]: unknown } } | undefined
}

/** A plugin given as a value, with where it should count as coming from. */
export interface PluginValue {
  readonly definition: PluginDefinition
  /** Load it as an external plugin: prefixed names, `internal` degraded (PL-3). */
  readonly external?: boolean | undefined
  readonly config?: unknown
}

export const defaultTimeouts: PluginTimeouts = { setupMs: 10_000, closeMs: 5_000, contextMs: 2_000, completeMs: 60_000 }

/**
 * The plugin host (PL-1…PL-6): loads builtin and external plugins, runs each `setup` in a scope
 * of its own with a `PluginApi` narrowed to it, and keeps the registries the rest of the program
 * reads: tools (in `Tools`), commands, context providers, extensions (`Extensions`). Closing the host closes
 * every plugin's scope, each within `timeouts.closeMs`.
 */
export class PluginHost extends Context.Tag("@alisio/runtime/PluginHost")<
  PluginHost,
  {
    /** Every plugin the host knows of, loaded or not, in load order. */
    readonly plugins: Effect.Effect<ReadonlyArray<PluginReport>>
    readonly diagnostics: Effect.Effect<ReadonlyArray<PluginDiagnostic>>
    /** Loads one more plugin; its scope belongs to the host until `unload`. */
    readonly load: (plugin: PluginValue) => Effect.Effect<PluginReport>
    /** Closes a plugin's scope: everything it registered goes away. */
    readonly unload: (id: string) => Effect.Effect<void>
    /** The context every provider adds for a run, each named by its plugin and bounded in time. */
    readonly contextFor: (input: ContextInput) => Effect.Effect<string>
    /** The same, one section per plugin (without the heading), for listings of the context (`/context`). */
    readonly contextSections: (input: ContextInput) => Effect.Effect<ReadonlyArray<PluginContextSection>>
    readonly commands: {
      readonly list: Effect.Effect<ReadonlyArray<PluginCommandEntry>>
      readonly run: (name: string, args: string, context: PluginCommandContext) => Effect.Effect<string, PluginError>
    }
    /** The extension registry plugins provide for (EX-1): winners, `renderStartup`. */
    readonly extensions: ExtensionsService
  }
>() {}

const temporaryHomes = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "alisio-plugins-"))),
  (root) => Effect.promise(() => fs.rm(root, { recursive: true, force: true }))
).pipe(
  Effect.map(
    (root): PluginHomes => ({
      state: path.join(root, "state"),
      config: path.join(root, "config"),
      cache: path.join(root, "cache")
    })
  )
)

const placementOf = (plugin: PluginValue): Placement => ({
  builtin: plugin.external !== true,
  from: plugin.external === true ? "a value" : "builtin",
  config: plugin.config ?? {}
})

export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const diagnostics = yield* Ref.make<ReadonlyArray<PluginDiagnostic>>([])
    const ui = Option.getOrUndefined(yield* Effect.serviceOption(PluginUi)) ?? (yield* PluginUiModule.makeMemory)
    const host: HostInternals = {
      tools: yield* Tools,
      events: yield* RunEvents,
      store: yield* SessionStore,
      children: yield* ChildSessions,
      providers: yield* Effect.serviceOption(Providers),
      fallbackModel: yield* Effect.serviceOption(LanguageModel),
      ui,
      homes: options.homes ?? (yield* temporaryHomes),
      trustProject: options.trustProject ?? options.external?.trustProject === true,
      timeouts: { ...defaultTimeouts, ...options.timeouts },
      decisionTelemetry: options.decisionTelemetry ?? true,
      contexts: yield* Ref.make<ReadonlyArray<RegisteredContext>>([]),
      commands: yield* Ref.make<ReadonlyMap<string, RegisteredCommand>>(new Map()),
      extensions: Option.getOrUndefined(yield* Effect.serviceOption(Extensions)) ?? (yield* ExtensionsModule.make()),
      compactionHooks: yield* Effect.serviceOption(CompactionHooks),
      report: (diagnostic) =>
        Effect.zipRight(
          Ref.update(diagnostics, (all) => [...all, diagnostic]),
          ui.diagnostic(diagnostic)
        )
    }
    const disabled = new Set(options.disabled ?? [])
    const lifecycle = makeLifecycle(host, disabled)
    yield* Effect.addFinalizer(() => lifecycle.closeAll)

    yield* loadBuiltin(
      lifecycle,
      options.builtin ?? [],
      options.builtinConfig ?? {},
      options.builtinConfigFiles ?? [],
      disabled
    )
    for (const value of options.plugins ?? []) {
      const plugin: PluginValue = "definition" in value ? value : { definition: value }
      yield* lifecycle.start(plugin.definition, placementOf(plugin))
    }
    if (options.external !== undefined) yield* loadExternal(lifecycle, options.external, options.readOnly === true)

    return PluginHost.of({
      plugins: Effect.sync(() => lifecycle.entries.map(lifecycle.snapshot)),
      diagnostics: Ref.get(diagnostics),
      load: (plugin) => Effect.map(lifecycle.start(plugin.definition, placementOf(plugin)), lifecycle.snapshot),
      unload: lifecycle.unload,
      contextFor: contextFor(host, lifecycle),
      contextSections: contextSections(host, lifecycle),
      commands: {
        list: Effect.map(Ref.get(host.commands), (all) =>
          [...all.values()].map((entry) => ({ ...entry.descriptor, pluginId: entry.pluginId }))
        ),
        run: runCommand(host, lifecycle)
      },
      extensions: host.extensions
    })
  })

/**
 * The host with the given plugins loaded. It needs the runtime (`AgentRuntime.layer`) and a
 * `SessionStore`; `Providers`, `LanguageModel` and `PluginUi` are used when present.
 */
export const layer = (options: Options = {}) => Layer.scoped(PluginHost, make(options))

/**
 * One plugin as a Layer over a `PluginHost`: loaded when the Layer is built, unloaded (its scope
 * closed) when it is released. This is how a plugin is tested: compose it with `layer()`, the
 * runtime and the FakeProvider, and run a real conversation.
 */
export const plugin = (
  definition: PluginDefinition,
  options: { readonly external?: boolean; readonly config?: unknown } = {}
): Layer.Layer<never, PluginError, PluginHost> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const host = yield* PluginHost
      const report = yield* Effect.acquireRelease(host.load({ definition, ...options }), () =>
        host.unload(definition.id)
      )
      if (!report.loaded) {
        return yield* new PluginError({
          pluginId: definition.id,
          message: `The plugin ${definition.id} did not load: ${report.diagnostics.join("; ") || "it is disabled"}`
        })
      }
    })
  )
