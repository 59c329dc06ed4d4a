// JSON Schemas generated from the Schemas themselves, for editors and for programs reading
// `alisio run --json`: `alisio config schema`, `alisio events schema`, and `docs/schemas/*.json`
// (kept current by a test; `pnpm schemas` rewrites them).

import { KnownRunEvent, RUN_EVENT_SCHEMA_VERSION } from "@alisio/domain/RunEvent"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import { ConfigFile, HttpMcpServer, SseMcpServer, StdioMcpServer } from "./ConfigSchema.js"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** A copy of `value` without the properties `drop` picks, at any depth. */
const without = (value: Json, drop: (key: string, value: Json) => boolean): Json => {
  if (Array.isArray(value)) return value.map((item) => without(item, drop))
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.entries(value as Record<string, Json>)
      .filter(([key, item]) => !drop(key, item))
      .map(([key, item]) => [key, without(item, drop)])
  )
}

// In the file an MCP server's `type` may be left out (a `url` means http); the decoder fills it in,
// so the generated schema would only say "a mapping".
const McpServerInFile = Schema.Union(
  Schema.Struct({ ...StdioMcpServer.fields, type: Schema.optional(Schema.Literal("stdio")) }),
  Schema.Struct({ ...HttpMcpServer.fields, type: Schema.optional(Schema.Literal("http")) }),
  Schema.Struct({ ...SseMcpServer.fields, type: Schema.Literal("sse") })
)

// What an editor shows beside each key. Kept here: on the Schemas, a description would replace
// the "expected a mapping" of the loader's error messages.
const keyDescriptions: Record<string, string> = {
  providers: "OpenAI-compatible providers by id; `openai` also follows OPENAI_BASE_URL and OPENAI_API_KEY",
  defaultModel: 'The model of runs without -m, as "provider/model" (`alisio models use` sets it)',
  limits: "Per-run limits",
  approvals: "Approval policy per tool effect: approve, ask or deny",
  builtinPlugins: "Builtin plugins by id: `enabled: false` turns one off; other keys are the plugin's settings",
  plugins: "External plugins: an npm spec or a path, or { source, enabled, config }",
  mcpServers: `MCP servers by name, as Claude Code and Cursor write them: a command (stdio) or a url (http, sse); \${VAR} expands`,
  shell: "Settings of the bash tool",
  titles:
    "Session titles: `summarize` asks the model for a one-line title (default: only for remote providers); `model` is the model asked (default: the run's own)",
  decisions:
    "Decisions plugins report (decision_completed, decision_fallback events): `telemetry: false` keeps them out of the session database (default true)"
}

// What `Limits` documents of each field (packages/domain/src/Limits.ts), shown by editors.
const limitDescriptions: Record<string, string> = {
  maxTurns: "Model turns a run may take (default 100)",
  timeoutMs: "Active time of a run in milliseconds, paused while a person is asked (default none)",
  firstTokenTimeoutMs: "Silence allowed before a response's first token, in milliseconds (default 120000)",
  firstTokenRetries: "Resends of a request that stayed silent (default 1)",
  streamIdleTimeoutMs: "Silence allowed in the middle of a response, in milliseconds (default 120000)",
  maxOutputTokens: "Output-token budget of each request (default: the model's, capped at 65536, else 16384)",
  truncationRecoveries: "Re-requests after a response cut by the output budget (default 2)",
  toolConcurrency: "Tool calls of one response that run at once (default 4)"
}

/**
 * Effect writes small named pieces (`Int`, `Trimmed`) once under `$defs` and refers to them with
 * extra keywords beside the `$ref`, which draft-07 says to ignore; and it gives every `unknown` the
 * same `$id`, which a schema may not repeat. Both are put right: pieces are written in place, and
 * an unknown value is any value (`{}`).
 */
const normalised = (schema: Json): Json => {
  const defs = ((schema as Record<string, Json>).$defs ?? {}) as Record<string, Json>
  const visit = (value: Json, depth: number): Json => {
    if (Array.isArray(value)) return value.map((item) => visit(item, depth))
    if (typeof value !== "object" || value === null) return value
    const record = value as Record<string, Json>
    if (typeof record.$id === "string" && record.$id.startsWith("/schemas/")) return {}
    const ref = typeof record.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(record.$ref)?.[1] : undefined
    const { $ref: _, ...siblings } = record
    const base =
      ref !== undefined && defs[ref] !== undefined && depth < 16
        ? (visit(defs[ref], depth + 1) as Record<string, Json>)
        : undefined
    const own = Object.fromEntries(
      Object.entries(base === undefined ? record : siblings)
        .filter(([key]) => key !== "$defs")
        .map(([key, item]) => [key, visit(item, depth)])
    )
    return base === undefined ? own : { ...base, ...own }
  }
  return visit(schema, 0)
}

const withoutDialect = (schema: Json): Record<string, Json> => {
  const { $schema: _, ...rest } = schema as Record<string, Json>
  return rest
}

/** The JSON Schema of `config.yaml` (CFG-1): what `# yaml-language-server: $schema=…` points at. */
export const configJsonSchema = (): Json => {
  const generated = normalised(JSONSchema.make(ConfigFile) as unknown as Json) as Record<string, Json>
  const properties = generated.properties as Record<string, Record<string, Json>>
  const limits = properties.limits!
  const limitProperties = limits.properties as Record<string, Record<string, Json>>
  const described = Object.fromEntries(
    Object.entries(properties).map(([key, value]) => [key, { ...value, description: keyDescriptions[key] ?? "" }])
  ) as Record<string, Record<string, Json>>
  return {
    ...generated,
    properties: {
      ...described,
      limits: {
        ...described.limits!,
        properties: Object.fromEntries(
          Object.entries(limitProperties).map(([key, value]) => [
            key,
            { ...value, description: limitDescriptions[key] ?? (value.description as string) }
          ])
        )
      },
      mcpServers: {
        ...described.mcpServers!,
        additionalProperties: withoutDialect(normalised(JSONSchema.make(McpServerInFile) as unknown as Json))
      }
    },
    title: "Alisio config.yaml",
    description:
      "Alisio's configuration: ~/.config/alisio/config.yaml (or $ALISIO_HOME/config.yaml), and a project's " +
      ".alisio/config.yaml with --trust-project. Every key is optional; unknown keys are warned about and ignored."
  }
}

/**
 * The JSON Schema of one line of `alisio run --json` (EV-1, EV-2): any of the known events.
 * Events grow additively within a schema version, so no object forbids further properties.
 */
export const runEventJsonSchema = (): Json => {
  const generated = without(
    normalised(JSONSchema.make(KnownRunEvent) as unknown as Json),
    (key, value) => key === "additionalProperties" && value === false
  ) as Record<string, Json>
  const events = (generated.anyOf as ReadonlyArray<Record<string, Json>>).map((event) => {
    const type = ((event.properties as Record<string, Record<string, Json>>).type!.enum as ReadonlyArray<Json>)[0]
    return { title: String(type), ...event }
  })
  return {
    ...generated,
    anyOf: events,
    title: "Alisio run event",
    description:
      `One line of \`alisio run --json\` (schemaVersion ${RUN_EVENT_SCHEMA_VERSION}). Consumers ignore fields and ` +
      "event types they do not know: both grow additively within a schema version."
  }
}

/** A schema as the committed files hold it: two-space JSON and a final newline. */
export const formatJsonSchema = (schema: Json): string => `${JSON.stringify(schema, null, 2)}\n`
