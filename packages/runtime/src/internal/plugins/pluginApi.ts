// The `PluginApi` one plugin receives: every namespace already narrowed to it (PL-2, PL-3), every
// registration tied to the plugin's scope so that closing it (unload, a failed setup, the end of
// the process) takes everything back.

import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type PluginApiService, PluginError, type PluginPaths } from "@alisio/domain/Plugin"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import type { CompactionHooksService } from "../../Compaction.js"
import { makeFolders } from "../../Folders.js"
import { openSqlite } from "../../PluginStorage.js"
import * as ToolOrigins from "../../ToolOrigins.js"
import { Tools } from "../../Tools.js"
import { checkChildCwd } from "./childWorkspace.js"
import { complete } from "./completion.js"
import { decisionsApi } from "./decisions.js"
import { causeMessage } from "./definition.js"
import { guardProvider } from "./guardedProvider.js"
import { guardTool } from "./guardedTool.js"
import {
  diagnose,
  type HostInternals,
  type PluginHomes,
  type PluginRecord,
  type RegisteredCommand,
  type RegisteredContext
} from "./host.js"
import { observe } from "./observers.js"
import { asHostCode, asPluginCode } from "./pluginCode.js"
import { toolDefect } from "./toolShape.js"

const OBSERVER_CAPACITY = 256
const commandNamePattern = /^[a-z0-9][a-z0-9_-]{0,63}$/

/** Creates a folder for the plugin alone (0700, tightened if it exists: ST-6). */
const privateFolder = (pluginId: string, dir: string) =>
  Effect.tryPromise({
    try: async () => {
      await makeFolders(dir, 0o700)
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

/** The namespace with each of its calls run as the host's code, though the plugin's fiber makes it (PL-6). */
const hostCalls = <N extends object>(namespace: N): N =>
  Object.fromEntries(
    Object.entries(namespace).map(([name, member]: [string, unknown]) => [
      name,
      typeof member === "function"
        ? (...args: ReadonlyArray<unknown>) => {
            const result: unknown = member(...args)
            return Effect.isEffect(result) ? asHostCode(result) : result
          }
        : member
    ])
  ) as N

/** Builds the API of one plugin, whose registrations live in `scope`. */
export const makeApi = (
  host: HostInternals,
  record: PluginRecord,
  scope: Scope.Scope,
  placement: { readonly config: unknown; readonly configSource?: PluginApiService["configSource"] },
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
      register: (tool) => {
        const defect = toolDefect(tool)
        if (defect !== undefined) return Effect.fail(fail(defect))
        return owned(
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
          yield* owned(scope, registry.register(name, guardProvider(pluginId, name, model)), () =>
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
          handler: (event: KnownRunEvent) =>
            asPluginCode(
              record.builtin,
              Effect.suspend(() => (handler as (event: KnownRunEvent) => Effect.Effect<void, unknown>)(event))
            ),
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
      expectNotice: host.children.expectNotice,
      forkInRun: (work) => host.children.forkInRun(asPluginCode(record.builtin, work))
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
      config: placement.config,
      configSource: placement.configSource,
      paths,
      trustProject: host.trustProject,
      plugins: asHostCode(plugins),
      tools: hostCalls(tools),
      commands: hostCalls(commands),
      providers: hostCalls(providers),
      events: hostCalls(events),
      context: hostCalls(context),
      storage: hostCalls(storage),
      state: hostCalls(state),
      sessions: hostCalls(sessions),
      model: hostCalls(model),
      extensions: hostCalls(extensions),
      compaction: hostCalls(compaction),
      decisions: hostCalls(decisionsApi(pluginId, host.decisionTelemetry)),
      ui: hostCalls(ui)
    }
  })
