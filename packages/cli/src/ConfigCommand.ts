import { existsSync } from "node:fs"
import * as path from "node:path"
import { defaultLimits, type Limits } from "@alisio/domain/Limits"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import * as Config from "@alisio/runtime/Config"
import { explain, Setting } from "@alisio/runtime/ConfigProvenance"
import { configJsonSchema, formatJsonSchema } from "@alisio/runtime/JsonSchemas"
import * as Paths from "@alisio/runtime/Paths"
import { defaultApprovals } from "@alisio/runtime/Tools"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { nonEmpty } from "./App.js"
import { CliError, ExitCode, usageError } from "./CliError.js"
import type { RunFlags } from "./Flags.js"
import { writeRecord } from "./SessionRecords.js"
import { homeRelative } from "./SessionsCommand.js"

const limitFlags = [
  ["maxTurns", "maxTurns", "--max-turns"],
  ["timeout", "timeoutMs", "--timeout"],
  ["firstTokenTimeout", "firstTokenTimeoutMs", "--first-token-timeout"],
  ["firstTokenRetries", "firstTokenRetries", "--first-token-retries"],
  ["streamIdleTimeout", "streamIdleTimeoutMs", "--stream-idle-timeout"],
  ["maxOutputTokens", "maxOutputTokens", "--max-output-tokens"],
  ["maxContextTokens", "maxContextTokens", "--max-context-tokens"],
  ["truncationRecoveries", "truncationRecoveries", "--truncation-recoveries"]
] as const satisfies ReadonlyArray<readonly [keyof RunFlags, keyof Limits, string]>

export type ConfigFlags = Pick<RunFlags, "trustProject" | "cwd" | (typeof limitFlags)[number][0]> & {
  readonly json: boolean
}

/** What applies when nothing says otherwise, as a layer of its own. */
const defaults = (files: Config.ConfigFile): Config.ConfigLayer => {
  // `openai` is there when a file configures it, or when no file configures any provider.
  const openai = files.providers === undefined || "openai" in files.providers
  return {
    kind: "default",
    config: {
      ...(openai ? { providers: { openai: { baseURL: OpenAiCompatible.defaultBaseURL, api: "chat" } } } : {}),
      limits: defaultLimits,
      approvals: defaultApprovals,
      shell: { environment: { inherit: "all" } }
    }
  }
}

/** The variables that override the files, as `App.registerProviders` reads them: one layer each. */
const environment = (files: Config.ConfigFile): ReadonlyArray<Config.ConfigLayer> => {
  const layers: Array<Config.ConfigLayer> = []
  for (const [id, entry] of Object.entries(files.providers ?? {})) {
    const key = entry.apiKeyEnv === undefined ? undefined : nonEmpty(process.env[entry.apiKeyEnv])
    if (key !== undefined) {
      layers.push({
        kind: "environment",
        detail: entry.apiKeyEnv,
        config: { providers: { [id]: { apiKey: Redacted.make(key) } } }
      })
    }
  }
  const baseURL = nonEmpty(process.env.OPENAI_BASE_URL)
  if (baseURL !== undefined) {
    layers.push({ kind: "environment", detail: "OPENAI_BASE_URL", config: { providers: { openai: { baseURL } } } })
  }
  const apiKey = nonEmpty(process.env.OPENAI_API_KEY)
  if (apiKey !== undefined) {
    layers.push({
      kind: "environment",
      detail: "OPENAI_API_KEY",
      config: { providers: { openai: { apiKey: Redacted.make(apiKey) } } }
    })
  }
  return layers
}

const flagLayers = (flags: ConfigFlags): ReadonlyArray<Config.ConfigLayer> =>
  limitFlags.flatMap(([flag, key, name]) => {
    const value = flags[flag]
    return Option.isSome(value)
      ? [{ kind: "flag" as const, detail: name, config: { limits: { [key]: value.value } } }]
      : []
  })

const FileState = Schema.Struct({ path: Schema.String, exists: Schema.Boolean })

/** `alisio config path --json`. */
export const ConfigPaths = Schema.Struct({
  global: FileState,
  project: Schema.Struct({ ...FileState.fields, applies: Schema.Boolean }),
  stateHome: Schema.String
})

/** `alisio config --json`: the files and each effective setting with its source. */
export const ConfigReport = Schema.Struct({ files: ConfigPaths, settings: Schema.Array(Setting) })

const locate = (flags: { readonly cwd: Option.Option<string>; readonly trustProject: boolean }) =>
  Effect.gen(function* () {
    const cwd = path.resolve(Option.getOrElse(flags.cwd, () => process.cwd()))
    const paths = yield* Paths.make
    const projectFile = Paths.projectConfigFile(cwd)
    const projectExists = existsSync(projectFile)
    return {
      cwd,
      paths,
      files: {
        global: { path: paths.globalConfigFile, exists: existsSync(paths.globalConfigFile) },
        project: { path: projectFile, exists: projectExists, applies: projectExists && flags.trustProject },
        stateHome: paths.stateHome
      } satisfies typeof ConfigPaths.Type
    }
  })

