// A stored conversation as a person reads it (`sessions show`, `sessions export --format md`):
// the turns grouped by run, text in full, each tool call and its result summarised to a line.

import type { Message, ToolResultMessage } from "@alisio/domain/Message"
import { textOf } from "@alisio/domain/Message"
import type { CompactionRecord, RunRecord, StoredMessage } from "@alisio/runtime/SessionStore"
import { toolResults } from "./ToolResults.js"

export type Entry =
  | { readonly kind: "user" | "assistant" | "system"; readonly text: string }
  | {
      readonly kind: "tool"
      readonly name: string
      /** The call's arguments in a few words: the path, command or pattern, else compact JSON. */
      readonly args: string
      readonly outcome: "ok" | "error" | "pending"
      /** The result's first line and how many more there are. */
      readonly result: string
    }
  | {
      /** A compaction (CTX-1): the messages above it, back to the previous one, are summarised in requests. */
      readonly kind: "compaction"
      readonly messages: number
      readonly tokensBefore: number
      readonly tokensAfter: number
    }

export interface RunSection {
  /** Absent for messages stored outside any run. */
  readonly run?: RunRecord | undefined
  readonly index: number
  readonly entries: ReadonlyArray<Entry>
}

const LINE = 100

const oneLine = (text: string, width = LINE): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat
}

// The argument a person recognises a call by, for the builtin tools and most others.
const telling = ["command", "path", "file_path", "pattern", "query", "url", "title", "prompt", "task"]

export const summariseArguments = (json: string): string => {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return oneLine(json, 80)
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>
    const key = telling.find((name) => typeof record[name] === "string")
    if (key !== undefined) {
      const others = Object.keys(record).length - 1
      return `${oneLine(String(record[key]), 80)}${others > 0 ? ` (+${others} more argument${others > 1 ? "s" : ""})` : ""}`
    }
  }
  return oneLine(JSON.stringify(value), 80)
}

const summariseResult = (message: ToolResultMessage): string => {
  const text = textOf(message.content)
  const images = message.content.filter((part) => part._tag === "image").length
  const lines = text.split("\n").filter((line) => line.trim() !== "")
  const first = lines[0] === undefined ? "(no output)" : oneLine(lines[0], 80)
  const more = lines.length > 1 ? ` (+${lines.length - 1} line${lines.length > 2 ? "s" : ""})` : ""
  return `${first}${more}${images > 0 ? ` [${images} image${images > 1 ? "s" : ""}]` : ""}`
}

const userText = (message: Extract<Message, { role: "user" }>): string => {
  const images = message.content.filter((part) => part._tag === "image").length
  const text = textOf(message.content)
  return images === 0 ? text : `${text}${text === "" ? "" : "\n"}[${images} image${images > 1 ? "s" : ""} attached]`
}

/** What a conversation is shown as, in order: a run's heading, then what happened in it. */
export type Piece = { readonly kind: "section"; readonly run?: RunRecord | undefined; readonly index: number } | Entry

/** A tool call of a page: the call's id and the position of the message that made it. */
export interface Call {
  readonly id: string
  readonly position: number
}

/**
 * The conversation shown a page of messages at a time (pages in order, each in order). A call's
 * result is the first result with its id that follows it (ToolResults.ts); one that is not in the
 * call's page is asked of `later`, which has looked at the pages after it. Between pages only the
 * current section and the previous message's position are kept.
 */
export const makeConversation = (runs: ReadonlyArray<RunRecord>, compactions: ReadonlyArray<CompactionRecord> = []) => {
  const runIndex = new Map(runs.map((run, index) => [run.id as string, index + 1]))
  let section: { readonly run?: RunRecord | undefined } | undefined
  let previous: number | undefined

  // Each compaction is shown after the last message it stands for: the one before a message past it.
  const compactedBefore = (next: number | undefined): ReadonlyArray<Piece> =>
    previous === undefined
      ? []
      : compactions
          .filter(
            (compaction) =>
              previous! <= compaction.lastPosition && (next === undefined || compaction.lastPosition < next)
          )
          .map((compaction) => ({
            kind: "compaction",
            messages: compaction.messagesCompacted,
            tokensBefore: compaction.tokensBefore,
            tokensAfter: compaction.tokensAfter
          }))

  /** The calls of `page` whose result is not in `page`. */
  const unanswered = (page: ReadonlyArray<StoredMessage>): ReadonlyArray<Call> => {
    const resultOf = toolResults(page.map((stored) => stored.message))
    return page.flatMap((stored, at) =>
      stored.message.role === "assistant"
        ? stored.message.content.flatMap((part) =>
            part._tag === "tool_call" && resultOf(at, part.id) === undefined
              ? [{ id: part.id, position: stored.position }]
              : []
          )
        : []
    )
  }

  const page = (
    messages: ReadonlyArray<StoredMessage>,
    later: (call: Call) => ToolResultMessage | undefined = () => undefined
  ): ReadonlyArray<Piece> => {
    const resultOf = toolResults(messages.map((stored) => stored.message))
    const pieces: Array<Piece> = []
    for (const [at, stored] of messages.entries()) {
      pieces.push(...compactedBefore(stored.position))
      previous = stored.position
      const runId = stored.runId as string | undefined
      if (section === undefined || section.run?.id !== runId) {
        const run = runs.find((candidate) => candidate.id === runId)
        section = { run }
        pieces.push({ kind: "section", run, index: runId === undefined ? 0 : (runIndex.get(runId) ?? 0) })
      }
      const { message } = stored
      switch (message.role) {
        case "system":
          pieces.push({ kind: "system", text: message.content })
          break
        case "user":
          pieces.push({ kind: "user", text: userText(message) })
          break
        case "assistant": {
          const text = textOf(message.content)
          if (text.trim() !== "") pieces.push({ kind: "assistant", text })
          for (const part of message.content) {
            if (part._tag !== "tool_call") continue
            const result = resultOf(at, part.id) ?? later({ id: part.id, position: stored.position })
            pieces.push({
              kind: "tool",
              name: part.name,
              args: summariseArguments(part.arguments),
              outcome: result === undefined ? "pending" : result.isError ? "error" : "ok",
              result: result === undefined ? "(no result stored)" : summariseResult(result)
            })
          }
          break
        }
        case "tool":
          break
      }
    }
    return pieces
  }

  /** What follows the last message: the compactions that end with it. */
  const end = (): ReadonlyArray<Piece> => compactedBefore(undefined)

  return { unanswered, page, end }
}

