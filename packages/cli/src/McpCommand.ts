// `alisio mcp list|get|add|remove` (MCP-1, CLI-1): the configured MCP servers, checked by starting
// them, and the global config.yaml edited with its comments kept.
import * as ConfigEdits from "@alisio/runtime/ConfigEdits"
import { McpServerReport, McpServers, serverNameKey } from "@alisio/runtime/McpServers"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Tools from "@alisio/runtime/Tools"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { loadSetup, mcpServersLayer, type Setup } from "./App.js"
import { CliError, ExitCode, setExitCode, usageError } from "./CliError.js"
import { writeRecord } from "./SessionRecords.js"
import { paint } from "./Terminal.js"

interface Where {
  readonly cwd: Option.Option<string>
  readonly trustProject: boolean
}

const setupOf = (flags: Where) =>
  loadSetup({
    ...(Option.isSome(flags.cwd) ? { cwd: flags.cwd.value } : {}),
    trustProject: flags.trustProject,
    projectMcp: true
  })

/** Starts every configured server (each within its start-up timeout) and reports them; closes them after. */
const reportsOf = (setup: Setup) =>
  Effect.gen(function* () {
    const mcp = yield* McpServers
    yield* mcp.ready
    return yield* mcp.status
  }).pipe(Effect.provide(mcpServersLayer(setup, { silent: true }).pipe(Layer.provide(Tools.layer()))))

/** Where a server is configured: the file of the strongest layer naming it. */
const sourceOf = (setup: Setup, name: string): string | undefined =>
  [...setup.layers].reverse().find((layer) => layer.config.mcpServers?.[name] !== undefined)?.detail

const noServers = (setup: Setup) =>
  `No MCP servers are configured. Add one with \`alisio mcp add <name> -- <command> [args…]\` ` +
  `(it goes to ${setup.paths.globalConfigFile}), or give a project's .mcp.json with --trust-project.`

const pad = (text: string, width: number) => text + " ".repeat(Math.max(0, width - text.length))

/** A server that failed to start makes `mcp list` / `mcp get` exit 1, so a script can check them. */
const exitForFailures = (reports: ReadonlyArray<McpServerReport>) => {
  if (reports.some((report) => report.status === "failed")) setExitCode(ExitCode.failed)
}

/** `alisio mcp list`: every server, started to check it: transport, status, tool count, last error. */
export const listServers = (flags: Where & { readonly json: boolean }) =>
  Effect.gen(function* () {
    const setup = yield* setupOf(flags)
    const reports = yield* reportsOf(setup)
    exitForFailures(reports)
    if (flags.json) {
      for (const report of reports) writeRecord(McpServerReport, report)
      return
    }
    if (reports.length === 0) {
      process.stderr.write(`alisio: ${noServers(setup)}\n`)
      return
    }
    const style = paint(process.stdout)
    // A server's error and a command line are shown as text, never as escape sequences.
    const rows = reports.map((report) =>
      [
        report.name,
        report.transport,
        report.status,
        report.status === "connected" ? `${report.tools.length} tool${report.tools.length === 1 ? "" : "s"}` : "",
        report.error ?? report.target
      ].map((cell) => terminalSafe(cell).replace(/\s+/g, " "))
    )
    const widths = [0, 1, 2, 3].map((column) => Math.max(...rows.map((row) => row[column]!.length)))
    for (const [row, report] of rows.map((row, index) => [row, reports[index]!] as const)) {
      const status = pad(row[2]!, widths[2]!)
      const coloured =
        report.status === "connected" ? style.green(status) : report.status === "failed" ? style.red(status) : status
      const last = report.error === undefined ? style.dim(row[4]!) : row[4]!
      process.stdout.write(
        `${pad(row[0]!, widths[0]!)}  ${pad(row[1]!, widths[1]!)}  ${coloured}  ${pad(row[3]!, widths[3]!)}  ${last}\n`.replace(
          /\s+\n$/,
          "\n"
        )
      )
    }
  })

/** A value shown as written when it only refers to variables; a literal may be a secret. */
const shownValue = (value: string) => (value.includes("${") ? value : "<redacted>")

const shownMap = (values: { readonly [key: string]: string } | undefined) =>
  values === undefined
    ? undefined
    : Object.fromEntries(Object.entries(values).map(([key, value]) => [key, shownValue(value)]))

