import { join } from "node:path"
import { ApprovalPolicy } from "@alisio/domain/ChildSession"
import { parseDuration } from "@alisio/domain/Durations"
import { ConfigError } from "@alisio/domain/Errors"
import { ReasoningEffort } from "@alisio/domain/LanguageModel"
import { Limits } from "@alisio/domain/Limits"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { describeIssues, describeValue, formatPath, locate } from "./internal/configProblems.js"
import { yaml } from "./internal/yaml.js"

export { formatPath }

const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })
const PositiveInt = Schema.Int.pipe(Schema.positive())
const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })
const AnyMap = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** An approval policy per tool effect (TL-2); effects left out keep the runtime's defaults. */
export const ApprovalSettings = Schema.Struct({
  read: optional(ApprovalPolicy),
  write: optional(ApprovalPolicy),
  external: optional(ApprovalPolicy),
  internal: optional(ApprovalPolicy)
})
export type ApprovalSettings = typeof ApprovalSettings.Type

/** Catalog values for one model, overriding what discovery or the built-in catalog say. */
export const ModelOverride = Schema.Struct({
  contextWindow: optional(PositiveInt),
  maxOutputTokens: optional(PositiveInt),
  reasoningEfforts: optional(Schema.Array(ReasoningEffort))
})
export type ModelOverride = typeof ModelOverride.Type

/** An OpenAI-compatible provider. `api` defaults to `chat`; the key comes from `apiKey` or the `apiKeyEnv` variable. */
export const ProviderConfig = Schema.Struct({
  baseURL: optional(Schema.String),
  apiKey: optional(Schema.Redacted(Schema.String)),
  apiKeyEnv: optional(Schema.String),
  api: optional(Schema.Literal("chat", "responses")),
  outputTokensParam: optional(Schema.Literal("max_tokens", "max_completion_tokens", "max_output_tokens")),
  headers: optional(StringMap),
  models: optional(Schema.Record({ key: Schema.String, value: ModelOverride }))
})
export type ProviderConfig = typeof ProviderConfig.Type

/** A builtin plugin's settings: `enabled`, and whatever else the plugin reads (PL-2). */
export const BuiltinPluginConfig = Schema.Struct({ enabled: optional(Schema.Boolean) }, AnyMap)
export type BuiltinPluginConfig = typeof BuiltinPluginConfig.Type

/** An external plugin: its source (npm spec or path), or the source with settings. */
export const PluginEntry = Schema.Union(
  Schema.String,
  Schema.Struct({ source: Schema.String, enabled: optional(Schema.Boolean), config: optional(AnyMap) })
)
export type PluginEntry = typeof PluginEntry.Type

/** Milliseconds, or a duration as people write it: `500ms`, `30s`, `2m`. */
export const DurationSetting = Schema.Union(
  PositiveInt,
  Schema.String.pipe(
    Schema.filter((text) => parseDuration(text) !== undefined, {
      message: () => 'Expected a duration such as "30s", "2m" or "500ms"'
    })
  )
)
export type DurationSetting = typeof DurationSetting.Type

/** How long an MCP server may take to start, and each call: one duration for both, or each apart. */
export const McpTimeout = Schema.Union(
  DurationSetting,
  Schema.Struct({ startup: optional(DurationSetting), call: optional(DurationSetting) })
)
export type McpTimeout = typeof McpTimeout.Type

// What every MCP server accepts besides how it is reached.
const mcpServerCommon = {
  /** `false` keeps the entry without starting the server. */
  enabled: optional(Schema.Boolean),
  timeout: optional(McpTimeout),
  /** Only these tools (the server's names, or `mcp__<server>__<tool>`) are offered. */
  allowedTools: optional(Schema.Array(Schema.String)),
  /** These tools are never offered. */
  disabledTools: optional(Schema.Array(Schema.String))
}

/** A server started as a command speaking MCP on its stdin and stdout (`${VAR}` expands in every string). */
export const StdioMcpServer = Schema.Struct({
  type: Schema.Literal("stdio"),
  command: Schema.String,
  args: optional(Schema.Array(Schema.String)),
  env: optional(StringMap),
  cwd: optional(Schema.String),
  ...mcpServerCommon
})
export type StdioMcpServer = typeof StdioMcpServer.Type

const remoteMcpServer = <T extends "http" | "sse">(type: T) =>
  Schema.Struct({ type: Schema.Literal(type), url: Schema.String, headers: optional(StringMap), ...mcpServerCommon })

/** A remote server over streamable HTTP. */
export const HttpMcpServer = remoteMcpServer("http")
export type HttpMcpServer = typeof HttpMcpServer.Type

/** A remote server over the older HTTP with server-sent events. */
export const SseMcpServer = remoteMcpServer("sse")
export type SseMcpServer = typeof SseMcpServer.Type

/** An MCP server: a command over stdio, or a URL (MCP-1), in the shape Claude Code and Cursor use. */
export const McpServer = Schema.Union(StdioMcpServer, HttpMcpServer, SseMcpServer)
export type McpServer = typeof McpServer.Type

