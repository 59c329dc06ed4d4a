// `alisio connect <provider>` (CLI-1): adds an OpenAI-compatible provider to the global config.yaml
// once it answered with its models, as opencode's /connect and Codex's login do: a known name needs
// no address, a key is taken from a variable, stdin or a hidden prompt, never from the command line.
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import * as ConfigEdits from "@alisio/runtime/ConfigEdits"
import * as Providers from "@alisio/runtime/Providers"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { loadSetup, nonEmpty, providerFromConfig, type Setup, withoutEndpoint } from "./App.js"
import { CliError, ExitCode, usageError } from "./CliError.js"

interface Preset {
  readonly baseURL: string
  /** The variable its key is usually kept in; a provider without one runs locally, keyless. */
  readonly keyEnv?: string
}

/** The servers PRV-2 names, where they usually listen. */
export const presets: Readonly<Record<string, Preset>> = {
  openai: { baseURL: "https://api.openai.com/v1", keyEnv: "OPENAI_API_KEY" },
  openrouter: { baseURL: "https://openrouter.ai/api/v1", keyEnv: "OPENROUTER_API_KEY" },
  deepseek: { baseURL: "https://api.deepseek.com/v1", keyEnv: "DEEPSEEK_API_KEY" },
  ollama: { baseURL: "http://127.0.0.1:11434/v1" },
  lmstudio: { baseURL: "http://127.0.0.1:1234/v1" },
  llamacpp: { baseURL: "http://127.0.0.1:8080/v1" },
  vllm: { baseURL: "http://127.0.0.1:8000/v1" }
}

const idPattern = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/

export interface ConnectFlags {
  readonly provider: string
  readonly baseUrl: Option.Option<string>
  readonly apiKeyEnv: Option.Option<string>
  readonly withApiKey: boolean
  readonly noCheck: boolean
}

/** All of stdin, for `--with-api-key` (`printenv KEY | alisio connect … --with-api-key`). */
const readStdin = Effect.async<string>((resume) => {
  const parts: Array<Buffer> = []
  process.stdin.on("data", (part: Buffer) => parts.push(part))
  process.stdin.once("end", () => resume(Effect.succeed(Buffer.concat(parts).toString("utf8"))))
  process.stdin.once("error", () => resume(Effect.succeed("")))
})