/** One server in detail, as `mcp get --json` writes it. */
export const McpServerDetail = Schema.Struct({
  ...McpServerReport.fields,
  /** The file it is configured in. */
  source: Schema.optional(Schema.String),
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  cwd: Schema.optional(Schema.String)
})

/** `alisio mcp get <name>`: how a server is configured, and what it offers once started. */
export const getServer = (flags: Where & { readonly json: boolean; readonly name: string }) =>
  Effect.gen(function* () {
    const setup = yield* setupOf(flags)
    const servers = setup.config.mcpServers ?? {}
    const config = servers[flags.name]
    if (config === undefined) {
      const names = Object.keys(servers)
      return yield* usageError(
        names.length === 0
          ? noServers(setup)
          : `No MCP server is named ${flags.name}; configured: ${names.join(", ")} (see alisio mcp list)`
      )
    }
    const only: Setup = { ...setup, config: { ...setup.config, mcpServers: { [flags.name]: config } } }
    const [report] = yield* reportsOf(only)
    exitForFailures([report!])
    const detail: typeof McpServerDetail.Type = {
      ...report!,
      source: sourceOf(setup, flags.name),
      ...(config.type === "stdio"
        ? { env: shownMap(config.env), ...(config.cwd === undefined ? {} : { cwd: config.cwd }) }
        : { headers: shownMap(config.headers) })
    }
    if (flags.json) {
      writeRecord(McpServerDetail, detail)
      return
    }
    const style = paint(process.stdout)
    const lines = [style.bold(detail.name)]
    const field = (label: string, value: string | undefined) => {
      if (value !== undefined && value !== "") lines.push(`  ${pad(label, 10)} ${terminalSafe(value)}`)
    }
    field("transport", detail.transport)
    field(detail.transport === "stdio" ? "command" : "url", detail.target)
    field("cwd", detail.cwd)
    for (const [key, value] of Object.entries(detail.env ?? {})) field("env", `${key}=${value}`)
    for (const [key, value] of Object.entries(detail.headers ?? {})) field("header", `${key}: ${value}`)
    field("from", detail.source)
    field("status", detail.status)
    field("error", detail.error)
    field("log", detail.log)
    if (detail.tools.length > 0) {
      lines.push(`  tools (${detail.tools.length})`)
      const width = Math.max(...detail.tools.map((tool) => tool.name.length))
      for (const tool of detail.tools) {
        const about = terminalSafe(tool.description.split("\n")[0]!).slice(0, 80)
        lines.push(`    ${pad(terminalSafe(tool.name), width)}  ${pad(tool.effect, 8)}  ${style.dim(about)}`.trimEnd())
      }
    }
    if (detail.prompts.length > 0) {
      lines.push(`  prompts   ${terminalSafe(detail.prompts.map((name) => `/${name}`).join(", "))}`)
    }
    process.stdout.write(`${lines.join("\n")}\n`)
  })

const namePattern = /^[A-Za-z0-9_-]+$/
// What leaves a tool's own name room in the 64 characters of mcp__<server>__<tool>.
const MAX_NAME = 40

/** `K=V` or `K: V` (as Claude Code's `--header` takes it): split at the first `=` or `:`. */
const pairOf = (flag: string, text: string): Effect.Effect<readonly [string, string], CliError> => {
  const at = text.search(/[=:]/)
  const key = at <= 0 ? "" : text.slice(0, at).trim()
  if (key === "") return Effect.fail(usageError(`--${flag} "${text}": write it as NAME=value`))
  return Effect.succeed([key, text.slice(at + 1).trim()] as const)
}

const pairsOf = (flag: string, texts: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(texts, (text) => pairOf(flag, text)),
    (pairs) => (pairs.length === 0 ? undefined : Object.fromEntries(pairs))
  )

