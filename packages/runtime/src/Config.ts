import { join } from "node:path"
import { closeMatches } from "@alisio/domain/CloseMatches"
import { ConfigError } from "@alisio/domain/Errors"
import type { Limits } from "@alisio/domain/Limits"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { type ApprovalSettings, ConfigFile } from "./ConfigSchema.js"
import { describeIssues, describeValue, duplicateKey, formatPath, locate } from "./internal/configProblems.js"
import { errnoCode } from "./internal/errno.js"
import { keysAt, undeclaredAt } from "./internal/schemaKeys.js"
import { yaml } from "./internal/yaml.js"

export { ConfigFile, McpServer, ProviderConfig } from "./ConfigSchema.js"
export { formatPath }

/** A project's `.mcp.json`, Claude Code's file of project MCP servers: at the workspace's root. */
export const projectMcpFile = (cwd: string): string => join(cwd, ".mcp.json")

/** Where a setting came from, from the weakest to the strongest. */
export const SourceKind = Schema.Literal("default", "global", "project", "environment", "flag")
export type SourceKind = typeof SourceKind.Type

/** One layer of configuration: a file, a flag, a variable, or the defaults. */
export interface ConfigLayer {
  readonly kind: SourceKind
  /** The file, the flag (`--max-turns`) or the variable (`OPENAI_BASE_URL`). */
  readonly detail?: string | undefined
  readonly config: ConfigFile
}

/** The effective configuration and what the person should hear about it. */
export interface LoadedConfig {
  readonly config: ConfigFile
  /** Unknown keys, an ignored project file: one line each, printed once. */
  readonly warnings: ReadonlyArray<string>
  /** The files applied, global first. */
  readonly files: ReadonlyArray<string>
  /** The files' and flags' layers the configuration merges, weakest first (for `alisio config`). */
  readonly layers: ReadonlyArray<ConfigLayer>
}

export class AlisioConfig extends Context.Tag("@alisio/runtime/Config")<AlisioConfig, LoadedConfig>() {}

/** Command-line settings that override the files. */
export interface ConfigFlags {
  readonly model?: string | undefined
  readonly limits?: Limits | undefined
  readonly approvals?: ApprovalSettings | undefined
  /** Builtin plugins to disable (`--disable-plugin`). */
  readonly disablePlugins?: ReadonlyArray<string> | undefined
  /** External plugins to add (`--plugin`). */
  readonly plugins?: ReadonlyArray<string> | undefined
}

export interface ConfigSources {
  readonly globalFile: string
  readonly projectFile?: string | undefined
  /** The project's `.mcp.json` (Claude Code's format): its `mcpServers`, trusted like the project file. */
  readonly projectMcpFile?: string | undefined
  /** Without it, a project file is reported and ignored. */
  readonly trustProject: boolean
  readonly flags?: ConfigFlags | undefined
}

/** Problems and unknown keys reported of one file, a line each; the rest are counted. */
const MAX_LINES = 20

/** A configuration file is a page of settings; a larger one is surely not the file meant. */
export const MAX_FILE_BYTES = 1024 * 1024

/** The configuration of one YAML text, with warnings for unknown keys; `file` names it in messages. */
export const parse = (
  text: string,
  file: string
): Either.Either<{ readonly config: ConfigFile; readonly warnings: ReadonlyArray<string> }, ConfigError> => {
  const lineCounter = new (yaml().LineCounter)()
  const doc = yaml().parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false })
  const at = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset)
    return { line: Math.max(line, 1), col: Math.max(col, 1) }
  }
  const syntaxError = doc.errors[0]
  if (syntaxError !== undefined) {
    const { line, col } = at(syntaxError.pos[0])
    const reason = syntaxError.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")
    return Either.left(new ConfigError({ message: `${file}:${line}:${col}: invalid YAML: ${reason}`, file, line }))
  }
  const duplicate = duplicateKey(doc)
  if (duplicate !== undefined) {
    const { line, col } = at(duplicate.offset)
    const first = at(duplicate.firstOffset).line
    return Either.left(
      new ConfigError({
        message: `${file}:${line}:${col}: ${formatPath(duplicate.path)} is set twice (lines ${first} and ${line}): keep one`,
        file,
        line
      })
    )
  }
  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount: 1_000 }) ?? {}
  } catch (error) {
    return Either.left(new ConfigError({ message: `${file}: invalid YAML: ${(error as Error).message}`, file }))
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left(
      new ConfigError({
        message: `${file}:1:1: expected a mapping of settings (key: value), got ${describeValue(value)}`,
        file,
        line: 1
      })
    )
  }
  const where = (path: ReadonlyArray<PropertyKey>, target: "key" | "value") => at(locate(doc, path, target))

  const decoded = decodeIgnoringExtra(value)
  if (Either.isLeft(decoded)) {
    const problems = describeIssues(decoded.left.issue, value).map((problem) => ({
      ...problem,
      ...where(problem.path, problem.target)
    }))
    problems.sort((a, b) => a.line - b.line || a.col - b.col)
    const first = problems[0]!
    // Every problem at once, a line each as compilers write them: one run finds them all.
    const lines = problems
      .slice(0, MAX_LINES)
      .map((problem) => `${file}:${problem.line}:${problem.col}: ${problem.text}`)
    if (problems.length > MAX_LINES) lines.push(`${file}: ${problems.length - MAX_LINES} more problems`)
    return Either.left(
      new ConfigError({
        message: lines.join("\n"),
        file,
        path: formatPath(first.path),
        line: first.line
      })
    )
  }
  const warnings: Array<string> = []
  const strict = decodeRejectingExtra(value)
  if (Either.isLeft(strict)) {
    const unknown = ParseResult.ArrayFormatter.formatIssueSync(strict.left.issue)
      .filter((leaf) => leaf._tag === "Unexpected")
      .map((leaf) => ({ path: leaf.path, ...where(leaf.path, "key") }))
      .sort((a, b) => a.line - b.line || a.col - b.col)
    for (const { col, line, path } of unknown.slice(0, MAX_LINES)) {
      const key = String(path.at(-1))
      const [meant] = closeMatches(key, keysAt(ConfigFile.ast, path.slice(0, -1)), 1)
      const hint = meant === undefined ? "" : ` (did you mean ${meant}?)`
      warnings.push(`${file}:${line}:${col}: unknown key ${formatPath(path)} is ignored${hint}`)
    }
    if (unknown.length > MAX_LINES)
      warnings.push(`${file}: ${unknown.length - MAX_LINES} more unknown keys are ignored`)
  }
  for (const warning of doc.warnings) {
    const { line, col } = at(warning.pos[0])
    warnings.push(`${file}:${line}:${col}: ${warning.message.split("\n")[0]}`)
  }
  return Either.right({ config: decoded.right, warnings })
}

