// The `PluginApi` one plugin receives: every namespace already narrowed to it (PL-2, PL-3), every
// registration tied to the plugin's scope so that closing it (unload, a failed setup, the end of
// the process) takes everything back.

import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { CommandDescriptor, PluginCommand } from "@alisio/domain/Command"
import { ToolError } from "@alisio/domain/Errors"
import type { LanguageModelService } from "@alisio/domain/LanguageModel"
import { type ContextProvider, type PluginApiService, PluginError, type PluginPaths } from "@alisio/domain/Plugin"
import type { KnownRunEvent, PluginFailureStage } from "@alisio/domain/RunEvent"
import type { Tool } from "@alisio/domain/Tool"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type { ChildSessions } from "../../ChildSessions.js"
import type { CompactionHooksService } from "../../Compaction.js"
import { CurrentRun } from "../../CurrentRun.js"
import type { ExtensionsService } from "../../Extensions.js"
import type { PluginDiagnostic } from "../../PluginHost.js"
import { openSqlite } from "../../PluginStorage.js"
import type { PluginUi } from "../../PluginUi.js"
import type { Providers } from "../../Providers.js"
import type { RunEvents } from "../../RunEvents.js"
import type { SessionStoreService } from "../../SessionStore.js"
import * as ToolOrigins from "../../ToolOrigins.js"
import { Tools } from "../../Tools.js"
import { checkChildCwd } from "./childWorkspace.js"
import { complete } from "./completion.js"
import { causeMessage, messageOf } from "./definition.js"
import { observe } from "./observers.js"

/** The roots under which every plugin gets its own folders. */
export interface PluginHomes {
  readonly state: string
  readonly config: string
  readonly cache: string
}

export interface PluginTimeouts {
  /** How long `setup` may take. */
  readonly setupMs: number
  /** How long closing one plugin's scope may take when the host closes. */
  readonly closeMs: number
  /** How long one context provider may take at the start of a run. */
  readonly contextMs: number
  /** How long `api.model.complete` may take. */
  readonly completeMs: number
}

/** What a plugin registered, for `plugins list` and for its diagnostics. */
export interface PluginRecord {
  readonly id: string
  readonly builtin: boolean
  /** An external plugin's folder. */
  readonly root?: string | undefined
  readonly tools: Array<string>
  readonly commands: Array<string>
  readonly providers: Array<string>
  readonly diagnostics: Array<string>
}

export interface RegisteredCommand {
  readonly pluginId: string
  readonly descriptor: CommandDescriptor
  readonly command: PluginCommand
}

export interface RegisteredContext {
  readonly pluginId: string
  readonly provider: ContextProvider
}

/** The host's services and registries, shared by every plugin's API. */
export interface HostInternals {
  readonly tools: Tools["Type"]
  readonly events: RunEvents["Type"]
  readonly store: SessionStoreService
  readonly children: ChildSessions["Type"]
  readonly providers: Option.Option<Providers["Type"]>
  readonly fallbackModel: Option.Option<LanguageModelService>
  readonly ui: PluginUi["Type"]
  readonly homes: PluginHomes
  /** `--trust-project`: what `api.trustProject` says. */
  readonly trustProject: boolean
  readonly timeouts: PluginTimeouts
  readonly contexts: Ref.Ref<ReadonlyArray<RegisteredContext>>
  readonly commands: Ref.Ref<ReadonlyMap<string, RegisteredCommand>>
  readonly extensions: ExtensionsService
  /** The compaction hooks of the runtime (CTX-1), when it has them. */
  readonly compactionHooks: Option.Option<CompactionHooksService>
  readonly report: (diagnostic: PluginDiagnostic) => Effect.Effect<void>
}

const OBSERVER_CAPACITY = 256
const commandNamePattern = /^[a-z0-9][a-z0-9_-]{0,63}$/

/** Creates a folder for the plugin alone (0700, tightened if it exists: ST-6). */
const privateFolder = (pluginId: string, dir: string) =>
  Effect.tryPromise({
    try: async () => {
      await fs.mkdir(dir, { recursive: true, mode: 0o700 })
      await fs.chmod(dir, 0o700)
    },
    catch: (error) =>
      new PluginError({ pluginId, message: `cannot make its folder ${dir} (${(error as Error).message})` })
  })

export const pluginPaths = (homes: PluginHomes, pluginId: string): PluginPaths => ({
  state: path.join(homes.state, "plugins", pluginId),
  config: path.join(homes.config, "plugin-config", pluginId),
  cache: path.join(homes.cache, "plugins", pluginId),
  configHome: homes.config
})

/** An error a tool failed with, as the model will read it. */
const asToolError = (toolName: string, error: unknown): ToolError => {
  if (Schema.is(ToolError)(error)) return error
  // The plugin's own Schema.TaggedError (one Effect runtime: its classes are the host's).
  if (error instanceof Cause.YieldableError) return new ToolError({ message: messageOf(error) })
  return new ToolError({ message: `The tool ${toolName} failed: ${messageOf(error)}` })
}