/** An absolute http(s) URL (one holding `${VAR}` is checked once expanded, when the server starts). */
const isWebAddress = (text: string): boolean => {
  try {
    const url = new URL(text)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

/** `alisio mcp add <name> -- <command> [args…]` or `--url <url>`: a server in the global config.yaml. */
export const addServer = (flags: {
  readonly name: string
  readonly command: ReadonlyArray<string>
  readonly url: Option.Option<string>
  readonly transport: Option.Option<"http" | "sse">
  readonly header: ReadonlyArray<string>
  readonly env: ReadonlyArray<string>
}) =>
  Effect.gen(function* () {
    const remedy = "(see alisio mcp add --help)"
    if (!namePattern.test(flags.name)) {
      return yield* usageError(
        `The server name "${flags.name}" may hold only letters, digits, "_" and "-": its tools are named mcp__${flags.name}__<tool> ${remedy}`
      )
    }
    if (flags.name.length > MAX_NAME) {
      return yield* usageError(
        `The server name "${flags.name.slice(0, 20)}…" is ${flags.name.length} characters: its tools are named mcp__<server>__<tool>, which models accept up to 64 characters; use at most ${MAX_NAME} ${remedy}`
      )
    }
    const [command, ...args] = flags.command
    if (Option.isSome(flags.url) === (command !== undefined)) {
      return yield* usageError(
        `Give the server either a command after \`--\` or --url, not ${command === undefined ? "neither" : "both"} ${remedy}`
      )
    }
    if (command !== undefined && (flags.header.length > 0 || Option.isSome(flags.transport))) {
      return yield* usageError(`--header and --transport are for a server with --url ${remedy}`)
    }
    if (Option.isSome(flags.url) && !flags.url.value.includes("${") && !isWebAddress(flags.url.value)) {
      return yield* usageError(
        `--url ${flags.url.value} is not an http:// or https:// address; give the server's full URL, e.g. https://example.com/mcp ${remedy}`
      )
    }
    if (Option.isSome(flags.url) && flags.env.length > 0) {
      return yield* usageError(`--env is for a server started as a command ${remedy}`)
    }
    const setup = yield* loadSetup({})
    const file = setup.paths.globalConfigFile
    const global = setup.layers.find((layer) => layer.kind === "global")
    if (global?.config.mcpServers?.[flags.name] !== undefined) {
      return yield* usageError(
        `An MCP server named ${flags.name} is already in ${file}; \`alisio mcp remove ${flags.name}\` first to replace it`
      )
    }
    const twin = Object.keys(setup.config.mcpServers ?? {}).find(
      (name) => name !== flags.name && serverNameKey(name) === serverNameKey(flags.name)
    )
    if (twin !== undefined) {
      return yield* usageError(
        `The MCP server ${twin} is already configured, and ${flags.name} would share its tool and command names (mcp__${twin}__…, in any case), so it would not start; choose another name ${remedy}`
      )
    }
    const env = yield* pairsOf("env", flags.env)
    const headers = yield* pairsOf("header", flags.header)
    const entry: Record<string, unknown> =
      command !== undefined
        ? { command, ...(args.length === 0 ? {} : { args }), ...(env === undefined ? {} : { env }) }
        : {
            // `type` is written only when it is not what a url means anyway.
            ...(Option.getOrUndefined(flags.transport) === "sse" ? { type: "sse" } : {}),
            url: Option.getOrThrow(flags.url),
            ...(headers === undefined ? {} : { headers })
          }
    // Headers and env often carry a token: the file is then made private.
    yield* ConfigEdits.setIn(file, ["mcpServers", flags.name], entry, {
      secret: "headers" in entry || "env" in entry
    }).pipe(Effect.mapError((error) => new CliError({ message: error.message, exitCode: ExitCode.failed })))
    const what = command !== undefined ? flags.command.join(" ") : Option.getOrThrow(flags.url)
    process.stdout.write(
      `Added the MCP server ${flags.name} (${what}) to ${file}.\nCheck it with: alisio mcp get ${flags.name}\n`
    )
  })

/** `alisio mcp remove <name>`: out of the global config.yaml, comments kept. */
export const removeServer = (flags: { readonly name: string }) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({})
    const file = setup.paths.globalConfigFile
    const global = setup.layers.find((layer) => layer.kind === "global")
    if (global?.config.mcpServers?.[flags.name] === undefined) {
      const names = Object.keys(global?.config.mcpServers ?? {})
      return yield* usageError(
        `${file} has no MCP server named ${flags.name}` +
          (names.length === 0 ? "" : `; it has ${names.join(", ")}`) +
          " (a project's servers are in its .mcp.json or .alisio/config.yaml)"
      )
    }
    yield* ConfigEdits.deleteIn(file, ["mcpServers", flags.name]).pipe(
      Effect.mapError((error) => new CliError({ message: error.message, exitCode: ExitCode.failed }))
    )
    process.stdout.write(`Removed the MCP server ${flags.name} from ${file}.\n`)
  })
