// Where external plugins come from (PL-1): `--plugin`, the `plugins` list of the configuration,
// `<config>/plugins/` and, in a trusted project, `.alisio/plugins/`. Nothing here imports a plugin:
// it only reads manifests, so an untrusted project's plugins are never executed.

import * as fs from "node:fs/promises"
import * as path from "node:path"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import { PLUGIN_API_VERSION, PluginManifest } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/** How an external plugin was chosen; every one but `project` is the user's own choice (PL-3). */
export type ExternalOrigin = "flag" | "config" | "global" | "project"

/** An external plugin found on disk, not yet imported. */
export interface ExternalCandidate {
  /** What the user wrote (a path or a package name), or the folder it was found in. */
  readonly spec: string
  readonly origin: ExternalOrigin
  /** The plugin's folder (real path): its files and its own `node_modules`. */
  readonly root: string
  /** The ESM file to import. */
  readonly entry: string
  readonly trusted: boolean
  readonly enabled: boolean
  readonly config: unknown
}

/** A plugin the host knows of but did not look into, and why. */
export interface SkippedSource {
  readonly spec: string
  readonly origin: ExternalOrigin
  readonly reason: string
}

/** A configured plugin: a source, or a source with settings (the `plugins` list of config.yaml). */
export type PluginEntry =
  | string
  | {
      readonly source: string
      readonly enabled?: boolean | undefined
      readonly config?: { readonly [key: string]: unknown } | undefined
    }

export interface SourcesInput {
  /** `--plugin` values, paths relative to `cwd`. */
  readonly flags?: ReadonlyArray<string> | undefined
  /** The `plugins` list; relative paths are relative to `configHome`. */
  readonly entries?: ReadonlyArray<PluginEntry> | undefined
  /** The Alisio configuration folder: `<configHome>/plugins/` holds installed plugins. */
  readonly configHome: string
  readonly cwd: string
  /** Whether the project's `.alisio/plugins/` may be loaded (`--trust-project`). */
  readonly trustProject: boolean
}

export interface Discovered {
  readonly candidates: ReadonlyArray<ExternalCandidate>
  readonly skipped: ReadonlyArray<SkippedSource>
  readonly problems: ReadonlyArray<{ readonly spec: string; readonly message: string }>
}

/** The folder `alisio plugins install` installs into and scans. */
export const globalPluginsFolder = (configHome: string): string => path.join(configHome, "plugins")

/** A project's plugin folder, loaded only with `--trust-project`. */
export const projectPluginsFolder = (cwd: string): string => path.join(cwd, ".alisio", "plugins")

const MANIFEST = "alisio-plugin.json"
const KEYWORD = "alisio-plugin"

class NotAPlugin {
  readonly _tag = "NotAPlugin"
  constructor(readonly message: string) {}
}

const isPathSpec = (spec: string): boolean =>
  spec.startsWith(".") || spec.startsWith("/") || spec.startsWith("~") || path.isAbsolute(spec)

const expandHome = (spec: string): string =>
  spec === "~" || spec.startsWith("~/") ? path.join(process.env.HOME ?? "", spec.slice(1)) : spec

const readText = (file: string) => Effect.promise(() => fs.readFile(file, "utf8").catch(() => undefined))

const statOf = (file: string) => Effect.promise(() => fs.stat(file).catch(() => undefined))

const realpath = (file: string) => Effect.promise(() => fs.realpath(file).catch(() => file))

const decodeManifest = onFirstCall(() => Schema.decodeUnknownEither(Schema.parseJson(PluginManifest)))

interface PackageJson {
  readonly name?: unknown
  readonly keywords?: unknown
  readonly exports?: unknown
  readonly main?: unknown
}

