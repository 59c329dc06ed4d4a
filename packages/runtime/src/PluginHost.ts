import * as os from "node:os"
import * as path from "node:path"
import type { CommandDescriptor, PluginCommandContext } from "@alisio/domain/Command"
import { LanguageModel } from "@alisio/domain/LanguageModel"
import { type ContextInput, PluginApi, type PluginDefinition, PluginError } from "@alisio/domain/Plugin"
import { PluginFailureStage } from "@alisio/domain/RunEvent"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { ChildSessions } from "./ChildSessions.js"
import * as ExtensionsModule from "./Extensions.js"
import { Extensions, type ExtensionsService } from "./Extensions.js"
import { causeMessage, definitionOf, validateDefinition } from "./internal/plugins/definition.js"
import {
  diagnose,
  type HostInternals,
  makeApi,
  type PluginHomes,
  type PluginRecord,
  type PluginTimeouts,
  type RegisteredCommand,
  type RegisteredContext
} from "./internal/plugins/pluginApi.js"
import { discover, type ExternalCandidate, type SourcesInput } from "./internal/plugins/sources.js"
import * as PluginUiLayers from "./PluginUi.js"
import { PluginUi } from "./PluginUi.js"
import { Providers } from "./Providers.js"
import { RunEvents } from "./RunEvents.js"
import { SessionStore } from "./SessionStore.js"
import { Tools } from "./Tools.js"

export type { PluginHomes, PluginTimeouts } from "./internal/plugins/pluginApi.js"
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

/** A command a plugin registered, as the command catalog (CMD-1) lists it. */
export type PluginCommandEntry = CommandDescriptor & { readonly pluginId: string }

export interface Options {
  /** Plugins given as values (tests, embedders): builtin unless marked `external`. */
  readonly plugins?: ReadonlyArray<PluginDefinition | PluginValue> | undefined
  /** The CLI's builtin registry. */
  readonly builtin?: ReadonlyArray<BuiltinPlugin> | undefined
  /** `builtinPlugins` of the configuration: `enabled: false` turns one off; the rest is its config. */
  readonly builtinConfig?: { readonly [id: string]: { readonly [key: string]: unknown } } | undefined
  /** Where to look for external plugins; none are loaded without it. */
  readonly external?: SourcesInput | undefined
  /** Read-only runs load builtin plugins only; external ones are not even imported (PL-3). */
  readonly readOnly?: boolean | undefined
  /** `--disable-plugin` ids. */
  readonly disabled?: ReadonlyArray<string> | undefined
  /** Roots of the per-plugin folders; a temporary folder, removed when the host closes, by default. */
  readonly homes?: PluginHomes | undefined
  readonly timeouts?: Partial<PluginTimeouts> | undefined
}

/** A plugin given as a value, with where it should count as coming from. */
export interface PluginValue {
  readonly definition: PluginDefinition
  /** Load it as an external plugin: prefixed names, `internal` degraded (PL-3). */
  readonly external?: boolean | undefined
  readonly config?: unknown
}

export const defaultTimeouts: PluginTimeouts = { setupMs: 10_000, closeMs: 5_000, contextMs: 2_000, completeMs: 60_000 }

/** Text a context provider may add to the system prompt; the rest is cut. */
const CONTEXT_CHARS = 16_000

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
    readonly commands: {
      readonly list: Effect.Effect<ReadonlyArray<PluginCommandEntry>>
      readonly run: (name: string, args: string, context: PluginCommandContext) => Effect.Effect<string, PluginError>
    }
    /** The extension registry plugins provide for (EX-1): winners, `renderStartup`. */
    readonly extensions: ExtensionsService
  }
>() {}

interface Entry {
  readonly record: PluginRecord
  report: Omit<PluginReport, "tools" | "commands" | "providers" | "diagnostics">
  scope?: Scope.CloseableScope | undefined
}

const describeSource = (candidate: ExternalCandidate): string => {
  switch (candidate.origin) {
    case "flag":
      return `--plugin ${candidate.spec}`
    case "config":
      return `config ${candidate.spec}`
    default:
      return candidate.spec
  }
}

