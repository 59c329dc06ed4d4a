import {
  DEFAULT_CONTEXT_WINDOW,
  DEFAULT_OUTPUT_BUDGET,
  defaultLimits,
  MIN_CONTEXT_TOKENS,
  MODEL_OUTPUT_CAP
} from "@alisio/domain/Limits"
import * as Args from "@effect/cli/Args"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"
import { formatDuration, parseDuration } from "./Durations.js"

// The flags of `run` and of the interactive UI (`alisio` itself), as @effect/cli Options, with the
// option builders the other commands share. main.ts builds the command tree from them; RunLine.ts
// reads `run`'s without @effect/cli (a test holds the two together).

/** How a limit's default reads in help: its value, and the `config.yaml` key that changes it. */
const limitDefault = (
  key: keyof typeof defaultLimits | "timeoutMs" | "maxOutputTokens" | "maxContextTokens",
  value: string
) => `(default ${value}; config.yaml: limits.${key})`

const duration = (name: string, description: string) =>
  Options.text(name).pipe(
    Options.withPseudoName("duration"),
    Options.withDescription(description),
    Options.mapEffect((text) => {
      const ms = parseDuration(text)
      if (ms !== undefined) return Effect.succeed(ms)
      // A zero is a duration, just not one a limit can be.
      const problem = /^\s*0+(?:\.0+)?\s*(ms|s|m|h)?\s*$/i.test(text)
        ? `--${name} must be longer than 0, got ${text}`
        : `--${name}: "${text}" is not a duration; write e.g. 500ms, 30s or 2m`
      return Effect.fail(ValidationError.invalidValue(HelpDoc.p(problem)))
    }),
    Options.optional
  )

/** A whole number of at least `min`; a mistake names the flag (@effect/cli's integer error does not). */
export const count = (name: string, description: string, min: number) =>
  Options.text(name).pipe(
    Options.withPseudoName("n"),
    Options.withDescription(description),
    Options.mapEffect((text) => {
      const n = text.trim() === "" ? Number.NaN : Number(text)
      if (!Number.isSafeInteger(n)) {
        return Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name}: "${text}" is not a whole number`)))
      }
      return n >= min
        ? Effect.succeed(n)
        : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name} must be at least ${min}, got ${n}`)))
    }),
    Options.optional
  )

/** One of `values`; a mistake names the flag and the values (@effect/cli's choice error names neither flag nor value). */
export const choice = <const A extends string>(
  name: string,
  values: ReadonlyArray<A>,
  description: string,
  /** Other words people type for a value (`markdown` for `md`). */
  aliases: Readonly<Record<string, A>> = {}
) =>
  Options.text(name).pipe(
    Options.withPseudoName(values.join("|")),
    Options.withDescription(description),
    Options.mapEffect((text) =>
      values.includes(text as A)
        ? Effect.succeed(text as A)
        : Object.hasOwn(aliases, text)
          ? Effect.succeed(aliases[text]!)
          : Effect.fail(
              ValidationError.invalidValue(HelpDoc.p(`--${name}: "${text}" is not one of ${values.join(", ")}`))
            )
    ),
    Options.optional
  )

export const json = Options.boolean("json").pipe(Options.withDescription("Write JSON (JSONL for streams) on stdout"))

export const pluginOption = Options.text("plugin").pipe(
  Options.repeated,
  Options.withDescription("Load an external plugin: a folder, an ESM file or an installed package (repeatable)")
)
export const disablePluginOption = Options.text("disable-plugin").pipe(
  Options.repeated,
  Options.withDescription("Do not load the plugin with this id (repeatable)")
)
const id = (name: string, description: string) =>
  Options.text(name).pipe(Options.withPseudoName("id"), Options.withDescription(description), Options.optional)

