import type { LanguageModelService } from "@alisio/domain/LanguageModel"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { terminalSafe } from "./TerminalText.js"

/** Titles are cut near this many characters. */
export const TITLE_LENGTH = 60

/**
 * A title from a prompt: its first non-empty line, spaces collapsed, cut at a word near 60
 * characters. Lists print titles on terminals, so no escape sequence or control character stays.
 */
export const fromPrompt = (prompt: string): string => {
  const line = (
    terminalSafe(prompt)
      .split("\n")
      .find((text) => text.trim() !== "") ?? ""
  )
    .replace(/\s+/g, " ")
    .trim()
  if (line.length <= TITLE_LENGTH) return line
  const cut = line.slice(0, TITLE_LENGTH - 1)
  const space = cut.lastIndexOf(" ")
  return `${(space > TITLE_LENGTH / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

const instructions = [
  "You name conversations.",
  "Reply with a title of at most eight words for the task the user gives:",
  "plain words, no quotes, no markdown, no final period, nothing else."
].join(" ")

// The task is all a title needs; a pasted file would only make the request slower and dearer.
const PROMPT_CHARS = 2_000
// Reasoning models think before they answer: a budget for a few words would end in silence.
const TITLE_TOKENS = 256

/** The model's answer made into one line of title, or none when nothing usable came back. */
export const cleanSummary = (answer: string): Option.Option<string> => {
  const line = (answer.split("\n").find((text) => text.trim() !== "") ?? "")
    .replace(/^\s*(?:#+\s*)?(?:title\s*:\s*)?/i, "")
    .replace(/^["'`*_“”‘’]+|["'`*_“”‘’]+$/g, "")
    .replace(/\s*[.!]+$/, "")
    .trim()
  return line === "" ? Option.none() : Option.some(fromPrompt(line))
}

/**
 * Asks the model for a one-line title of a task. Never fails: a provider error, an empty answer
 * or `within` passing (on the Effect clock) give none. The caller runs it beside the run, so it
 * never holds the run back.
 */
export const summarize = (options: {
  readonly provider: LanguageModelService
  readonly model: string
  readonly prompt: string
  readonly within: Duration.DurationInput
}): Effect.Effect<Option.Option<string>> =>
  options.provider
    .stream({
      model: options.model,
      system: instructions,
      messages: [{ role: "user", content: [{ _tag: "text", text: options.prompt.slice(0, PROMPT_CHARS) }] }],
      tools: [],
      maxOutputTokens: TITLE_TOKENS
    })
    .pipe(
      Stream.runFold("", (text, part) => (part._tag === "TextDelta" ? text + part.text : text)),
      Effect.map(cleanSummary),
      Effect.timeout(options.within),
      Effect.orElseSucceed(() => Option.none<string>())
    )
