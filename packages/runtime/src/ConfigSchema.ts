// The configuration file's schema (CFG-1): every setting and its shape, from which the file is
// decoded and the JSON Schemas in docs/schemas are made.
import { ApprovalPolicy } from "@alisio/domain/ChildSession"
import { parseDuration } from "@alisio/domain/Durations"
import { ReasoningEffort } from "@alisio/domain/LanguageModel"
import { Limits } from "@alisio/domain/Limits"
import * as Schema from "effect/Schema"

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
  // No control characters either: the name is printed back in messages and the status line. Spelled
  // as ranges, not `\p{Cc}`: the pattern goes into config.schema.json, read by editors without `u`.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  Schema.pattern(/^[^/\s\u0000-\u001f\u007f-\u009f]+\/[^\s\u0000-\u001f\u007f-\u009f]+$/, {
    message: () => 'Expected "provider/model", e.g. "openai/gpt-4o"'
  })
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

/** Decisions plugins report (EV-6): `telemetry: false` keeps their events out of the session database. */
export const DecisionSettings = Schema.Struct({ telemetry: optional(Schema.Boolean) })

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
  titles: optional(TitleSettings),
  decisions: optional(DecisionSettings)
})
export type ConfigFile = typeof ConfigFile.Type
