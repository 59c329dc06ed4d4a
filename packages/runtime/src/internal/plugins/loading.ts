// Loading the plugins the host is given: builtin ones from the CLI's registry (PL-2), external ones
// from disk (PL-1, PL-3), imported with the host's modules shared (moduleHooks.ts).

import * as Cause from "effect/Cause"
import { UnknownException } from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { BuiltinConfigFile, BuiltinPlugin } from "../../PluginHost.js"
import { causeMessage, definitionOf, validateDefinition } from "./definition.js"
import { diagnose } from "./host.js"
import type { Lifecycle } from "./lifecycle.js"
import { importingPluginCode } from "./pluginCode.js"
import { guardProcess } from "./processGuard.js"
import { discover, type ExternalCandidate, type SourcesInput } from "./sources.js"
import { syntaxErrorMessage } from "./syntaxError.js"

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

const valueAt = (value: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>(
    (at, key) =>
      typeof at === "object" && at !== null && Object.hasOwn(at, key)
        ? (at as Record<string, unknown>)[key]
        : undefined,
    value
  )

/** The file that wins for `builtinPlugins.<id>.<path>`: the last one that sets it. */
const configSourceOf =
  (files: ReadonlyArray<BuiltinConfigFile>, id: string) =>
  (path: ReadonlyArray<string>): string | undefined =>
    [...files].reverse().find((file) => valueAt(file.builtinPlugins?.[id], path) !== undefined)?.file

/** Builtin plugins: loaded even read-only, configured under `builtinPlugins.<id>`, `enabled: false` turns one off. */
export const loadBuiltin = (
  lifecycle: Lifecycle,
  builtin: ReadonlyArray<BuiltinPlugin>,
  builtinConfig: { readonly [id: string]: { readonly [key: string]: unknown } },
  files: ReadonlyArray<BuiltinConfigFile>,
  disabled: ReadonlySet<string>
) =>
  Effect.forEach(
    builtin,
    (plugin) =>
      Effect.gen(function* () {
        const { enabled, ...config } = builtinConfig[plugin.id] ?? {}
        if (enabled === false || disabled.has(plugin.id)) {
          lifecycle.newEntry(
            { id: plugin.id, source: "builtin", from: "builtin", enabled: false, trusted: true, loaded: false },
            true
          )
          return
        }
        const loaded = yield* Effect.tryPromise(async (): Promise<unknown> => await plugin.load()).pipe(
          Effect.map((definition) => validateDefinition(definition, `the builtin plugin ${plugin.id}`)),
          Effect.catchAll((error) =>
            Effect.succeed(Either.left(`could not be loaded: ${causeMessage(Cause.fail(error.error))}`))
          )
        )
        if (Either.isLeft(loaded))
          return yield* lifecycle.failedSource(plugin.id, "builtin", true, "import", loaded.left)
        yield* lifecycle.start(loaded.right, {
          builtin: true,
          from: "builtin",
          config,
          configSource: configSourceOf(files, plugin.id)
        })
      }),
    { discard: true }
  )

/** External plugins: found on disk, never imported when read-only or untrusted, each a diagnostic when it fails. */
export const loadExternal = (lifecycle: Lifecycle, sources: SourcesInput, readOnly: boolean) =>
  Effect.gen(function* () {
    const found = yield* discover(sources)
    for (const problem of found.problems) {
      yield* lifecycle.failedSource(problem.spec, problem.spec, false, "discover", problem.message)
    }
    for (const skipped of found.skipped) {
      const entry = lifecycle.newEntry(
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
      if (skipped.origin === "project") {
        yield* diagnose(lifecycle.host, entry.record, "discover", `not loaded: ${skipped.reason}`)
      } else {
        entry.record.diagnostics.push(skipped.reason)
      }
    }
    if (found.candidates.length === 0) return
    if (readOnly) {
      for (const candidate of found.candidates) {
        const entry = lifecycle.newEntry(
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
    const hooks = yield* Effect.promise(() => import("./moduleHooks.js"))
    if (!hooks.sharedModulesIncluded) {
      for (const candidate of found.candidates) {
        yield* lifecycle.failedSource(
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
    yield* guardProcess(roots)
    const { setupMs } = lifecycle.host.timeouts
    for (const candidate of found.candidates) {
      const from = describeSource(candidate)
      // The import has the setup's time too: a module whose top-level await never settles held
      // the process before anything ran (PL-6). The import itself cannot be stopped; it is left.
      const imported = yield* Effect.tryPromise((signal) =>
        hooks.sharingModules(roots, () => importingPluginCode(() => import(hooks.entryURL(candidate.entry))), signal)
      ).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(setupMs),
          onTimeout: () =>
            new UnknownException(
              new Error(`its import did not finish within ${setupMs} ms (a top-level await that never settles?)`)
            )
        }),
        Effect.either
      )
      if (Either.isLeft(imported)) {
        const error = imported.left.error
        yield* lifecycle.failedSource(
          candidate.spec,
          from,
          false,
          "import",
          syntaxErrorMessage(error, candidate.root, candidate.entry) ??
            `could not be imported from ${candidate.entry}: ${causeMessage(Cause.die(error))}`
        )
        continue
      }
      const definition = definitionOf(imported.right, candidate.entry)
      if (Either.isLeft(definition)) {
        yield* lifecycle.failedSource(candidate.spec, from, false, "import", definition.left)
        continue
      }
      yield* lifecycle.start(definition.right, { builtin: false, from, config: candidate.config, root: candidate.root })
    }
  })