// In the file `type` may be left out: a `url` means http, otherwise stdio.
const McpServerEntry = Schema.transform(
  Schema.Struct({ type: optional(Schema.Literal("stdio", "http", "sse")) }, AnyMap),
  McpServer,
  {
    strict: false,
    decode: (entry) => (entry.type !== undefined ? entry : { ...entry, type: "url" in entry ? "http" : "stdio" }),
    encode: (server) => server
  }
)

/** A project's `.mcp.json`, Claude Code's file of project MCP servers: at the workspace's root. */
export const projectMcpFile = (cwd: string): string => join(cwd, ".mcp.json")

/**
 * What `bash` commands inherit of Alisio's environment (TL-8); provider keys are never inherited.
 * See `tools/ShellEnvironment.ts` for the order the fields apply in.
 */
export const ShellEnvironmentSettings = Schema.Struct({
  /** Start from `all` variables (default), the `core` ones a shell needs, or `none`. */
  inherit: optional(Schema.Literal("all", "core", "none")),
  /** Keep names matching *KEY*, *SECRET*, *TOKEN*, *PASSWORD* (removed by default). */
  ignoreDefaultExcludes: optional(Schema.Boolean),
  /** Also remove these names (globs, any case). */
  exclude: optional(Schema.Array(Schema.String)),
  /** Keep only these names (globs, any case). */
  includeOnly: optional(Schema.Array(Schema.String)),
  /** Set these variables, last. */
  set: optional(StringMap)
})
export type ShellEnvironmentSettings = typeof ShellEnvironmentSettings.Type

/** Settings of the `bash` tool. */
export const ShellSettings = Schema.Struct({ environment: optional(ShellEnvironmentSettings) })

/** `provider/model`, e.g. `openai/gpt-4o`. */
export const ModelRef = Schema.String.pipe(
  Schema.pattern(/^[^/\s]+\/\S+$/, { message: () => 'Expected "provider/model", e.g. "openai/gpt-4o"' })
)

/**
 * Session titles: the first line of the first prompt at once, then a one-line summary from the
 * model when `summarize` holds. Left out, it holds for remote providers and not for servers on
 * this machine or network, where the request would queue behind the run's own.
 */
export const TitleSettings = Schema.Struct({
  summarize: optional(Schema.Boolean),
  /** The model asked for titles (default: the run's own). */
  model: optional(ModelRef)
})
export type TitleSettings = typeof TitleSettings.Type

/** The configuration file (CFG-1); every key is optional. */
export const ConfigFile = Schema.Struct({
  providers: optional(Schema.Record({ key: Schema.String, value: ProviderConfig })),
  defaultModel: optional(ModelRef),
  limits: optional(Limits),
  approvals: optional(ApprovalSettings),
  builtinPlugins: optional(Schema.Record({ key: Schema.String, value: BuiltinPluginConfig })),
  plugins: optional(Schema.Array(PluginEntry)),
  mcpServers: optional(Schema.Record({ key: Schema.String, value: McpServerEntry })),
  shell: optional(ShellSettings),
  titles: optional(TitleSettings)
})
export type ConfigFile = typeof ConfigFile.Type

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

/** The configuration of one YAML text, with warnings for unknown keys; `file` names it in messages. */
export const parse = (
  text: string,
  file: string
): Either.Either<{ readonly config: ConfigFile; readonly warnings: ReadonlyArray<string> }, ConfigError> => {
  const lineCounter = new (yaml().LineCounter)()
  const doc = yaml().parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true })
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
    const others = problems.length - 1
    const more = others > 0 ? ` (and ${others} more problem${others > 1 ? "s" : ""})` : ""
    return Either.left(
      new ConfigError({
        message: `${file}:${first.line}:${first.col}: ${first.text}${more}`,
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
    for (const { col, line, path } of unknown) {
      warnings.push(`${file}:${line}:${col}: unknown key ${formatPath(path)} is ignored`)
    }
  }
  for (const warning of doc.warnings) {
    const { line, col } = at(warning.pos[0])
    warnings.push(`${file}:${line}:${col}: ${warning.message.split("\n")[0]}`)
  }
  return Either.right({ config: decoded.right, warnings })
}

const decodeIgnoringExtra = Schema.decodeUnknownEither(ConfigFile, { errors: "all", onExcessProperty: "ignore" })
const decodeRejectingExtra = Schema.decodeUnknownEither(ConfigFile, { errors: "all", onExcessProperty: "error" })

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

/** Reads a configuration file; a missing file is an empty configuration. */
const readFile = (fs: FileSystem.FileSystem, file: string) =>
  fs.readFileString(file).pipe(
    Effect.map(Option.some),
    Effect.catchAll((error) =>
      error._tag === "SystemError" && error.reason === "NotFound"
        ? Effect.succeed(Option.none<string>())
        : Effect.fail(new ConfigError({ message: `${file}: cannot be read (${error.message})`, file }))
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