/** Asks for the key on the terminal without echoing it; Ctrl-C or Ctrl-D gives up. */
const promptHidden = (question: string) =>
  Effect.async<Option.Option<string>>((resume) => {
    const stdin = process.stdin
    let typed = ""
    const finish = (value: Option.Option<string>) => {
      stdin.off("data", onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write("\n")
      resume(Effect.succeed(value))
    }
    const onData = (data: Buffer) => {
      for (const char of data.toString("utf8")) {
        if (char === "\r" || char === "\n") return finish(Option.some(typed))
        if (char === "\u0003" || char === "\u0004") return finish(Option.none())
        typed = char === "\u007f" || char === "\b" ? typed.slice(0, -1) : typed + char
      }
    }
    process.stderr.write(question)
    stdin.setRawMode(true)
    stdin.resume()
    stdin.on("data", onData)
  })

/** What config.yaml gets for the key: the variable's name, or the key itself (the file is 0600). */
type KeyEntry = { readonly apiKeyEnv: string } | { readonly apiKey: string } | Record<string, never>

/** The key of a known provider from its usual variable; `undefined` when it needs one that is not set. */
const presetKey = (preset: Preset | undefined): { readonly apiKeyEnv: string } | Record<string, never> | undefined =>
  preset?.keyEnv === undefined
    ? {}
    : nonEmpty(process.env[preset.keyEnv]) === undefined
      ? undefined
      : { apiKeyEnv: preset.keyEnv }

const keyEntry = (flags: ConnectFlags, preset: Preset | undefined) =>
  Effect.gen(function* () {
    if (Option.isSome(flags.apiKeyEnv)) {
      const name = flags.apiKeyEnv.value
      if (nonEmpty(process.env[name]) === undefined) {
        return yield* usageError(
          `${name} is not set: export the key in it first, or pass the key on stdin with --with-api-key.`
        )
      }
      return { apiKeyEnv: name }
    }
    if (flags.withApiKey) {
      const key = nonEmpty(yield* readStdin)
      if (key === undefined) return yield* usageError("--with-api-key read no key from stdin.")
      return { apiKey: key }
    }
    const fromPreset = presetKey(preset)
    if (fromPreset !== undefined) return fromPreset
    const remedy = `set ${preset!.keyEnv}, or pipe the key in with --with-api-key`
    if (process.stdin.isTTY !== true) return yield* usageError(`${flags.provider} needs an API key: ${remedy}.`)
    const typed = yield* promptHidden(`API key for ${flags.provider} (or ${remedy}): `)
    const key = Option.flatMapNullable(typed, nonEmpty)
    if (Option.isNone(key)) return yield* usageError(`No key was given for ${flags.provider}; nothing was written.`)
    return { apiKey: key.value }
  })

/** A provider name and address as given: checked, the address from a known name when it has none. */
const target = (provider: string, baseUrl: string | undefined, remedy: string) =>
  Effect.gen(function* () {
    const id = provider.trim()
    if (!idPattern.test(id)) {
      return yield* usageError(`The provider name "${id}" may hold letters, digits, ".", "_" and "-" ${remedy}`)
    }
    const preset = presets[id.toLowerCase()]
    const given = baseUrl?.trim() ?? preset?.baseURL
    // `…/v1/chat/completions` as pasted from another agent's docs: kept as `…/v1` (PRV-2).
    const baseURL = given === undefined ? undefined : (withoutEndpoint(given)?.base ?? given)
    if (baseURL === undefined) {
      return yield* usageError(
        `${id} is not a provider Alisio knows (${Object.keys(presets).join(", ")}): give its address with --base-url, e.g. --base-url http://127.0.0.1:8080/v1`
      )
    }
    // The URL parser would drop a line break or encode an escape sequence; the person meant neither.
    if (/[\p{Cc}\s]/u.test(baseURL)) {
      return yield* usageError(`The address ${JSON.stringify(baseURL)} holds spaces or control characters ${remedy}`)
    }
    const problem = OpenAiCompatible.addressProblem(baseURL)
    if (problem !== undefined) {
      const keyRemedy = problem.credentials ? ": give the key with --with-api-key or --api-key-env instead" : ""
      return yield* usageError(`${problem.text}${keyRemedy} ${remedy}`)
    }
    return { id, baseURL, preset }
  })

/**
 * Asks the server for its models (unless `check` is false), then writes `providers.<id>` to the
 * global config.yaml; what to tell the person. `alisio connect` and the UI's /connect share it.
 */
const connectProvider = (setup: Setup, options: { id: string; baseURL: string; key: KeyEntry; check: boolean }) =>
  Effect.gen(function* () {
    const { id, baseURL, key } = options
    const file = setup.paths.globalConfigFile
    let found = ""
    if (options.check) {
      const apiKey = "apiKey" in key ? key.apiKey : "apiKeyEnv" in key ? process.env[key.apiKeyEnv] : undefined
      const service = OpenAiCompatible.make({
        providerId: id,
        baseURL,
        ...(apiKey === undefined ? {} : { apiKey: Redacted.make(apiKey) })
      })
      const models = yield* service.models.pipe(
        Effect.mapError(
          (error) =>
            new CliError({
              message: `${id} at ${baseURL} did not list its models (${error.message}); nothing was written: check the address and the key, or write it anyway with --no-check.`,
              exitCode: ExitCode.failed
            })
        )
      )
      const shown = models.slice(0, 5).map((model) => `${id}/${terminalSafe(model.id)}`)
      found =
        models.length === 0
          ? " It lists no models yet."
          : ` It serves ${models.length} model${models.length === 1 ? "" : "s"}: ${shown.join(", ")}${models.length > shown.length ? ", …" : ""}.` +
            (setup.config.defaultModel === undefined
              ? `\n\`alisio models use ${shown[0]}\` makes one the default.`
              : "")
    }
    const existed = setup.layers.find((layer) => layer.kind === "global")?.config.providers?.[id] !== undefined
    yield* ConfigEdits.setIn(file, ["providers", id], { baseURL, ...key }, { secret: "apiKey" in key }).pipe(
      Effect.mapError((error) => usageError(error.message))
    )
    const kept =
      "apiKey" in key
        ? "; its key is in that file (mode 0600)"
        : "apiKeyEnv" in key
          ? `; its key is read from ${key.apiKeyEnv}`
          : ""
    return { text: `${existed ? "Updated" : "Connected"} ${id} (${baseURL}) in ${file}${kept}.${found}` }
  })

/** `alisio connect <provider>`: checks the server lists its models, then writes `providers.<id>`. */
export const connect = (flags: ConnectFlags) =>
  Effect.gen(function* () {
    const { id, baseURL, preset } = yield* target(
      flags.provider,
      Option.getOrUndefined(flags.baseUrl),
      "(see alisio connect --help)"
    )
    const setup = yield* loadSetup({})
    const key = yield* keyEntry(flags, preset)
    const { text } = yield* connectProvider(setup, { id, baseURL, key, check: !flags.noCheck })
    process.stdout.write(`${text}\n`)
  })

/**
 * The UI's `/connect <name> [<url>]`: the same, with the key from its usual variable only (a key
 * typed into the conversation would be kept in its history); the provider is registered at once.
 */
export const connectFromUi = (setup: Setup, args: string) =>
  Effect.gen(function* () {
    const [name = "", url] = args.trim().split(/\s+/)
    const { id, baseURL, preset } = yield* target(name, url, "(/connect <name> [<url>])")
    const key = presetKey(preset)
    if (key === undefined) {
      return yield* usageError(
        `${id} needs an API key: set ${preset!.keyEnv} before starting alisio, or run \`alisio connect ${id}\` in a shell, which asks for it.`
      )
    }
    const { text } = yield* connectProvider(setup, { id, baseURL, key, check: true }).pipe(
      Effect.mapError((error) =>
        usageError(
          error.message.replace(
            "with --no-check",
            `with \`alisio connect ${id} --base-url ${baseURL} --no-check\` in a shell`
          )
        )
      )
    )
    const { service, remembered } = providerFromConfig(id, { baseURL, ...key })
    yield* Effect.flatMap(Providers.Providers, (providers) => providers.register(id, service, remembered))
    return text.replace(
      /`alisio models use ([^`]+)` makes one the default\./,
      "`/model $1` chooses one for this session."
    )
  })
