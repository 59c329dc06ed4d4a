import * as path from "node:path"
import type { LanguageModelService } from "@alisio/domain/LanguageModel"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as Config from "@alisio/runtime/Config"
import * as Extensions from "@alisio/runtime/Extensions"
import type * as Interaction from "@alisio/runtime/Interaction"
import * as McpServers from "@alisio/runtime/McpServers"
import * as ModelListCache from "@alisio/runtime/ModelListCache"
import * as Paths from "@alisio/runtime/Paths"
import * as PluginHost from "@alisio/runtime/PluginHost"
import type * as PluginUi from "@alisio/runtime/PluginUi"
import * as ProjectInstructions from "@alisio/runtime/ProjectInstructions"
import * as Providers from "@alisio/runtime/Providers"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { builtinTools } from "@alisio/runtime/tools/BuiltinTools"
import { policyFromConfig } from "@alisio/runtime/tools/ShellEnvironment"
import * as WindowCache from "@alisio/runtime/WindowCache"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { cacheHome } from "./CacheHome.js"
import { CliError, ExitCode, usageError } from "./CliError.js"
import * as HeadlessInteraction from "./HeadlessInteraction.js"
import { hostOptions, noPluginFlags, type PluginFlags, pluginHostLayer } from "./Plugins.js"
import { version } from "./Version.js"
import { checkWorkspace } from "./WorkspaceFlag.js"

/** Where a command runs and with what configuration. */
export interface Setup {
  readonly cwd: string
  readonly paths: Paths.AlisioPaths
  readonly config: Config.ConfigFile
  /** The layers the configuration merges, weakest first (where a setting comes from). */
  readonly layers: ReadonlyArray<Config.ConfigLayer>
}

/** Resolves the workspace and paths and loads the configuration; prints its warnings once. */
export const loadSetup = (options: {
  readonly cwd?: string
  /** The folder is only a key (`sessions list --cwd` of a folder since removed): it need not exist. */
  readonly cwdMayBeGone?: boolean
  readonly trustProject?: boolean
  readonly flags?: Config.ConfigFlags
  /** Read the project's `.mcp.json` too (commands that start MCP servers: run, mcp). */
  readonly projectMcp?: boolean
}): Effect.Effect<Setup, CliError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const cwd = path.resolve(options.cwd ?? process.cwd())
    if (options.cwd !== undefined && options.cwdMayBeGone !== true) yield* checkWorkspace(options.cwd, cwd)
    const paths = yield* Paths.make
    const loaded = yield* Config.make({
      globalFile: paths.globalConfigFile,
      projectFile: Paths.projectConfigFile(cwd),
      projectMcpFile: options.projectMcp === true ? Config.projectMcpFile(cwd) : undefined,
      trustProject: options.trustProject === true,
      flags: options.flags
    }).pipe(Effect.mapError((error) => usageError(error.message)))
    for (const warning of loaded.warnings) process.stderr.write(`alisio: warning: ${warning}\n`)
    return { cwd, paths, config: loaded.config, layers: loaded.layers }
  })

/**
 * The session database of the state home. State an older Alisio left readable by others is made
 * private first (ST-6), and the person is told once: the next start finds nothing to narrow.
 * `readOnly`: the command only reads, so a database on a read-only folder is read as it is.
 */
export const storeLayer = (setup: Setup, options: { readonly readOnly?: boolean } = {}) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const { stateHome } = setup.paths
      const tightened = yield* Paths.tightenStateHome(stateHome)
      if (tightened.length > 0) process.stderr.write(`alisio: ${Paths.describeTightened(stateHome, tightened)}\n`)
      return SessionStore.layer({
        filename: Paths.databaseFile(stateHome),
        ...(options.readOnly === true ? { readOnlyFallback: true } : {})
      })
    })
  ).pipe(Layer.mapError((error) => new CliError({ message: error.message, exitCode: ExitCode.failed })))

const ENDPOINT = /\/(chat\/completions|responses)\/*$/

/**
 * An address pasted with an endpoint's path at its end (`…/v1/chat/completions`, as Codex's and
 * opencode's docs show it): the adapter adds that path itself, so it would ask for
 * `…/chat/completions/chat/completions` and get a 404. The address without it, and the path.
 */