/**
 * Why `key` (dotted: `limits.maxTurns`) names no setting of config.yaml, with the one it may have
 * meant; `undefined` when it names one (any name goes where the file takes a mapping of names).
 */
export const unknownSetting = (key: string): string | undefined => {
  const path = key.split(".")
  const at = path.includes("") ? path.indexOf("") : undeclaredAt(ConfigFile.ast, path)
  if (at === undefined) return undefined
  const [meant] = path[at] === "" ? [] : closeMatches(path[at]!, keysAt(ConfigFile.ast, path.slice(0, at)), 1)
  const hint = meant === undefined ? "" : ` (did you mean ${[...path.slice(0, at), meant].join(".")}?)`
  return `${key} is not a setting of config.yaml${hint}; \`alisio config\` lists them`
}

// Compiled when a file is read: most runs have none.
const decodeIgnoringExtra = onFirstCall(() =>
  Schema.decodeUnknownEither(ConfigFile, { errors: "all", onExcessProperty: "ignore" })
)
const decodeRejectingExtra = onFirstCall(() =>
  Schema.decodeUnknownEither(ConfigFile, { errors: "all", onExcessProperty: "error" })
)

/** Merges configurations, later ones winning key by key; plugin lists add up, MCP servers replace by name. */
export const mergeConfigs = (...configs: ReadonlyArray<ConfigFile>): ConfigFile =>
  configs.reduce((base, over) => {
    const merged = deepMerge(base, over) as Record<string, unknown>
    if (base.mcpServers !== undefined || over.mcpServers !== undefined) {
      merged.mcpServers = { ...base.mcpServers, ...over.mcpServers }
    }
    if (base.plugins !== undefined || over.plugins !== undefined) {
      const seen = new Set<string>()
      merged.plugins = [...(base.plugins ?? []), ...(over.plugins ?? [])].filter((entry) => {
        const source = typeof entry === "string" ? entry : entry.source
        if (seen.has(source)) return false
        seen.add(source)
        return true
      })
    }
    return merged as ConfigFile
  }, {} as ConfigFile)

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

// Plain objects merge key by key; anything else (lists, secrets) is replaced whole.
const deepMerge = (base: unknown, over: unknown): unknown => {
  if (over === undefined) return base
  if (!isPlainObject(base) || !isPlainObject(over)) return over
  const merged: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(over)) {
    if (value !== undefined) merged[key] = deepMerge(base[key], value)
  }
  return merged
}

/** Applies command-line flags over the files' configuration. */
export const merge = (config: ConfigFile, flags: ConfigFlags): ConfigFile => mergeConfigs(config, fromFlags(flags))

/** The configuration that command-line flags state. */
export const fromFlags = (flags: ConfigFlags): ConfigFile => {
  const fromFlags: Record<string, unknown> = {}
  if (flags.model !== undefined) fromFlags.defaultModel = flags.model
  if (flags.limits !== undefined) fromFlags.limits = flags.limits
  if (flags.approvals !== undefined) fromFlags.approvals = flags.approvals
  if (flags.disablePlugins !== undefined && flags.disablePlugins.length > 0) {
    fromFlags.builtinPlugins = Object.fromEntries(flags.disablePlugins.map((id) => [id, { enabled: false }]))
  }
  if (flags.plugins !== undefined && flags.plugins.length > 0) fromFlags.plugins = flags.plugins
  return fromFlags as ConfigFile
}

