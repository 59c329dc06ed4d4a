// One plugin's life in the host: its entry (what `plugins list` reports), its scope, its setup
// (rolled back when it fails) and its bounded close.

import { PluginApi, type PluginDefinition, PluginError } from "@alisio/domain/Plugin"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { PluginReport } from "../../PluginHost.js"
import { causeMessage } from "./definition.js"
import { diagnose, type HostInternals, type PluginRecord } from "./host.js"
import { makeApi } from "./pluginApi.js"
import { asPluginCode } from "./pluginCode.js"

export interface Entry {
  readonly record: PluginRecord
  report: Omit<PluginReport, "tools" | "commands" | "providers" | "diagnostics">
  scope?: Scope.CloseableScope | undefined
}

/** Where a plugin to start comes from, and its configuration. */
export interface Placement {
  readonly builtin: boolean
  readonly from: string
  readonly config: unknown
  /** Where a key of `config` was written (`api.configSource`). */
  readonly configSource?: ((path: ReadonlyArray<string>) => string | undefined) | undefined
  /** An external plugin's folder. */
  readonly root?: string | undefined
}

export type Lifecycle = ReturnType<typeof makeLifecycle>

export const makeLifecycle = (host: HostInternals, disabled: ReadonlySet<string>) => {
  const { timeouts } = host
  const entries: Array<Entry> = []

  const newEntry = (report: Entry["report"], builtin: boolean, root?: string): Entry => {
    const entry: Entry = {
      record: {
        id: report.id,
        builtin,
        ...(root === undefined ? {} : { root }),
        tools: [],
        commands: [],
        providers: [],
        diagnostics: []
      },
      report
    }
    entries.push(entry)
    return entry
  }

  const loadedPlugins = Effect.sync(() =>
    entries
      .filter((entry) => entry.report.loaded)
      .map(({ record }) => ({
        id: record.id,
        builtin: record.builtin,
        ...(record.root === undefined ? {} : { root: record.root })
      }))
  )

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
  const start = (definition: PluginDefinition, placement: Placement): Effect.Effect<Entry> =>
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
        placement.builtin,
        placement.root
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
      const made = yield* Effect.either(makeApi(host, entry.record, scope, placement, loadedPlugins))
      if (Either.isLeft(made)) {
        yield* closeScope(entry)
        yield* diagnose(host, entry.record, "setup", made.left.message)
        return entry
      }
      const api = made.right
      // Interruptible whatever the caller's region: what the plugin forks inherits it, and its
      // scope must be able to stop those fibers.
      const exit = yield* asPluginCode(placement.builtin, definition.setup).pipe(
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
          `${Cause.isFailure(exit.cause) ? "setup failed" : "setup crashed"}: ${causeMessage(exit.cause).replace(/\.$/, "")}; everything it registered was removed`
        )
        return entry
      }
      entry.report = { ...entry.report, loaded: true }
      return entry
    })

  /** A plugin that never got to `setup`: found but unreadable, or failing to import. */
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

  const unload = (id: string) =>
    Effect.suspend(() => {
      const entry = loadedEntry(id)
      if (entry === undefined) return Effect.void
      entry.report = { ...entry.report, loaded: false }
      return closeScope(entry)
    })

  /** Every plugin's scope, last loaded first. */
  const closeAll = Effect.suspend(() => Effect.forEach([...entries].reverse(), closeScope, { discard: true }))

  return { host, entries, newEntry, loadedEntry, start, failedSource, snapshot, unload, closeAll }
}