/**
 * A plugin's tool as the host runs it: a typed failure reaches the model as a `ToolError`; a
 * defect (a crash, a throw, something not an Effect) also becomes a diagnostic and a
 * `plugin_failed` event of the run (PL-6).
 */
const guardTool = (
  host: HostInternals,
  record: PluginRecord,
  tool: Tool<never, unknown>,
  publicName: string
): Tool => ({
  ...tool,
  execute: (args, context) =>
    Effect.suspend(() => {
      const result: unknown = tool.execute(args, context)
      return Effect.isEffect(result)
        ? (result as ReturnType<Tool<never, unknown>["execute"]>)
        : Effect.dieMessage(`its handler returned ${typeof result}, not an Effect`)
    }).pipe(
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) return Effect.fail(asToolError(tool.name, failure.value))
        const message = `The tool ${tool.name} of the plugin ${record.id} crashed: ${causeMessage(cause)}`
        return Effect.gen(function* () {
          yield* diagnose(host, record, "tool", message)
          const run = yield* Effect.serviceOption(CurrentRun)
          if (Option.isSome(run)) {
            yield* run.value.events
              .emit("plugin_failed", { pluginId: record.id, stage: "tool", message, tool: publicName })
              .pipe(Effect.ignore)
          }
          return yield* new ToolError({ message })
        })
      })
    )
})

/** Records a diagnostic for the plugin and shows it. */
export const diagnose = (host: HostInternals, record: PluginRecord, stage: PluginFailureStage, message: string) =>
  Effect.zipRight(
    Effect.sync(() => record.diagnostics.push(message)),
    host.report({ pluginId: record.id, stage, message })
  )

/** Runs `register` now and `unregister` when the plugin's scope closes. */
const owned = <A, E>(
  scope: Scope.Scope,
  register: Effect.Effect<A, E>,
  unregister: (value: A) => Effect.Effect<void>
): Effect.Effect<A, E> => Scope.extend(Effect.acquireRelease(register, unregister), scope)

const remove = <A>(list: Array<A>, item: A) => {
  const index = list.indexOf(item)
  if (index >= 0) list.splice(index, 1)
}