export const withoutEndpoint = (baseURL: string): { readonly base: string; readonly path: string } | undefined => {
  const found = ENDPOINT.exec(baseURL)
  return found === null ? undefined : { base: baseURL.slice(0, found.index), path: `/${found[1]}` }
}

/** An OpenAI-compatible provider as configured, with its remembered model list. */
export const providerFromConfig = (
  id: string,
  entry: Config.ProviderConfig
): {
  readonly service: LanguageModelService
  readonly remembered: Providers.RememberedModels
  /** What was wrong with the configuration and was mended, to be said once. */
  readonly warning?: string
} => {
  const isOpenAi = id === "openai"
  const envBase = isOpenAi ? nonEmpty(process.env.OPENAI_BASE_URL) : undefined
  const envKey = isOpenAi ? nonEmpty(process.env.OPENAI_API_KEY) : undefined
  const keyFromVar = entry.apiKeyEnv === undefined ? undefined : nonEmpty(process.env[entry.apiKeyEnv])
  const apiKey =
    envKey !== undefined ? Redacted.make(envKey) : keyFromVar !== undefined ? Redacted.make(keyFromVar) : entry.apiKey
  const given = envBase ?? entry.baseURL
  const endpoint = given === undefined ? undefined : withoutEndpoint(given)
  const baseURL = endpoint === undefined ? given : endpoint.base
  const warning =
    endpoint === undefined
      ? undefined
      : `${envBase !== undefined ? "OPENAI_BASE_URL" : `providers.${id}.baseURL`} ends in ${endpoint.path}, ` +
        `which Alisio adds itself; using ${endpoint.base} (set it to that to silence this)`
  const catalog =
    entry.models === undefined
      ? undefined
      : Object.fromEntries(Object.entries(entry.models).map(([model, info]) => [model, { ...info }]))
  const server = baseURL ?? OpenAiCompatible.defaultBaseURL
  const compatible = OpenAiCompatible.make({
    providerId: id,
    ...(baseURL === undefined ? {} : { baseURL }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(entry.api === undefined ? {} : { api: entry.api }),
    ...(entry.headers === undefined ? {} : { headers: entry.headers }),
    ...(entry.outputTokensParam === undefined || entry.outputTokensParam === "max_output_tokens"
      ? {}
      : { outputTokensParam: entry.outputTokensParam }),
    ...(catalog === undefined ? {} : { catalog })
  })
  const service: LanguageModelService = {
    ...compatible,
    learnedWindows: WindowCache.make(
      WindowCache.cacheFile(path.join(cacheHome(), "windows"), { providerId: id, baseURL: server })
    )
  }
  // Its model list, as an earlier run fetched it: a run with a known model sends no `GET /models`.
  const remembered = ModelListCache.make(
    ModelListCache.cacheFile(path.join(cacheHome(), "models"), {
      providerId: id,
      baseURL: server,
      apiKey: apiKey === undefined ? "" : Redacted.value(apiKey)
    })
  )
  return { service, remembered, ...(warning === undefined ? {} : { warning }) }
}

export const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim()

/**
 * Registers the configured providers, and `openai` from `OPENAI_BASE_URL` / `OPENAI_API_KEY`.
 * Fails when no provider can be reached at all: OpenAI's own server without a key, and no
 * provider of a plugin (PRV-3: the plugin host registered those before this runs).
 */
export const registerProviders = (
  setup: Setup,
  warn: (line: string) => void = (line) => process.stderr.write(`alisio: warning: ${line}\n`)
) =>
  Effect.gen(function* () {
    const providers = yield* Providers.Providers
    const fromPlugins = (yield* providers.list).length > 0
    const configured = setup.config.providers ?? {}
    const entries = Object.entries(configured)
    if (!("openai" in configured)) {
      const openai: Config.ProviderConfig = {}
      const usable =
        nonEmpty(process.env.OPENAI_BASE_URL) !== undefined || nonEmpty(process.env.OPENAI_API_KEY) !== undefined
      if (usable || (entries.length === 0 && !fromPlugins)) entries.unshift(["openai", openai])
    }
    for (const [id, entry] of entries) {
      const { service, remembered, warning } = providerFromConfig(id, entry)
      if (warning !== undefined) warn(warning)
      yield* providers.register(id, service, remembered)
    }
    if (
      !fromPlugins &&
      entries.length === 1 &&
      entries[0]![0] === "openai" &&
      entries[0]![1].baseURL === undefined &&
      nonEmpty(process.env.OPENAI_BASE_URL) === undefined &&
      nonEmpty(process.env.OPENAI_API_KEY) === undefined &&
      entries[0]![1].apiKey === undefined
    ) {
      return yield* usageError(
        "No provider is configured: set OPENAI_BASE_URL (and OPENAI_API_KEY if the server needs one), " +
          `or add providers to ${setup.paths.globalConfigFile}.`
      )
    }
  })

/**
 * The providers, those of the configuration (and `openai`) first, then those of plugins: installing
 * a provider package (PRV-3) does not change which provider a run without a model takes.
 */
export const configuredFirst = <A extends { readonly id: string }>(
  setup: Setup,
  entries: ReadonlyArray<A>
): ReadonlyArray<A> => {
  const configured = new Set(["openai", ...Object.keys(setup.config.providers ?? {})])
  return [
    ...entries.filter((entry) => configured.has(entry.id)),
    ...entries.filter((entry) => !configured.has(entry.id))
  ]
}

/** The tools of a headless run: the builtin ones but `ask_user_question`, which nobody could answer. */
export const headlessTools = (setup: Setup) =>
  builtinTools({ bash: { environment: policyFromConfig(setup.config) } }).filter(
    (tool) => tool.name !== "ask_user_question"
  )

/**
 * The configured MCP servers (MCP-1): nothing starts until a run needs tools. A failure is one
 * line on stderr unless `silent` (commands that show it themselves); servers log under the state.
 */
export const mcpServersLayer = (setup: Setup, options: { readonly silent?: boolean } = {}) =>
  McpServers.layer({
    servers: setup.config.mcpServers ?? {},
    cwd: setup.cwd,
    logFolder: path.join(setup.paths.stateHome, "mcp"),
    diagnostic:
      options.silent === true
        ? undefined
        : (line) => Effect.sync(() => void process.stderr.write(`alisio: warning: ${line}\n`)),
    clientVersion: version
  })

/** The instruction files of any workspace, for child sessions (the root's are in `SystemContext`). */
const instructionsLayer = (setup: Setup) =>
  ProjectInstructions.layer({ configHome: setup.paths.configHome, home: Paths.userHome() })

/** The runtime as the `run` command uses it, composed once, with the plugin host and MCP servers over it. */
export const runtimeLayer = (
  setup: Setup,
  options: { readonly approveAll: boolean; readonly plugins?: PluginFlags | undefined; readonly quiet?: boolean }
) =>
  pluginHostLayer(setup, options.plugins ?? noPluginFlags, options.quiet === true ? "quiet" : "headless").pipe(
    Layer.provideMerge(mcpServersLayer(setup)),
    Layer.provideMerge(
      AgentRuntime.layer({
        tools: headlessTools(setup),
        interaction: HeadlessInteraction.layer({ approveAll: options.approveAll })
      })
    ),
    Layer.provideMerge(Layer.merge(Providers.layer(), instructionsLayer(setup))),
    Layer.provideMerge(storeLayer(setup))
  )

/**
 * The runtime as the interactive UI uses it: composed once, as for `run`, but with the UI's
 * Interaction (a person answers approvals and questions, so `ask_user_question` is offered) and
 * the UI's PluginUi (notifications and panels go to the screen, not to stderr), and the MCP servers.
 */
export const tuiRuntimeLayer = (
  setup: Setup,
  options: {
    readonly interaction: Layer.Layer<Interaction.Interaction>
    readonly pluginUi: Layer.Layer<PluginUi.PluginUi>
    readonly plugins: PluginFlags
  }
) =>
  PluginHost.layer(hostOptions(setup, options.plugins)).pipe(
    Layer.provideMerge(Layer.mergeAll(options.pluginUi, Extensions.layer({ version }))),
    // A server's failure reaches the screen as its `mcp_server_failed` event, never as stderr.
    Layer.provideMerge(mcpServersLayer(setup, { silent: true })),
    Layer.provideMerge(
      AgentRuntime.layer({
        tools: builtinTools({ bash: { environment: policyFromConfig(setup.config) } }),
        interaction: options.interaction
      })
    ),
    Layer.provideMerge(Layer.merge(Providers.layer(), instructionsLayer(setup))),
    Layer.provideMerge(storeLayer(setup))
  )
