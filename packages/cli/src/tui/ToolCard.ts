// A tool call as a card: its name, its arguments summarised, the output it streams, how it ended
// and how long it took. Collapsed it shows a few lines; expanded (Ctrl-O) the whole result.
import { formatDuration } from "@alisio/domain/Durations"
import type { ToolCallStatus } from "@alisio/domain/RunEvent"
import { type Component, truncateToWidth, visibleWidth } from "@earendil-works/pi-tui"
import { sanitize, sanitizeLine } from "./Sanitize.js"
import { CleanStream } from "./StreamCut.js"
import type { Theme } from "./Theme.js"
import { wrapLine } from "./Wrap.js"

const COLLAPSED_LINES = 3
const EXPANDED_LINES = 400

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** What a call does, in a few words: a command, a path, a pattern; else its arguments as JSON. */
export const summariseArguments = (name: string, text: string): string => {
  let args: Record<string, unknown> | undefined
  try {
    const parsed = JSON.parse(text === "" ? "{}" : text) as unknown
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed))
      args = parsed as Record<string, unknown>
  } catch {
    return oneLine(text)
  }
  if (args === undefined) return oneLine(text)
  const pick =
    (name === "bash" ? str(args.command) : undefined) ??
    (name === "ask_user_question" ? str(args.question) : undefined) ??
    (name === "grep" || name === "glob"
      ? [str(args.pattern), str(args.path)].filter((part) => part !== undefined).join(" in ")
      : undefined) ??
    str(args.path) ??
    str(args.file) ??
    str(args.command) ??
    str(args.query)
  if (pick !== undefined && pick !== "") return oneLine(pick)
  return oneLine(JSON.stringify(args))
}

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

const countBreaks = (text: string): number => {
  let count = 0
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++
  return count
}

/** A card's text as lines, without the blank ones it ends with. */
const bodyLines = (text: string): ReadonlyArray<string> =>
  text
    .replace(/\s+$/, "")
    .split("\n")
    .filter((line, _index, all) => all.length > 1 || line !== "")

export type CardStatus = ToolCallStatus | "running" | "waiting"

export class ToolCard implements Component {
  status: CardStatus = "running"
  durationMs: number | undefined
  /** What the call printed so far, cleaned a piece at a time as it came; its end is `stream.unsettled()`. */
  private readonly stream = new CleanStream()
  private output = ""
  /** How many line breaks `output` holds. */
  private breaks = 0
  private result = ""
  /** The whole result's length when `result` is only its head. */
  private resultChars: number | undefined
  expanded = false
  private cache: { width: number; lines: ReadonlyArray<string> } | undefined

  constructor(
    readonly id: string,
    readonly name: string,
    readonly args: string,
    private readonly theme: Theme
  ) {}

  /** Characters cleaned so far: the work streaming costs. */
  get work(): number {
    return this.stream.work
  }

  progress(text: string): void {
    const settled = this.stream.append(text)
    // A carriage return takes back the line it goes on (a progress bar redrawn).
    if (settled.reset) this.output = this.output.slice(0, this.output.lastIndexOf("\n") + 1)
    this.output += settled.text
    this.breaks += countBreaks(settled.text)
    // Keeps memory bounded for a command that prints without end; the card shows the tail anyway.
    if (this.output.length > 200_000) {
      const kept = this.output.slice(-100_000)
      const from = this.output.length - kept.length + kept.indexOf("\n") + 1
      this.breaks -= countBreaks(this.output.slice(0, from))
      this.output = this.output.slice(from)
    }
    this.invalidate()
  }

  /** What the call printed, cleaned: from the line that starts at or after `from` of the settled part. */
  private printed(from = 0): { readonly text: string; readonly breaksBefore: number } {
    const open = this.stream.unsettled()
    const settled = open.reset ? this.output.slice(0, this.output.lastIndexOf("\n") + 1) : this.output
    const start = from === 0 ? 0 : settled.indexOf("\n", from) + 1
    if (start === 0) return { text: settled + open.text, breaksBefore: 0 }
    return { text: settled.slice(start) + open.text, breaksBefore: this.breaks - countBreaks(settled.slice(start)) }
  }

