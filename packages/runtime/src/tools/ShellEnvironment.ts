import * as Redacted from "effect/Redacted"
import type { ConfigFile } from "../ConfigSchema.js"
import { compileNameGlob } from "./internal/glob.js"

/**
 * What a `bash` command inherits of Alisio's environment (TL-8), after Codex's
 * `shell_environment_policy`. In order: start from `inherit` (`all` variables, the `core` ones a
 * shell needs, or `none`); remove provider keys by name and by value, always; remove names
 * matching the default excludes (`*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`) unless
 * `ignoreDefaultExcludes`, and those matching `exclude`; keep only names matching `includeOnly`
 * when given; finally apply `set`. Patterns are globs (`*`, `?`) on names, ignoring case.
 */
export interface ShellEnvironmentPolicy {
  readonly inherit?: "all" | "core" | "none" | undefined
  readonly ignoreDefaultExcludes?: boolean | undefined
  readonly exclude?: ReadonlyArray<string> | undefined
  readonly includeOnly?: ReadonlyArray<string> | undefined
  readonly set?: Readonly<Record<string, string>> | undefined
  /** Variables holding provider keys (`OPENAI_API_KEY`, configured `apiKeyEnv`): never inherited. */
  readonly secretNames?: ReadonlyArray<string> | undefined
  /** Provider keys themselves: a variable holding one is not inherited, whatever its name. */
  readonly secretValues?: ReadonlyArray<string> | undefined
}

export const DEFAULT_EXCLUDES: ReadonlyArray<string> = ["*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*"]

/** What `inherit: core` keeps: what a shell and common tools need to run, and the locale. */
export const CORE_VARIABLES: ReadonlyArray<string> = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "USER",
  "USERNAME",
  "TMPDIR",
  "TEMP",
  "TMP",
  "LANG",
  "LC_*",
  "TZ"
]

/** The variable OpenAI's SDK and Alisio read the `openai` provider's key from. */
export const OPENAI_KEY_VARIABLE = "OPENAI_API_KEY"

/** The default: everything but provider keys and variables named like secrets. */
export const defaultPolicy: ShellEnvironmentPolicy = { secretNames: [OPENAI_KEY_VARIABLE] }

// Values this short are no secret worth hiding, and hiding them would strip unrelated variables.
const MIN_SECRET_LENGTH = 8

const namePredicate = (patterns: ReadonlyArray<string>): ((name: string) => boolean) => {
  const matchers = patterns.map((pattern) => compileNameGlob(pattern.toUpperCase()))
  return (name) => {
    const upper = name.toUpperCase()
    return matchers.some((matches) => matches(upper))
  }
}

/** The environment a command starts with under `policy`, from `base` (Alisio's own by default). */
export const shellEnvironment = (
  policy: ShellEnvironmentPolicy = defaultPolicy,
  base: NodeJS.ProcessEnv = process.env
): Record<string, string> => {
  const inherit = policy.inherit ?? "all"
  const isCore = namePredicate(CORE_VARIABLES)
  const secretNames = new Set([OPENAI_KEY_VARIABLE, ...(policy.secretNames ?? [])])
  const secretValues = new Set((policy.secretValues ?? []).filter((value) => value.length >= MIN_SECRET_LENGTH))
  const excluded = namePredicate([
    ...(policy.ignoreDefaultExcludes === true ? [] : DEFAULT_EXCLUDES),
    ...(policy.exclude ?? [])
  ])
  const included = policy.includeOnly === undefined ? undefined : namePredicate(policy.includeOnly)
  const environment: Record<string, string> = {}
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || inherit === "none" || (inherit === "core" && !isCore(name))) continue
    if (secretNames.has(name) || secretValues.has(value.trim()) || excluded(name)) continue
    if (included !== undefined && !included(name)) continue
    environment[name] = value
  }
  return { ...environment, ...policy.set }
}

/** The policy the configuration asks for, with every configured provider key kept out. */
export const policyFromConfig = (config: ConfigFile, env: NodeJS.ProcessEnv = process.env): ShellEnvironmentPolicy => {
  const providers = Object.values(config.providers ?? {})
  const secretNames = [
    OPENAI_KEY_VARIABLE,
    ...providers.flatMap((provider) => (provider.apiKeyEnv === undefined ? [] : [provider.apiKeyEnv]))
  ]
  const secretValues = [
    ...secretNames.flatMap((name) => {
      const value = env[name]?.trim()
      return value === undefined || value === "" ? [] : [value]
    }),
    ...providers.flatMap((provider) => (provider.apiKey === undefined ? [] : [Redacted.value(provider.apiKey).trim()]))
  ]
  return { ...config.shell?.environment, secretNames, secretValues }
}