const projectNote = (project: typeof ConfigPaths.Type.project) =>
  !project.exists ? "not found" : project.applies ? "applies (--trust-project)" : "ignored: --trust-project applies it"

/** `alisio config path`: the configuration files, whether they exist, and whether the project's applies. */
export const configPaths = (flags: {
  readonly json: boolean
  readonly cwd: Option.Option<string>
  readonly trustProject: boolean
}) =>
  Effect.gen(function* () {
    const { files } = yield* locate(flags)
    if (flags.json) return writeRecord(ConfigPaths, files)
    process.stdout.write(
      `${[
        `global   ${files.global.path}${files.global.exists ? "" : "  (not found)"}`,
        `project  ${files.project.path}  (${projectNote(files.project)})`,
        `state    ${files.stateHome}`
      ].join("\n")}\n`
    )
  })

const sourceText = (setting: Setting) => {
  switch (setting.source) {
    case "default":
      return "default"
    case "global":
      return "global file"
    case "project":
      return "project file"
    case "environment":
      return `environment ${setting.detail ?? ""}`.trimEnd()
    case "flag":
      return `flag ${setting.detail ?? ""}`.trimEnd()
  }
}

const valueText = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value))

/** The files, and every effective setting with its source. */
const effective = (flags: ConfigFlags) =>
  Effect.gen(function* () {
    const { files } = yield* locate(flags)
    const loaded = yield* Config.make({
      globalFile: files.global.path,
      projectFile: files.project.path,
      trustProject: flags.trustProject
    }).pipe(Effect.mapError((error) => usageError(error.message)))
    for (const warning of loaded.warnings) process.stderr.write(`alisio: warning: ${warning}\n`)
    const settings = explain([
      defaults(loaded.config),
      ...loaded.layers,
      ...environment(loaded.config),
      ...flagLayers(flags)
    ])
    return { files, settings }
  })

const settingLines = (settings: ReadonlyArray<Setting>): ReadonlyArray<string> => {
  const width = Math.max(...settings.map((s) => s.path.length))
  const values = settings.map((s) => valueText(s.value))
  const valueWidth = Math.min(48, Math.max(...values.map((v) => v.length)))
  return settings.map((s, i) => `${s.path.padEnd(width)}  ${values[i]!.padEnd(valueWidth)}  ${sourceText(s)}`)
}

/**
 * `alisio config get <key>`: the value of one setting as it applies (for scripts: the value
 * alone), or the settings under a group of them (`limits`) with their sources. One that nothing
 * sets fails with exit code 1.
 */
export const getSetting = (flags: ConfigFlags & { readonly key: string }) =>
  Effect.gen(function* () {
    const problem = Config.unknownSetting(flags.key)
    if (problem !== undefined) return yield* usageError(problem)
    const { settings } = yield* effective(flags)
    const key = flags.key
    const found = settings.flatMap((s): ReadonlyArray<Setting> => {
      if (s.path === key || s.path.startsWith(`${key}.`) || s.path.startsWith(`${key}[`)) return [s]
      // Inside a setting listed whole (an MCP server): the part of its value the key names.
      if (!key.startsWith(`${s.path}.`)) return []
      const value = key
        .slice(s.path.length + 1)
        .split(".")
        .reduce<unknown>(
          (at, part) => (typeof at === "object" && at !== null ? (at as never)[part] : undefined),
          s.value
        )
      return value === undefined ? [] : [{ ...s, path: key, value }]
    })
    if (found.length === 0) {
      return yield* new CliError({
        message: `${flags.key} is not set, and has no default (\`alisio config set ${flags.key} <value>\` sets it)`,
        exitCode: ExitCode.failed
      })
    }
    if (flags.json) {
      for (const setting of found) writeRecord(Setting, setting)
      return
    }
    const [only] = found
    process.stdout.write(
      `${found.length === 1 && only!.path === flags.key ? valueText(only!.value) : settingLines(found).join("\n")}\n`
    )
  })

/**
 * `alisio config`: the effective configuration, each value with where it comes from — the
 * defaults, the global file, the project file (with --trust-project), the environment, a flag.
 */
export const showConfig = (flags: ConfigFlags) =>
  Effect.gen(function* () {
    const { files, settings } = yield* effective(flags)
    if (flags.json) return writeRecord(ConfigReport, { files, settings })
    process.stdout.write(
      `${[
        `# global config   ${homeRelative(files.global.path)}${files.global.exists ? "" : " (not found)"}`,
        `# project config  ${homeRelative(files.project.path)} (${projectNote(files.project)})`,
        ...(settings.some((s) => s.path === "defaultModel")
          ? []
          : ["# defaultModel is not set: runs use -m, or the first model a local server lists"]),
        ...settingLines(settings)
      ].join("\n")}\n`
    )
  })

/** `alisio config schema`: the JSON Schema of config.yaml, generated from its Schema. */
export const configSchema = Effect.sync(() => {
  process.stdout.write(formatJsonSchema(configJsonSchema()))
})