/** The pieces grouped into sections. */
const sectionsOf = (pieces: ReadonlyArray<Piece>): ReadonlyArray<RunSection> => {
  const sections: Array<{ run?: RunRecord | undefined; index: number; entries: Array<Entry> }> = []
  for (const piece of pieces) {
    if (piece.kind === "section") sections.push({ run: piece.run, index: piece.index, entries: [] })
    else sections.at(-1)?.entries.push(piece)
  }
  return sections
}

/** The messages grouped by run, in order, with each tool call paired with its result. */
export const conversation = (
  messages: ReadonlyArray<StoredMessage>,
  runs: ReadonlyArray<RunRecord>,
  compactions: ReadonlyArray<CompactionRecord> = []
): ReadonlyArray<RunSection> => {
  const shown = makeConversation(runs, compactions)
  return sectionsOf([...shown.page(messages), ...shown.end()])
}

/** What a compaction did, in one line. */
const compactionText = (entry: Extract<Entry, { kind: "compaction" }>): string =>
  `compacted: ${entry.messages} message${entry.messages === 1 ? "" : "s"} up to here are sent as a summary ` +
  `(about ${tokens(entry.tokensBefore)} → ${tokens(entry.tokensAfter)} tokens a request)`

/** A number of tokens as people read it: 950, 12.3k, 1.2M. */
export const tokens = (n: number): string =>
  n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k` : `${(n / 1e6).toFixed(1)}M`

/** `openai/gpt-4o · completed · 1.2k in, 300 out` */
export const describeRun = (run: RunRecord): string =>
  [
    `${run.provider}/${run.model}`,
    run.status,
    ...(run.usage === undefined ? [] : [`${tokens(run.usage.inputTokens)} in, ${tokens(run.usage.outputTokens)} out`]),
    ...(run.error === undefined ? [] : [oneLine(run.error, 120)])
  ].join(" · ")

const indent = (text: string, prefix: string, first: string): ReadonlyArray<string> =>
  text.split("\n").map((line, index) => `${index === 0 ? first : prefix}${line}`.trimEnd())

const marks = { ok: "✓", error: "✗", pending: "…" } as const

/** Pieces of the conversation as terminal text, a few lines per turn. */
export const textLines =
  (when: (ms: number) => string) =>
  (pieces: ReadonlyArray<Piece>): ReadonlyArray<string> =>
    pieces.flatMap((piece) =>
      piece.kind === "section"
        ? [
            "",
            piece.run === undefined
              ? "── outside any run"
              : `── run ${piece.index} · ${describeRun(piece.run)} · ${when(piece.run.createdAt)}`
          ]
        : piece.kind === "tool"
          ? [`  ${marks[piece.outcome]} ${piece.name} ${piece.args} → ${piece.result}`]
          : piece.kind === "compaction"
            ? [`  ⋯ ${compactionText(piece)}`]
            : piece.kind === "system"
              ? [`system: ${oneLine(piece.text)}`]
              : piece.kind === "user"
                ? indent(piece.text, "     ", "you: ")
                : indent(piece.text, "           ", "assistant: ")
    )

const fence = (text: string): string => {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length))
  const ticks = "`".repeat(longest + 1)
  return `${ticks}\n${text}\n${ticks}`
}

const inlineCode = (text: string): string => {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length))
  const ticks = "`".repeat(longest + 1)
  return longest === 0 ? `${ticks}${text}${ticks}` : `${ticks} ${text} ${ticks}`
}

/**
 * Pieces of the conversation as Markdown, a section per run, the text as written, tool calls as a
 * list; the lines of one piece depend on the piece before it, so one renderer takes them all, in order.
 */
export const markdownLines = (when: (ms: number) => string, level = 2) => {
  const heading = "#".repeat(level)
  const speaker = "#".repeat(level + 1)
  let previous: Entry["kind"] | undefined
  return (pieces: ReadonlyArray<Piece>): ReadonlyArray<string> => {
    const lines: Array<string> = []
    for (const piece of pieces) {
      if (piece.kind === "section") {
        lines.push(
          "",
          piece.run === undefined
            ? `${heading} Outside any run`
            : `${heading} Run ${piece.index} · ${describeRun(piece.run)} · ${when(piece.run.createdAt)}`
        )
        previous = undefined
        continue
      }
      if (piece.kind === "tool") {
        if (previous !== "tool") lines.push("")
        lines.push(
          `- ${marks[piece.outcome]} ${inlineCode(piece.name)} ${inlineCode(piece.args)} → ${inlineCode(piece.result)}`
        )
      } else if (piece.kind === "compaction") {
        lines.push("", `> ${compactionText(piece)}`)
      } else if (piece.kind === "system") {
        lines.push("", `${speaker} System`, "", fence(piece.text))
      } else {
        lines.push("", `${speaker} ${piece.kind === "user" ? "You" : "Assistant"}`, "", piece.text)
      }
      previous = piece.kind
    }
    return lines
  }
}