/** Why a configuration file could not be read, in words (the platform's message names the call). */
const unreadable = (error: PlatformError): string => {
  const code = error._tag === "SystemError" ? errnoCode(error.cause) : undefined
  switch (code) {
    case "ENOTDIR":
      return "a part of its path is a file, not a folder; check ALISIO_HOME and XDG_CONFIG_HOME"
    case "ELOOP":
      return "its symbolic links form a loop"
    case "EACCES":
    case "EPERM":
      return "permission denied; make it readable"
    default:
      return error.message
  }
}

/** Reads a configuration file; a missing file, or a link to /dev/null, is an empty configuration. */
const readFile = (fs: FileSystem.FileSystem, file: string) =>
  fs.realPath(file).pipe(
    Effect.option,
    Effect.flatMap((real) =>
      Option.contains(real, "/dev/null") ? Effect.succeed(Option.none<string>()) : readRegular(fs, file)
    )
  )

const readRegular = (fs: FileSystem.FileSystem, file: string) =>
  fs.stat(file).pipe(
    // A link to a device or a pipe (a cloned project's `config.yaml -> /dev/zero`) would never end.
    Effect.filterOrFail(
      (info) => info.type === "File",
      () => new ConfigError({ message: `${file}: not a regular file; a configuration file must be one`, file })
    ),
    Effect.filterOrFail(
      (info) => Number(info.size) <= MAX_FILE_BYTES,
      (info) =>
        new ConfigError({
          message: `${file}: ${(Number(info.size) / 1024 / 1024).toFixed(1)} MiB is too large for a configuration file (at most 1 MiB); is it the right file?`,
          file
        })
    ),
    Effect.zipRight(fs.readFileString(file)),
    Effect.map(Option.some),
    Effect.catchAll((error) =>
      error._tag === "ConfigError"
        ? Effect.fail(error)
        : error._tag === "SystemError" && error.reason === "NotFound"
          ? Effect.succeed(Option.none<string>())
          : Effect.fail(new ConfigError({ message: `${file}: cannot be read: ${unreadable(error)}`, file }))
    )
  )

/**
 * Loads the global file, then the project file when trusted (otherwise a warning), then the flags.
 */
export const make = (sources: ConfigSources): Effect.Effect<LoadedConfig, ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const layers: Array<ConfigLayer> = []
    const warnings: Array<string> = []
    const files: Array<string> = []
    const load = (file: string, kind: "global" | "project") =>
      Effect.gen(function* () {
        const text = yield* readFile(fs, file)
        if (Option.isNone(text)) return
        const parsed = yield* parse(text.value, file)
        layers.push({ kind, detail: file, config: parsed.config })
        warnings.push(...parsed.warnings)
        files.push(file)
      })
    const loadMcpJson = (file: string) =>
      Effect.gen(function* () {
        const text = yield* readFile(fs, file)
        if (Option.isNone(text)) return
        const parsed = yield* parse(text.value, file)
        // Only its servers: the rest of a .mcp.json is not Alisio's configuration.
        layers.push({ kind: "project", detail: file, config: { mcpServers: parsed.config.mcpServers ?? {} } })
        warnings.push(...parsed.warnings)
        files.push(file)
      })
    const exists = (file: string) => fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    yield* load(sources.globalFile, "global")
    // A project's .mcp.json starts commands: trusted like its configuration, and weaker than it.
    if (sources.projectMcpFile !== undefined) {
      if (sources.trustProject) {
        yield* loadMcpJson(sources.projectMcpFile)
      } else if (yield* exists(sources.projectMcpFile)) {
        warnings.push(`${sources.projectMcpFile} is ignored: a project's MCP servers start only with --trust-project`)
      }
    }
    if (sources.projectFile !== undefined && sources.projectFile !== sources.globalFile) {
      if (sources.trustProject) {
        yield* load(sources.projectFile, "project")
      } else if (yield* exists(sources.projectFile)) {
        warnings.push(`${sources.projectFile} is ignored: project configuration applies only with --trust-project`)
      }
    }
    if (sources.flags !== undefined) layers.push({ kind: "flag", config: fromFlags(sources.flags) })
    const config = mergeConfigs(...layers.map((layer) => layer.config))
    return { config, warnings, files, layers }
  })

export const layer = (sources: ConfigSources): Layer.Layer<AlisioConfig, ConfigError, FileSystem.FileSystem> =>
  Layer.effect(AlisioConfig, make(sources))

export const layerTest = (config: ConfigFile = {}, warnings: ReadonlyArray<string> = []): Layer.Layer<AlisioConfig> =>
  Layer.succeed(AlisioConfig, { config, warnings, files: [], layers: [] })