  /** The last `limit` lines of what a running call printed, and how many are above them. */
  private runningLines(limit: number): { readonly lines: ReadonlyArray<string>; readonly hidden: number } {
    for (let size = 16_384; ; size *= 4) {
      const from = Math.max(0, this.output.length - size)
      const { text, breaksBefore } = this.printed(from)
      const lines = bodyLines(text)
      if (from === 0 || (breaksBefore > 0 && lines.length > limit)) {
        const shown = lines.slice(-limit)
        return { lines: shown, hidden: breaksBefore + lines.length - shown.length }
      }
    }
  }

  waiting(on: boolean): void {
    if (this.status === "running" || this.status === "waiting") this.status = on ? "waiting" : "running"
    this.invalidate()
  }

  complete(status: ToolCallStatus, result: string, durationMs: number, resultChars?: number): void {
    this.status = status
    this.result = sanitize(result)
    this.resultChars = resultChars
    this.durationMs = durationMs
    this.invalidate()
  }

  setExpanded(expanded: boolean): void {
    if (this.expanded === expanded) return
    this.expanded = expanded
    this.invalidate()
  }

  invalidate(): void {
    this.cache = undefined
  }

  render(width: number): ReadonlyArray<string> {
    if (this.cache?.width === width) return this.cache.lines
    const t = this.theme
    const g = t.glyphs
    const mark =
      this.status === "completed"
        ? t.ok(g.ok)
        : this.status === "error"
          ? t.error(g.failed)
          : this.status === "denied"
            ? t.warn(g.denied)
            : this.status === "cancelled"
              ? t.warn(g.denied)
              : this.status === "waiting"
                ? t.warn(g.pause)
                : t.accent(g.running)
    const tail =
      this.status === "waiting"
        ? t.warn(" waiting for approval")
        : this.status === "denied"
          ? t.warn(" denied")
          : this.status === "cancelled"
            ? t.warn(" cancelled")
            : this.durationMs === undefined
              ? ""
              : t.dim(` ${formatDuration(this.durationMs)}`)
    const summary = sanitizeLine(summariseArguments(this.name, this.args), width)
    const head = `${mark} ${t.bold(sanitizeLine(this.name, width))} ${summary}`
    const lines: Array<string> = []
    const tailWidth = visibleWidth(tail)
    if (visibleWidth(head) + tailWidth <= width) lines.push(head + tail)
    else lines.push(truncateToWidth(head, Math.max(1, width - tailWidth), "…") + (tailWidth < width ? tail : ""))
    const limit = this.expanded ? EXPANDED_LINES : COLLAPSED_LINES
    let shown: ReadonlyArray<string>
    let hidden: number
    if (this.status === "running") {
      const running = this.runningLines(limit)
      shown = running.lines
      hidden = running.hidden
    } else {
      // A call cancelled half-way keeps what it had printed on the card, above the line saying so.
      const printed = this.printed().text
      const all = bodyLines(
        this.status === "waiting"
          ? printed
          : this.status === "cancelled" && printed.trim() !== ""
            ? `${printed.replace(/\s+$/, "")}\n${this.result}`
            : this.result || printed
      )
      shown = all.slice(0, limit)
      hidden = all.length - shown.length
    }
    const indent = "  "
    for (const line of shown) {
      for (const wrapped of wrapLine(line, Math.max(1, width - indent.length), this.expanded ? 20 : 1))
        lines.push(truncateToWidth(indent + t.dim(wrapped), width, "…"))
    }
    if (hidden > 0) {
      const more = `${indent}${t.dim(`… ${hidden} more line${hidden === 1 ? "" : "s"}${this.expanded ? "" : " (Ctrl-O shows them)"}`)}`
      lines.push(truncateToWidth(more, width, "…"))
    }
    // The event brings a long result's head only; the card says so rather than pass it off as all.
    if (this.resultChars !== undefined && this.status !== "running" && this.status !== "waiting") {
      const shortened = `${indent}${t.dim(`… shortened here; the whole result has ${this.resultChars} characters`)}`
      lines.push(truncateToWidth(shortened, width, "…"))
    }
    this.cache = { width, lines }
    return lines
  }
}
