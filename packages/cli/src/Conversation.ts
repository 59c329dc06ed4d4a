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

/** The messages grouped by run, in order, with each tool call paired with its result. */
export const conversation = (
  messages: ReadonlyArray<StoredMessage>,
  runs: ReadonlyArray<RunRecord>,
  compactions: ReadonlyArray<CompactionRecord> = []
): ReadonlyArray<RunSection> => {
  // Each compaction is shown after the last message it stands for.
  const compactedAfter = new Map<number, Array<CompactionRecord>>()
  for (const compaction of compactions) {
    let last: number | undefined
    for (const stored of messages) if (stored.position <= compaction.lastPosition) last = stored.position
    if (last === undefined) continue
    compactedAfter.set(last, [...(compactedAfter.get(last) ?? []), compaction])
  }
  const resultOf = toolResults(messages.map((stored) => stored.message))
  const sections: Array<{ run?: RunRecord | undefined; index: number; entries: Array<Entry> }> = []
  const runIndex = new Map(runs.map((run, index) => [run.id as string, index + 1]))
  for (const [at, stored] of messages.entries()) {
    const runId = stored.runId as string | undefined
    let section = sections.at(-1)
    if (section === undefined || section.run?.id !== runId) {
      const run = runs.find((candidate) => candidate.id === runId)
      section = { run, index: runId === undefined ? 0 : (runIndex.get(runId) ?? 0), entries: [] }
      sections.push(section)
    }
    const { message } = stored
    switch (message.role) {
      case "system":
        section.entries.push({ kind: "system", text: message.content })
        break
      case "user":
        section.entries.push({ kind: "user", text: userText(message) })
        break
      case "assistant": {
        const text = textOf(message.content)
        if (text.trim() !== "") section.entries.push({ kind: "assistant", text })
        for (const part of message.content) {
          if (part._tag !== "tool_call") continue
          const result = resultOf(at, part.id)
          section.entries.push({
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
    for (const compaction of compactedAfter.get(stored.position) ?? []) {
      section.entries.push({
        kind: "compaction",
        messages: compaction.messagesCompacted,
        tokensBefore: compaction.tokensBefore,
        tokensAfter: compaction.tokensAfter
      })
    }
  }
  return sections
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

/** The conversation as terminal text, a few lines per turn. */
export const renderText = (sections: ReadonlyArray<RunSection>, when: (ms: number) => string): ReadonlyArray<string> =>
  sections.flatMap((section) => [
    "",
    section.run === undefined
      ? "── outside any run"
      : `── run ${section.index} · ${describeRun(section.run)} · ${when(section.run.createdAt)}`,
    ...section.entries.flatMap((entry) =>
      entry.kind === "tool"
        ? [`  ${marks[entry.outcome]} ${entry.name} ${entry.args} → ${entry.result}`]
        : entry.kind === "compaction"
          ? [`  ⋯ ${compactionText(entry)}`]
          : entry.kind === "system"
            ? [`system: ${oneLine(entry.text)}`]
            : entry.kind === "user"
              ? indent(entry.text, "     ", "you: ")
              : indent(entry.text, "           ", "assistant: ")
    )
  ])

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

/** The conversation as Markdown: a section per run, the text as written, tool calls as a list. */
export const renderMarkdown = (
  sections: ReadonlyArray<RunSection>,
  when: (ms: number) => string,
  level = 2
): ReadonlyArray<string> =>
  sections.flatMap((section) => {
    const heading = "#".repeat(level)
    const speaker = "#".repeat(level + 1)
    const lines: Array<string> = [
      "",
      section.run === undefined
        ? `${heading} Outside any run`
        : `${heading} Run ${section.index} · ${describeRun(section.run)} · ${when(section.run.createdAt)}`
    ]
    let previous: Entry["kind"] | undefined
    for (const entry of section.entries) {
      if (entry.kind === "tool") {
        if (previous !== "tool") lines.push("")
        lines.push(
          `- ${marks[entry.outcome]} ${inlineCode(entry.name)} ${inlineCode(entry.args)} → ${inlineCode(entry.result)}`
        )
      } else if (entry.kind === "compaction") {
        lines.push("", `> ${compactionText(entry)}`)
      } else if (entry.kind === "system") {
        lines.push("", `${speaker} System`, "", fence(entry.text))
      } else {
        lines.push("", `${speaker} ${entry.kind === "user" ? "You" : "Assistant"}`, "", entry.text)
      }
      previous = entry.kind
    }
    return lines
  })