export const runFlags = {
  json: Options.boolean("json").pipe(
    Options.withDescription(
      "Write the run's events on stdout as JSON lines, one RunEvent a line and nothing else (see --final)"
    )
  ),
  final: Options.boolean("final").pipe(
    Options.withDescription(
      "With --json: instead of the events, one JSON object with the outcome when the run ends " +
        "(status, sessionId, runId, text, turns, usage, error, durations)"
    )
  ),
  quiet: Options.boolean("quiet").pipe(
    Options.withAlias("q"),
    Options.withDescription(
      "Only the answer: no tool activity, retries, progress or summary on stderr; errors and warnings still go there"
    )
  ),
  outputLastMessage: Options.text("output-last-message").pipe(
    Options.withPseudoName("file"),
    Options.withDescription("Also write the final answer's text to this file (written even when it is empty)"),
    Options.optional
  ),
  model: Options.text("model").pipe(
    Options.withAlias("m"),
    Options.withPseudoName("provider/model"),
    Options.withDescription(
      "The model to run; a bare model name means the openai provider (OPENAI_BASE_URL). " +
        "Default: the configured or remembered model; `alisio models` lists them"
    ),
    Options.optional
  ),
  session: Options.text("session").pipe(
    Options.withAlias("s"),
    Options.withPseudoName("id"),
    Options.withDescription(
      "Resume this session, in the folder it works in (`alisio sessions list` shows their ids; --cwd moves it)"
    ),
    Options.optional
  ),
  continue: Options.boolean("continue").pipe(
    Options.withAlias("c"),
    Options.withDescription("Resume the most recent session of this directory")
  ),
  readOnly: Options.boolean("read-only").pipe(
    Options.withDescription("Offer only the tools that cannot change the workspace or the world")
  ),
  yes: Options.boolean("yes").pipe(
    Options.withDescription(
      "Approve every tool request, and access to files outside the workspace (each such path is named on " +
        "stderr); without it a headless run denies what needs approval and tells the model"
    )
  ),
  trustProject: Options.boolean("trust-project").pipe(
    Options.withDescription(
      "Apply the project's .alisio/config.yaml, start the MCP servers of its .mcp.json, load its .alisio/plugins/"
    )
  ),
  plugin: pluginOption,
  disablePlugin: disablePluginOption,
  cwd: Options.directory("cwd").pipe(
    Options.withPseudoName("dir"),
    Options.withDescription("The workspace the tools work in (default: the current directory)"),
    Options.optional
  ),
  maxTurns: count(
    "max-turns",
    `Most model turns in the run ${limitDefault("maxTurns", String(defaultLimits.maxTurns))}`,
    1
  ),
  timeout: duration(
    "timeout",
    `Active time allowed for the run; it pauses while a person is asked ${limitDefault("timeoutMs", "none")}`
  ),
  firstTokenTimeout: duration(
    "first-token-timeout",
    "Silence allowed before a response's first token; then the request is sent again " +
      limitDefault("firstTokenTimeoutMs", formatDuration(defaultLimits.firstTokenTimeoutMs))
  ),
  firstTokenRetries: count(
    "first-token-retries",
    `Resends of a request that stayed silent ${limitDefault("firstTokenRetries", String(defaultLimits.firstTokenRetries))}`,
    0
  ),
  streamIdleTimeout: duration(
    "stream-idle-timeout",
    "Silence allowed in the middle of a response " +
      limitDefault("streamIdleTimeoutMs", formatDuration(defaultLimits.streamIdleTimeoutMs))
  ),
  maxOutputTokens: count(
    "max-output-tokens",
    "Output-token budget of each request " +
      limitDefault("maxOutputTokens", `the model's own, up to ${MODEL_OUTPUT_CAP}, else ${DEFAULT_OUTPUT_BUDGET}`),
    1
  ),
  maxContextTokens: count(
    "max-context-tokens",
    "The model's context window: past 80% of what it leaves for the request, older turns are summarised " +
      limitDefault("maxContextTokens", `the model's own, else ${DEFAULT_CONTEXT_WINDOW}`),
    MIN_CONTEXT_TOKENS
  ),
  truncationRecoveries: count(
    "truncation-recoveries",
    "Requests again after a response cut by the output budget " +
      limitDefault("truncationRecoveries", String(defaultLimits.truncationRecoveries)),
    0
  ),
  runId: id("run-id", "The run's id, copied to every event (default: a new UUID)"),
  requestId: id(
    "request-id",
    "Idempotency key: a run with a key already used is not run again; its events are replayed (or followed)"
  ),
  correlationId: id("correlation-id", "Copied to every event of the run, e.g. the id of the request that asked for it"),
  prompt: Args.text({ name: "prompt" }).pipe(
    Args.withDescription("The task; `-` or nothing reads it from stdin, and text piped under a task goes with it"),
    Args.repeated
  )
}

/** The values a command's handler gets for its options and arguments. */
export type FlagValues<Flags> = {
  readonly [K in keyof Flags]: Flags[K] extends Options.Options<infer A>
    ? A
    : Flags[K] extends Args.Args<infer B>
      ? B
      : never
}

export type RunFlags = FlagValues<typeof runFlags>

/**
 * What `alisio` itself takes: it opens the interactive UI (CLI-1) with the run flags that make
 * sense for a conversation; `--json`, `--final`, `--quiet` and the request ids stay `run`'s.
 */
/** The limits' flags of `run`, for the commands that take them too (the UI, `config`). */
export const limitOptions = {
  maxTurns: runFlags.maxTurns,
  timeout: runFlags.timeout,
  firstTokenTimeout: runFlags.firstTokenTimeout,
  firstTokenRetries: runFlags.firstTokenRetries,
  streamIdleTimeout: runFlags.streamIdleTimeout,
  maxOutputTokens: runFlags.maxOutputTokens,
  maxContextTokens: runFlags.maxContextTokens,
  truncationRecoveries: runFlags.truncationRecoveries
}

export const tuiFlags = {
  model: runFlags.model,
  session: runFlags.session,
  continue: runFlags.continue,
  readOnly: runFlags.readOnly,
  yes: Options.boolean("yes").pipe(
    Options.withDescription("Approve every tool request and access outside the workspace without asking")
  ),
  trustProject: runFlags.trustProject,
  plugin: pluginOption,
  disablePlugin: disablePluginOption,
  cwd: runFlags.cwd,
  ...limitOptions,
  prompt: Args.text({ name: "prompt" }).pipe(
    Args.withDescription("A first message, sent as soon as the interface opens"),
    Args.repeated
  )
}

export type TuiFlags = FlagValues<typeof tuiFlags>