/** The `import` entry of a package: `exports` (string, `"."`, conditions) or `main`. */
const packageEntry = (manifest: PackageJson): string | undefined => {
  const pick = (value: unknown): string | undefined => {
    if (typeof value === "string") return value
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
    const record = value as Record<string, unknown>
    if ("." in record) return pick(record["."])
    for (const condition of ["import", "node", "default"]) {
      const found = pick(record[condition])
      if (found !== undefined) return found
    }
    return undefined
  }
  return pick(manifest.exports) ?? (typeof manifest.main === "string" ? manifest.main : undefined) ?? "index.js"
}

const isPluginPackage = (manifest: PackageJson): boolean =>
  Array.isArray(manifest.keywords) && manifest.keywords.includes(KEYWORD)

/** The entry of a plugin folder: its `alisio-plugin.json`, else a package with the `alisio-plugin` keyword. */
const readPluginFolder = (dir: string): Effect.Effect<{ readonly root: string; readonly entry: string }, NotAPlugin> =>
  Effect.gen(function* () {
    const root = yield* realpath(dir)
    const manifestText = yield* readText(path.join(root, MANIFEST))
    let entry: string
    if (manifestText !== undefined) {
      const manifest = decodeManifest(manifestText)
      if (Either.isLeft(manifest)) {
        const version = /"apiVersion"\s*:\s*(\d+)/.exec(manifestText)?.[1]
        return yield* Effect.fail(
          new NotAPlugin(
            version !== undefined && Number(version) !== PLUGIN_API_VERSION
              ? `${path.join(dir, MANIFEST)} asks for plugin API version ${version}; this Alisio offers version ${PLUGIN_API_VERSION}`
              : `${path.join(dir, MANIFEST)} is not valid: expected { "apiVersion": ${PLUGIN_API_VERSION}, "entry": "dist/index.js" }`
          )
        )
      }
      entry = path.resolve(root, manifest.right.entry)
    } else {
      const packageText = yield* readText(path.join(root, "package.json"))
      let parsed: PackageJson | undefined
      try {
        parsed = packageText === undefined ? undefined : (JSON.parse(packageText) as PackageJson)
      } catch {
        return yield* Effect.fail(new NotAPlugin(`${path.join(dir, "package.json")} is not valid JSON`))
      }
      if (parsed === undefined || !isPluginPackage(parsed)) {
        return yield* Effect.fail(
          new NotAPlugin(
            `${dir} is not an Alisio plugin: it has no ${MANIFEST} and no package.json with the "${KEYWORD}" keyword`
          )
        )
      }
      entry = path.resolve(root, packageEntry(parsed)!)
    }
    const file = yield* statOf(entry)
    if (file === undefined || !file.isFile()) {
      return yield* Effect.fail(
        new NotAPlugin(`the entry ${entry} of the plugin in ${dir} does not exist (is the plugin built?)`)
      )
    }
    return { root, entry: yield* realpath(entry) }
  })

/** A path (a folder or an ESM file) or a package installed in `<config>/plugins/`. */
const resolveSpec = (spec: string, base: string, configHome: string) =>
  Effect.gen(function* () {
    if (isPathSpec(spec)) {
      const target = path.resolve(base, expandHome(spec))
      const stat = yield* statOf(target)
      if (stat === undefined) return yield* Effect.fail(new NotAPlugin(`${target} does not exist`))
      if (stat.isFile()) {
        const entry = yield* realpath(target)
        return { root: path.dirname(entry), entry }
      }
      return yield* readPluginFolder(target)
    }
    const installed = path.join(globalPluginsFolder(configHome), "node_modules", spec)
    if ((yield* statOf(installed)) === undefined) {
      return yield* Effect.fail(
        new NotAPlugin(`the package ${spec} is not installed; install it with \`alisio plugins install ${spec}\``)
      )
    }
    return yield* readPluginFolder(installed)
  })

