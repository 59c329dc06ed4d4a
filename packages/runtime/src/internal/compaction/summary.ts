// The summary request (CTX-1): older turns written out as a plain transcript — tool calls and
// results included, long ones shortened — for the model to summarise. A transcript, not the
// messages themselves: it can be cut anywhere, and no server sees a call without its result.

import type { ModelRequest } from "@alisio/domain/LanguageModel"
import type { Message } from "@alisio/domain/Message"
import { CHARS_PER_TOKEN } from "./estimate.js"
import type { HistoryEntry } from "./plan.js"

/** The first words of the summariser's instructions: how a summary request is told from a turn. */
export const SUMMARY_SYSTEM_MARK = "You write the working summary of a conversation"

const system = [
  `${SUMMARY_SYSTEM_MARK} between a person and a coding agent, so that the agent can go on with`,
  "the work when the earlier messages are no longer in front of it. The agent will see your summary, then",
  "the most recent messages as they were.",
  "",
  "Keep, concretely and compactly:",
  "- what the person asked for and every constraint or preference they stated (their words where short);",
  "- decisions made and why; approaches tried that failed and why;",
  "- files read, created or changed, with what matters about them (paths, functions, key lines);",
  "- commands run and what they showed (errors verbatim when short), tests and their state;",
  "- identifiers, names, numbers and values the work depends on;",
  "- what is done, what is in progress, and the next steps.",
  "Leave out greetings, repetition and tool output that no longer matters. Do not invent anything.",
  "Write the summary in the language of the conversation, as plain text or Markdown, and nothing else."
].join("\n")

const roleLabel = (message: Message): string => {
  switch (message.role) {
    case "user":
      return "Person"
    case "assistant":
      return "Agent"
    case "tool":
      return `Result of ${message.toolName}${message.isError ? " (error)" : ""}`
    case "system":
      return "System"
  }
}

/** Text longer than `max` characters keeps its head and tail with a note of what was left out. */
const shorten = (text: string, max: number): string => {
  if (text.length <= max) return text
  const head = Math.floor(max * 0.7)
  const tail = max - head
  return `${text.slice(0, head)}\n[… ${text.length - max} characters left out …]\n${text.slice(text.length - tail)}`
}

/** One stored message as transcript text; each part at most `max` characters. */
export const transcriptOf = (message: Message, max: number): string => {
  const lines: Array<string> = []
  if (message.role === "system") lines.push(shorten(message.content, max))
  else {
    for (const part of message.content) {
      switch (part._tag) {
        case "text":
          if (part.text.trim() !== "") lines.push(shorten(part.text, max))
          break
        case "image":
          lines.push(`[an image, ${part.mediaType}]`)
          break
        case "tool_call":
          lines.push(`[calls ${part.name} ${shorten(part.arguments, max)}]`)
          break
        case "reasoning":
          break
      }
    }
  }
  return lines.length === 0 ? "" : `## ${roleLabel(message)}\n${lines.join("\n")}\n\n`
}

/** Extra instructions: the person's focus, then what plugins asked to keep. */
export interface SummaryInstructions {
  readonly focus?: string | undefined
  readonly fromPlugins: ReadonlyArray<string>
}

const closing = (instructions: SummaryInstructions): string => {
  const parts = ["Write the summary now."]
  if (instructions.focus !== undefined && instructions.focus.trim() !== "") {
    parts.push(`The person asked the summary to focus on: ${instructions.focus.trim()}`)
  }
  for (const extra of instructions.fromPlugins) parts.push(extra)
  return parts.join("\n\n")
}

/** The summary request over `transcript`, which follows `previous` (the summary of what came before it). */
export const summaryRequest = (input: {
  readonly model: string
  readonly previous: string | undefined
  readonly transcript: string
  readonly instructions: SummaryInstructions
  readonly maxOutputTokens: number
}): ModelRequest => {
  const opening =
    input.previous === undefined
      ? "The conversation so far:\n\n"
      : `The summary of the conversation before this part:\n\n${input.previous}\n\nThe conversation after it:\n\n`
  return {
    model: input.model,
    system,
    messages: [
      {
        role: "user",
        content: [{ _tag: "text", text: `${opening}${input.transcript}---\n\n${closing(input.instructions)}` }]
      }
    ],
    tools: [],
    maxOutputTokens: input.maxOutputTokens
  }
}

/**
 * The messages to summarise, as transcript chunks that each fit a summary request of `roomChars`
 * characters (after the previous summary, up to `summaryChars` long). A part longer than an eighth
 * of the room is shortened; a chunk ends between units only, unless one unit alone is too long.
 */
export const transcriptChunks = (
  entries: ReadonlyArray<HistoryEntry>,
  roomChars: number,
  summaryChars: number
): ReadonlyArray<string> => {
  const max = Math.max(200, Math.min(8_000, Math.floor(roomChars / 8)))
  const fits = Math.max(CHARS_PER_TOKEN * 64, roomChars - summaryChars - system.length - 600)
  const chunks: Array<string> = []
  let current = ""
  for (let i = 0; i < entries.length; ) {
    // A unit: a message and the tool results after it.
    let unit = transcriptOf(entries[i]!.message, max)
    let j = i + 1
    while (j < entries.length && entries[j]!.message.role === "tool") unit += transcriptOf(entries[j++]!.message, max)
    if (current !== "" && current.length + unit.length > fits) {
      chunks.push(current)
      current = ""
    }
    current += unit.length > fits ? shorten(unit, fits) : unit
    i = j
  }
  if (current !== "" || chunks.length === 0) chunks.push(current)
  return chunks
}