/** Builds the API of one plugin, whose registrations live in `scope`. */
export const makeApi = (
  host: HostInternals,
  record: PluginRecord,
  scope: Scope.Scope,
  config: unknown,
  plugins: PluginApiService["plugins"]
): Effect.Effect<PluginApiService, PluginError> =>
  Effect.gen(function* () {
    const pluginId = record.id
    const origin: ToolOrigins.ToolOrigin = record.builtin
      ? { _tag: "BuiltinPlugin", pluginId }
      : { _tag: "ExternalPlugin", pluginId }
    const fail = (message: string) => new PluginError({ pluginId, message })
    const paths = pluginPaths(host.homes, pluginId)
    yield* Effect.all([paths.state, paths.config, paths.cache].map((dir) => privateFolder(pluginId, dir)))

    const tools: PluginApiService["tools"] = {
      register: (tool) =>
        owned(
          scope,
          Effect.provideService(
            Scope.extend(
              ToolOrigins.register(guardTool(host, record, tool, ToolOrigins.publicName(origin, tool.name)), origin),
              scope
            ),
            Tools,
            host.tools
          ),
          (registered) => Effect.sync(() => remove(record.tools, registered.name))
        ).pipe(
          Effect.tap((registered) => Effect.sync(() => record.tools.push(registered.name))),
          Effect.asVoid
        )
    }

    const commands: PluginApiService["commands"] = {
      register: (command) =>
        Effect.gen(function* () {
          if (typeof command.name !== "string" || !commandNamePattern.test(command.name)) {
            return yield* fail(
              `The command name ${JSON.stringify(command.name)} is not valid: use lower-case letters, digits, "-" and "_".`
            )
          }
          const name = record.builtin ? command.name : `${pluginId}:${command.name}`
          const entry: RegisteredCommand = {
            pluginId,
            command,
            descriptor: {
              name,
              description: command.description,
              surfaces: command.surfaces ?? ["tui", "web", "api"],
              execution: "core",
              source: "plugin"
            }
          }
          const added = yield* owned(
            scope,
            Ref.modify(host.commands, (all) => (all.has(name) ? [false, all] : [true, new Map(all).set(name, entry)])),
            (added) =>
              added
                ? Effect.zipRight(
                    Ref.update(host.commands, (all) => {
                      if (all.get(name) !== entry) return all
                      const next = new Map(all)
                      next.delete(name)
                      return next
                    }),
                    Effect.sync(() => remove(record.commands, name))
                  )
                : Effect.void
          )
          if (!added) {
            const holder = (yield* Ref.get(host.commands)).get(name)?.pluginId ?? "another plugin"
            return yield* fail(`The command name "${name}" is already taken by ${holder}.`)
          }
          record.commands.push(name)
        })
    }

    const providers: PluginApiService["providers"] = {
      register: (id, model) =>
        Effect.gen(function* () {
          if (Option.isNone(host.providers)) return yield* fail("This host has no provider registry.")
          const registry = host.providers.value
          if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(id)) {
            return yield* fail(`The provider id ${JSON.stringify(id)} may only hold letters, digits, ".", "_" and "-".`)
          }
          const name = record.builtin ? id : `${pluginId}:${id}`
          if ((yield* registry.list).some((entry) => entry.id === name)) {
            return yield* fail(`The provider id "${name}" is already taken.`)
          }
          yield* owned(scope, registry.register(name, model), () =>
            Effect.zipRight(
              registry.unregister(name),
              Effect.sync(() => remove(record.providers, name))
            )
          )
          record.providers.push(name)
        })
    }

    const events: PluginApiService["events"] = {
      on: (type, handler) =>
        observe({
          listen: host.events.listen,
          type,
          handler: handler as (event: KnownRunEvent) => Effect.Effect<void, unknown>,
          capacity: OBSERVER_CAPACITY,
          onDropped: ({ caughtUp, count }) =>
            diagnose(
              host,
              record,
              "observer",
              caughtUp
                ? `its observer of ${type} caught up after ${count} event${count === 1 ? " was" : "s were"} dropped`
                : `its observer of ${type} falls behind the run; events are dropped until it catches up`
            ),
          onFailure: (cause, event) =>
            diagnose(host, record, "observer", `its observer of ${event.type} failed: ${causeMessage(cause)}`)
        })
    }

    const context: PluginApiService["context"] = {
      provide: (provider) => {
        const entry: RegisteredContext = { pluginId, provider }
        return owned(
          scope,
          Ref.update(host.contexts, (all) => [...all, entry]),
          () => Ref.update(host.contexts, (all) => all.filter((item) => item !== entry))
        )
      }
    }

    const storage: PluginApiService["storage"] = {
      sqlite: (file) => openSqlite({ folder: paths.state, path: file, pluginId })
    }

    const state: PluginApiService["state"] = {
      get: (key) =>
        host.store.pluginState
          .get(pluginId, key)
          .pipe(Effect.mapError((error) => fail(`Could not read the state "${key}": ${error.message}`))),
      set: (key, value) =>
        host.store.pluginState
          .set(pluginId, key, value)
          .pipe(Effect.mapError((error) => fail(`Could not save the state "${key}": ${error.message}`)))
    }

    const sessions: PluginApiService["sessions"] = {
      spawn: (options) =>
        Effect.zipRight(checkChildCwd(pluginId, paths, options.cwd), host.children.spawn(options)).pipe(
          Effect.catchTag("StoreError", (error) => Effect.die(error))
        ),
      await: host.children.await,
      awaitWithin: host.children.awaitWithin,
      status: (child) => Effect.orDie(host.children.status(child)),
      toolCalls: (child) => Effect.orDie(host.children.toolCalls(child)),
      abort: host.children.abort,
      list: (parent) => Effect.orDie(host.children.list(parent)),
      notify: host.children.notify,
      expectNotice: host.children.expectNotice
    }

    const model: PluginApiService["model"] = {
      complete: (request) =>
        complete(
          pluginId,
          {
            store: host.store,
            providers: host.providers,
            fallback: host.fallbackModel,
            timeoutMs: host.timeouts.completeMs
          },
          request
        )
    }

    // The registry removes all of a plugin's providers at once, when its scope closes.
    yield* Scope.addFinalizer(scope, host.extensions.unregister(pluginId))
    const extensions: PluginApiService["extensions"] = {
      provide: (point, provider, options) => host.extensions.register(pluginId, point, provider, options?.priority)
    }

    // Each hook is bounded and guarded by the registry; its failures are this plugin's diagnostics.
    const addHook = (hook: Omit<Parameters<CompactionHooksService["add"]>[0], "owner" | "onFailure">) =>
      Option.match(host.compactionHooks, {
        onNone: () => Effect.void,
        onSome: (hooks) =>
          Scope.extend(
            hooks.add({
              ...hook,
              owner: pluginId,
              onFailure: (message) => diagnose(host, record, "compaction", message)
            }),
            scope
          )
      })
    const compaction: PluginApiService["compaction"] = {
      before: (before) => addHook({ before }),
      after: (after) => addHook({ after })
    }

    const ui: PluginApiService["ui"] = {
      notify: (message, options) => host.ui.notify({ pluginId, message, level: options?.level ?? "info" }),
      panel: (id, lines) => host.ui.panel({ pluginId, id, lines })
    }

    return {
      id: pluginId,
      builtin: record.builtin,
      config,
      paths,
      trustProject: host.trustProject,
      plugins,
      tools,
      commands,
      providers,
      events,
      context,
      storage,
      state,
      sessions,
      model,
      extensions,
      compaction,
      ui
    }
  })