/** The plugin folders and installed packages of a plugins folder (`<config>/plugins/`, `.alisio/plugins/`). */
const scanFolder = (folder: string) =>
  Effect.gen(function* () {
    const names = yield* Effect.promise(() =>
      fs.readdir(folder, { withFileTypes: true }).catch(() => [] as Array<import("node:fs").Dirent>)
    )
    const found: Array<string> = []
    for (const entry of names.sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith(".") || !(entry.isDirectory() || entry.isSymbolicLink())) continue
      if (entry.name === "node_modules") continue
      found.push(path.join(folder, entry.name))
    }
    // Packages installed with npm: only those that say they are plugins; the rest are their dependencies.
    const modules = path.join(folder, "node_modules")
    const packages = yield* Effect.promise(() => fs.readdir(modules).catch(() => [] as Array<string>))
    for (const name of packages.sort()) {
      if (name.startsWith(".")) continue
      const dirs = name.startsWith("@")
        ? (yield* Effect.promise(() => fs.readdir(path.join(modules, name)).catch(() => [] as Array<string>))).map(
            (inner) => path.join(modules, name, inner)
          )
        : [path.join(modules, name)]
      for (const dir of dirs) {
        const text = yield* readText(path.join(dir, "package.json"))
        try {
          if (text !== undefined && isPluginPackage(JSON.parse(text) as PackageJson)) found.push(dir)
        } catch {
          // A broken dependency is npm's business, not a plugin.
        }
      }
    }
    return found
  })

/**
 * Finds the external plugins to load, in precedence order: `--plugin`, the configuration, the
 * global folder, the trusted project's folder. The same entry reached twice is loaded once.
 */
export const discover = (input: SourcesInput): Effect.Effect<Discovered> =>
  Effect.gen(function* () {
    const candidates: Array<ExternalCandidate> = []
    const skipped: Array<SkippedSource> = []
    const problems: Array<{ spec: string; message: string }> = []
    const seen = new Set<string>()
    const add = (
      spec: string,
      origin: ExternalOrigin,
      resolved: Effect.Effect<{ readonly root: string; readonly entry: string }, NotAPlugin>,
      settings: { readonly enabled: boolean; readonly config: unknown }
    ) =>
      Effect.gen(function* () {
        const found = yield* Effect.either(resolved)
        if (Either.isLeft(found)) {
          problems.push({ spec, message: found.left.message })
          return
        }
        if (seen.has(found.right.entry)) return
        seen.add(found.right.entry)
        candidates.push({ spec, origin, ...found.right, trusted: true, ...settings })
      })

    for (const spec of input.flags ?? []) {
      yield* add(spec, "flag", resolveSpec(spec, input.cwd, input.configHome), { enabled: true, config: {} })
    }
    for (const entry of input.entries ?? []) {
      const spec = typeof entry === "string" ? entry : entry.source
      const settings =
        typeof entry === "string"
          ? { enabled: true, config: {} }
          : { enabled: entry.enabled !== false, config: entry.config ?? {} }
      if (!settings.enabled) {
        skipped.push({ spec, origin: "config", reason: "disabled in the configuration (enabled: false)" })
        // The package stays installed in the plugins folder; the folder's scan must not load it anyway.
        const disabled = yield* Effect.either(resolveSpec(spec, input.configHome, input.configHome))
        if (Either.isRight(disabled)) seen.add(disabled.right.entry)
        continue
      }
      yield* add(spec, "config", resolveSpec(spec, input.configHome, input.configHome), settings)
    }
    for (const dir of yield* scanFolder(globalPluginsFolder(input.configHome))) {
      yield* add(dir, "global", readPluginFolder(dir), { enabled: true, config: {} })
    }
    const projectFolder = projectPluginsFolder(input.cwd)
    for (const dir of yield* scanFolder(projectFolder)) {
      if (!input.trustProject) {
        skipped.push({
          spec: dir,
          origin: "project",
          reason: "a project plugin is loaded only with --trust-project"
        })
        continue
      }
      yield* add(dir, "project", readPluginFolder(dir), { enabled: true, config: {} })
    }
    return { candidates, skipped, problems }
  })
