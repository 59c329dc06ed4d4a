import { statSync } from "node:fs"
import { parseDuration } from "@alisio/domain/Durations"
import { MIN_CONTEXT_TOKENS } from "@alisio/domain/Limits"
import * as Option from "effect/Option"
import type { RunFlags } from "./Flags.js"

// `alisio run …` as the command tree would parse it, without loading the tree: @effect/cli and every
// command's flags cost a run ~90–120 ms of CPU before its first request (bench/README.md). Only a
// command line this parser reads exactly as main.ts would is taken here; anything else (a mistake,
// help, a value it does not know for sure how to read) returns `undefined` and goes through
// main.ts, which checks it and explains. `test/RunLine.test.ts` holds the two parsers together.

type Kind =
  | { readonly _tag: "Boolean" }
  | { readonly _tag: "Text" }
  | { readonly _tag: "Texts" }
  | { readonly _tag: "Directory" }
  | { readonly _tag: "Count"; readonly min: number }
  | { readonly _tag: "Duration" }

interface RunOption {
  readonly key: Exclude<keyof RunFlags, "prompt">
  readonly names: ReadonlyArray<string>
  readonly kind: Kind
}

const boolean: Kind = { _tag: "Boolean" }
const text: Kind = { _tag: "Text" }
const texts: Kind = { _tag: "Texts" }
const duration: Kind = { _tag: "Duration" }
const count = (min: number): Kind => ({ _tag: "Count", min })

/** `run`'s flags: the same names, aliases and values as `runFlags` in Flags.ts. */
export const runOptions: ReadonlyArray<RunOption> = [
  { key: "json", names: ["--json"], kind: boolean },
  { key: "final", names: ["--final"], kind: boolean },
  { key: "quiet", names: ["--quiet", "-q"], kind: boolean },
  { key: "outputLastMessage", names: ["--output-last-message"], kind: text },
  { key: "model", names: ["--model", "-m"], kind: text },
  { key: "session", names: ["--session", "-s"], kind: text },
  { key: "continue", names: ["--continue", "-c"], kind: boolean },
  { key: "readOnly", names: ["--read-only"], kind: boolean },
  { key: "yes", names: ["--yes"], kind: boolean },
  { key: "trustProject", names: ["--trust-project"], kind: boolean },
  { key: "plugin", names: ["--plugin"], kind: texts },
  { key: "disablePlugin", names: ["--disable-plugin"], kind: texts },
  { key: "cwd", names: ["--cwd"], kind: { _tag: "Directory" } },
  { key: "maxTurns", names: ["--max-turns"], kind: count(1) },
  { key: "timeout", names: ["--timeout"], kind: duration },
  { key: "firstTokenTimeout", names: ["--first-token-timeout"], kind: duration },
  { key: "firstTokenRetries", names: ["--first-token-retries"], kind: count(0) },
  { key: "streamIdleTimeout", names: ["--stream-idle-timeout"], kind: duration },
  { key: "maxOutputTokens", names: ["--max-output-tokens"], kind: count(1) },
  { key: "maxContextTokens", names: ["--max-context-tokens"], kind: count(MIN_CONTEXT_TOKENS) },
  { key: "truncationRecoveries", names: ["--truncation-recoveries"], kind: count(0) },
  { key: "runId", names: ["--run-id"], kind: text },
  { key: "requestId", names: ["--request-id"], kind: text },
  { key: "correlationId", names: ["--correlation-id"], kind: text }
]

const byName = new Map(runOptions.flatMap((option) => option.names.map((name) => [name, option] as const)))

const looksLikeFlag = (word: string) => word.startsWith("-") && word !== "-"

/** A value taken as a flag's only when it is unmistakably one (as `CommandLine.check` takes it). */
const readValue = (option: RunOption, raw: string): unknown => {
  switch (option.kind._tag) {
    case "Boolean":
      return raw === "true" ? true : raw === "false" ? false : undefined
    case "Text":
      return Option.some(raw)
    case "Texts":
      return raw
    case "Directory":
      // @effect/cli refuses a path that exists and is not a folder; a missing one is the run's to report.
      return isNotFolder(raw) ? undefined : Option.some(raw)
    case "Count": {
      if (!/^\d{1,15}$/.test(raw)) return undefined
      const n = Number(raw)
      return n >= option.kind.min ? Option.some(n) : undefined
    }
    case "Duration": {
      const ms = parseDuration(raw)
      return ms === undefined ? undefined : Option.some(ms)
    }
  }
}

const isNotFolder = (path: string): boolean => {
  try {
    return !statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** What an option is when the command line leaves it out. */
const absent = (option: RunOption): unknown =>
  option.kind._tag === "Boolean" ? false : option.kind._tag === "Texts" ? [] : Option.none()

/**
 * The flags `alisio run` gets from `words` (argv after `run`), or `undefined` when main.ts must
 * read them: an unknown or repeated flag, a missing or doubtful value, help, a stray `--completions`.
 */
export const parseRunLine = (words: ReadonlyArray<string>): RunFlags | undefined => {
  const values = new Map<string, unknown>()
  const prompt: Array<string> = []
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!
    if (word === "--") {
      prompt.push(...words.slice(index + 1))
      break
    }
    if (!looksLikeFlag(word)) {
      prompt.push(word)
      continue
    }
    const equals = word.indexOf("=")
    const option = byName.get(equals > 0 ? word.slice(0, equals) : word)
    if (option === undefined) return undefined
    const repeats = option.kind._tag === "Texts"
    if (!repeats && values.has(option.key)) return undefined
    let raw = equals > 0 ? word.slice(equals + 1) : undefined
    if (raw === undefined && option.kind._tag === "Boolean") raw = "true"
    if (raw === undefined) {
      const next = words[index + 1]
      if (next === undefined || looksLikeFlag(next)) return undefined
      raw = next
      index += 1
    }
    if (raw === "") return undefined
    const value = readValue(option, raw)
    if (value === undefined) return undefined
    if (repeats) values.set(option.key, [...((values.get(option.key) as Array<string> | undefined) ?? []), value])
    else values.set(option.key, value)
  }
  const flags: Record<string, unknown> = { prompt }
  for (const option of runOptions) flags[option.key] = values.has(option.key) ? values.get(option.key) : absent(option)
  return flags as unknown as RunFlags
}