const temporaryHomes = Effect.acquireRelease(
  Effect.promise(async () => {
    const fs = await import("node:fs/promises")
    const root = await fs.mkdtemp(path.join(os.tmpdir(), "alisio-plugins-"))
    return root
  }),
  (root) => Effect.promise(() => import("node:fs/promises").then((fs) => fs.rm(root, { recursive: true, force: true })))
).pipe(
  Effect.map(
    (root): PluginHomes => ({
      state: path.join(root, "state"),
      config: path.join(root, "config"),
      cache: path.join(root, "cache")
    })
  )
)

export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const timeouts: PluginTimeouts = { ...defaultTimeouts, ...options.timeouts }
    const diagnostics = yield* Ref.make<ReadonlyArray<PluginDiagnostic>>([])
    const entries: Array<Entry> = []
    const homes = options.homes ?? (yield* temporaryHomes)
    const ui = yield* Effect.serviceOption(PluginUi)
    const uiService = Option.isSome(ui) ? ui.value : yield* PluginUiLayers.makeMemory

    const host: HostInternals = {
      tools: yield* Tools,
      events: yield* RunEvents,
      store: yield* SessionStore,
      children: yield* ChildSessions,
      providers: yield* Effect.serviceOption(Providers),
      fallbackModel: yield* Effect.serviceOption(LanguageModel),
      ui: uiService,
      homes,
      timeouts,
      contexts: yield* Ref.make<ReadonlyArray<RegisteredContext>>([]),
      commands: yield* Ref.make<ReadonlyMap<string, RegisteredCommand>>(new Map()),
      extensions: Option.getOrUndefined(yield* Effect.serviceOption(Extensions)) ?? (yield* ExtensionsModule.make()),
      report: (diagnostic) =>
        Effect.zipRight(
          Ref.update(diagnostics, (all) => [...all, diagnostic]),
          uiService.diagnostic(diagnostic)
        )
    }

    const disabled = new Set(options.disabled ?? [])
    const newEntry = (report: Entry["report"], builtin: boolean): Entry => {
      const entry: Entry = {
        record: { id: report.id, builtin, tools: [], commands: [], providers: [], diagnostics: [] },
        report
      }
      entries.push(entry)
      return entry
    }
    const loadedEntry = (id: string) => entries.find((entry) => entry.report.loaded && entry.record.id === id)

    const closeScope = (entry: Entry) =>
      Effect.gen(function* () {
        const scope = entry.scope
        if (scope === undefined) return
        entry.scope = undefined
        // Callers often close from a finalizer (uninterruptible): waiting must stay interruptible
        // for the bound to hold, and the close goes on in the background if it takes longer.
        const closed = yield* Scope.close(scope, Exit.void).pipe(
          Effect.disconnect,
          Effect.timeoutOption(Duration.millis(timeouts.closeMs)),
          Effect.interruptible
        )
        if (Option.isNone(closed)) {
          yield* diagnose(host, entry.record, "close", `did not finish closing within ${timeouts.closeMs} ms`)
        }
      })

    /** Runs a plugin's setup in a scope of its own; a failure closes that scope, rolling everything back. */
    const start = (
      definition: PluginDefinition,
      placement: { readonly builtin: boolean; readonly from: string; readonly config: unknown }
    ): Effect.Effect<Entry> =>
      Effect.gen(function* () {
        const entry = newEntry(
          {
            id: definition.id,
            version: definition.version,
            ...(definition.description === undefined ? {} : { description: definition.description }),
            source: placement.builtin ? "builtin" : "external",
            from: placement.from,
            enabled: !disabled.has(definition.id),
            trusted: true,
            loaded: false
          },
          placement.builtin
        )
        if (!entry.report.enabled) return entry
        const holder = loadedEntry(definition.id)
        if (holder !== undefined) {
          yield* diagnose(
            host,
            entry.record,
            "setup",
            `is refused: a plugin with this id is already loaded (from ${holder.report.from}); this one is from ${placement.from}`
          )
          return entry
        }
        const scope = yield* Scope.make()
        entry.scope = scope
        const api = yield* makeApi(host, entry.record, scope, placement.config)
        // Interruptible whatever the caller's region: what the plugin forks inherits it, and its
        // scope must be able to stop those fibers.
        const exit = yield* definition.setup.pipe(
          Effect.provideService(PluginApi, api),
          Scope.extend(scope),
          Effect.interruptible,
          Effect.timeoutFail({
            duration: Duration.millis(timeouts.setupMs),
            onTimeout: () =>
              new PluginError({ pluginId: definition.id, message: `took longer than ${timeouts.setupMs} ms` })
          }),
          Effect.exit
        )
        if (Exit.isFailure(exit)) {
          yield* closeScope(entry)
          yield* diagnose(
            host,
            entry.record,
            "setup",
            `${Cause.isFailure(exit.cause) ? "setup failed" : "setup crashed"}: ${causeMessage(exit.cause)}; everything it registered was removed`
          )
          return entry
        }
        entry.report = { ...entry.report, loaded: true }
        return entry
      })

    const failedSource = (id: string, from: string, builtin: boolean, stage: "import" | "discover", message: string) =>
      Effect.gen(function* () {
        const entry = newEntry(
          { id, source: builtin ? "builtin" : "external", from, enabled: true, trusted: true, loaded: false },
          builtin
        )
        yield* diagnose(host, entry.record, stage, message)
      })

    const snapshot = (entry: Entry): PluginReport => ({
      ...entry.report,
      tools: [...entry.record.tools],
      commands: [...entry.record.commands],
      providers: [...entry.record.providers],
      diagnostics: [...entry.record.diagnostics]
    })

    yield* Effect.addFinalizer(() =>
      Effect.forEach([...entries].reverse(), closeScope, { discard: true }).pipe(Effect.ignore)
    )

    // Builtin plugins (PL-2): loaded even read-only, configured under builtinPlugins.<id>.
    for (const builtin of options.builtin ?? []) {
      const { enabled, ...config } = options.builtinConfig?.[builtin.id] ?? {}
      if (enabled === false || disabled.has(builtin.id)) {
        newEntry(
          { id: builtin.id, source: "builtin", from: "builtin", enabled: false, trusted: true, loaded: false },
          true
        )
        continue
      }
      const loaded = yield* Effect.tryPromise(async () => await builtin.load()).pipe(
        Effect.map((definition) => validateDefinition(definition, `the builtin plugin ${builtin.id}`)),
        Effect.catchAll((error) =>
          Effect.succeed(Either.left(`could not be loaded: ${causeMessage(Cause.fail(error.error))}`))
        )
      )
      if (Either.isLeft(loaded)) {
        yield* failedSource(builtin.id, "builtin", true, "import", loaded.left)
        continue
      }
      yield* start(loaded.right, { builtin: true, from: "builtin", config })
    }

    for (const value of options.plugins ?? []) {
      const plugin: PluginValue = "definition" in value ? value : { definition: value }
      yield* start(plugin.definition, {
        builtin: plugin.external !== true,
        from: plugin.external === true ? "a value" : "builtin",
        config: plugin.config ?? {}
      })
    }

    if (options.external !== undefined) yield* loadExternal(options.external, options.readOnly === true)

    function loadExternal(sources: SourcesInput, readOnly: boolean) {
      return Effect.gen(function* () {
        const found = yield* discover(sources)
        for (const problem of found.problems) {
          yield* failedSource(problem.spec, problem.spec, false, "discover", problem.message)
        }
        for (const skipped of found.skipped) {
          const entry = newEntry(
            {
              id: skipped.spec,
              source: "external",
              from: skipped.spec,
              enabled: false,
              trusted: skipped.origin !== "project",
              loaded: false
            },
            false
          )
          if (skipped.origin === "project")
            yield* diagnose(host, entry.record, "discover", `not loaded: ${skipped.reason}`)
          else entry.record.diagnostics.push(skipped.reason)
        }
        if (found.candidates.length === 0) return
        if (readOnly) {
          for (const candidate of found.candidates) {
            const entry = newEntry(
              {
                id: candidate.spec,
                source: "external",
                from: describeSource(candidate),
                enabled: false,
                trusted: candidate.trusted,
                loaded: false
              },
              false
            )
            entry.record.diagnostics.push("external plugins are off under --read-only")
          }
          return
        }
        const hooks = yield* Effect.promise(() => import("./internal/plugins/moduleHooks.js"))
        if (!hooks.sharedModulesIncluded) {
          for (const candidate of found.candidates) {
            yield* failedSource(
              candidate.spec,
              describeSource(candidate),
              false,
              "import",
              "not loaded: this build of alisio cannot share its modules with external plugins (dist/bundle/plugins is missing?)"
            )
          }
          return
        }
        const roots = found.candidates.map((candidate) => candidate.root)
        for (const candidate of found.candidates) {
          const from = describeSource(candidate)
          const imported = yield* Effect.tryPromise(() =>
            hooks.sharingModules(roots, () => import(hooks.entryURL(candidate.entry)))
          ).pipe(Effect.either)
          if (Either.isLeft(imported)) {
            yield* failedSource(
              candidate.spec,
              from,
              false,
              "import",
              `could not be imported from ${candidate.entry}: ${causeMessage(Cause.die(imported.left.error))}`
            )
            continue
          }
          const definition = definitionOf(imported.right, candidate.entry)
          if (Either.isLeft(definition)) {
            yield* failedSource(candidate.spec, from, false, "import", definition.left)
            continue
          }
          yield* start(definition.right, { builtin: false, from, config: candidate.config })
        }
      })
    }

    const contextFor = (input: ContextInput) =>
      Effect.gen(function* () {
        const providers = yield* Ref.get(host.contexts)
        const sections = yield* Effect.forEach(
          providers,
          ({ pluginId, provider }) =>
            Effect.suspend(() => provider(input)).pipe(
              Effect.timeoutFail({
                duration: Duration.millis(timeouts.contextMs),
                onTimeout: () => new PluginError({ pluginId, message: `took longer than ${timeouts.contextMs} ms` })
              }),
              Effect.map((text) => {
                if (typeof text !== "string" || text.trim() === "") return undefined
                const body = text.length > CONTEXT_CHARS ? `${text.slice(0, CONTEXT_CHARS)}…` : text
                return `Context from the plugin ${pluginId}:\n${body.trim()}`
              }),
              Effect.catchAllCause((cause) => {
                if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
                const entry = loadedEntry(pluginId)
                const message = `its context provider failed: ${causeMessage(cause)}`
                return entry === undefined
                  ? Effect.as(host.report({ pluginId, stage: "context", message }), undefined)
                  : Effect.as(diagnose(host, entry.record, "context", message), undefined)
              })
            ),
          { concurrency: "unbounded" }
        )
        return sections.filter((section): section is string => section !== undefined).join("\n\n")
      })

    const runCommand = (name: string, args: string, context: PluginCommandContext) =>
      Effect.gen(function* () {
        const registered = (yield* Ref.get(host.commands)).get(name)
        if (registered === undefined) {
          return yield* new PluginError({ pluginId: "host", message: `No plugin command named "${name}".` })
        }
        const { command, pluginId } = registered
        return yield* Effect.suspend(() => command.execute(args, context)).pipe(
          Effect.catchAllCause((cause) => {
            if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
            const message = `The command ${name} failed: ${causeMessage(cause)}`
            const entry = loadedEntry(pluginId)
            const report =
              Cause.isFailure(cause) || entry === undefined
                ? Effect.void
                : diagnose(host, entry.record, "command", message)
            return Effect.zipRight(report, Effect.fail(new PluginError({ pluginId, message })))
          })
        )
      })

    return PluginHost.of({
      plugins: Effect.sync(() => entries.map(snapshot)),
      diagnostics: Ref.get(diagnostics),
      load: (plugin) =>
        Effect.map(
          start(plugin.definition, {
            builtin: plugin.external !== true,
            from: plugin.external === true ? "a value" : "builtin",
            config: plugin.config ?? {}
          }),
          snapshot
        ),
      unload: (id) =>
        Effect.suspend(() => {
          const entry = loadedEntry(id)
          if (entry === undefined) return Effect.void
          entry.report = { ...entry.report, loaded: false }
          return closeScope(entry)
        }),
      contextFor,
      commands: {
        list: Effect.map(Ref.get(host.commands), (all) =>
          [...all.values()].map((entry) => ({ ...entry.descriptor, pluginId: entry.pluginId }))
        ),
        run: runCommand
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
