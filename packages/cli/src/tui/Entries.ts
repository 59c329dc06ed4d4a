// The blocks of a conversation other than tool cards: what the person wrote, the model's
// reasoning, notices (retries, errors, command output) and the start-up screen.
import { type Component, truncateToWidth } from "./PiTuiCore.js"
import { ReasoningText } from "./ReasoningText.js"
import { sanitize } from "./Sanitize.js"
import type { Theme } from "./Theme.js"
import { wrapLine } from "./Wrap.js"

/** Lines wrapped to the width, each styled on its own (styles never run across lines). */
const wrapped = (text: string, width: number, style: (line: string) => string, indent = ""): Array<string> => {
  const lines: Array<string> = []
  const room = Math.max(1, width - indent.length)
  for (const line of text.split("\n")) {
    for (const part of wrapLine(line, room)) lines.push(truncateToWidth(indent + style(part), width, ""))
  }
  return lines
}

abstract class Cached implements Component {
  private cache: { width: number; lines: ReadonlyArray<string> } | undefined
  protected abstract draw(width: number): ReadonlyArray<string>
  invalidate(): void {
    this.cache = undefined
  }
  render(width: number): ReadonlyArray<string> {
    if (this.cache?.width !== width) this.cache = { width, lines: this.draw(width) }
    return this.cache.lines
  }
}

/** A message the person sent (or queued: shown dimmed until it is sent). */
// A message longer than this many screen lines (a paste, mostly) shows its first lines until Ctrl-O.
const USER_LINES = 16
const USER_LINES_COLLAPSED = 12

export class UserEntry extends Cached {
  private expanded = false
  constructor(
    readonly text: string,
    private readonly theme: Theme,
    private queued = false
  ) {
    super()
  }
  send(): void {
    this.queued = false
    this.invalidate()
  }
  setExpanded(expanded: boolean): void {
    this.expanded = expanded
    this.invalidate()
  }
  protected draw(width: number): ReadonlyArray<string> {
    const t = this.theme
    const prefix = `${t.glyphs.prompt} `
    const lines = wrapped(sanitize(this.text), width - prefix.length, this.queued ? t.dim : t.user)
    const hidden = this.expanded || lines.length <= USER_LINES ? 0 : lines.length - USER_LINES_COLLAPSED
    const out = lines
      .slice(0, lines.length - hidden)
      .map((line, index) => truncateToWidth((index === 0 ? t.user(prefix) : "  ") + line, width, ""))
    if (hidden > 0) out.push(...wrapped(`… ${hidden} more lines (Ctrl-O shows them)`, width, t.dim, "  "))
    if (this.queued) out.push(...wrapped("(queued: sent when the current run ends)", width, t.dim, "  "))
    return out
  }
}

/** The model's reasoning: dimmed; while it streams the last lines show, then one line unless expanded. */
export class ReasoningEntry extends Cached {
  private readonly body = new ReasoningText()
  private done = false
  expanded = false
  constructor(private readonly theme: Theme) {
    super()
  }
  /** Characters cleaned so far. */
  get work(): number {
    return this.body.work
  }
  append(delta: string): void {
    this.body.append(delta)
    this.invalidate()
  }
  finish(): void {
    this.done = true
    this.invalidate()
  }
  setExpanded(expanded: boolean): void {
    this.expanded = expanded
    this.invalidate()
  }
  protected draw(width: number): ReadonlyArray<string> {
    const t = this.theme
    const lines = this.body.rows(width, t.dim)
    const glyph = this.expanded ? t.glyphs.expanded : t.glyphs.collapsed
    const head = t.dim(
      t.italic(
        `${glyph} ${this.done ? "Thought" : "Thinking…"} (${lines.length} line${lines.length === 1 ? "" : "s"}${this.expanded ? "" : "; Ctrl-O shows it"})`
      )
    )
    if (this.expanded) return [truncateToWidth(head, width, "…"), ...lines]
    return this.done ? [truncateToWidth(head, width, "…")] : [truncateToWidth(head, width, "…"), ...lines.slice(-3)]
  }
}

export type NoticeLevel = "info" | "warning" | "error" | "retry" | "command"

/** A line (or a few) about the session: a retry, an error, what a command printed. */
export class NoticeEntry extends Cached {
  constructor(
    private text: string,
    private level: NoticeLevel,
    private readonly theme: Theme
  ) {
    super()
  }
  /** Shows other text in its place (an answer as it streams). */
  update(text: string, level: NoticeLevel = this.level): void {
    this.text = text
    this.level = level
    this.invalidate()
  }
  protected draw(width: number): ReadonlyArray<string> {
    const t = this.theme
    const text = sanitize(this.text).replace(/\s+$/, "")
    switch (this.level) {
      case "error":
        return wrapped(text, width, t.error, "")
      case "warning":
        return wrapped(text, width, t.warn, "")
      case "retry":
        return wrapped(`${t.glyphs.retry} ${text}`, width, t.warn, "")
      case "command":
        return wrapped(text, width, (line) => line, "  ")
      case "info":
        return wrapped(text, width, t.dim, "")
    }
  }
}

/** Lines drawn by someone else (the start-up screen): already sanitized and styled, cut to the width. */
export class LinesEntry extends Cached {
  constructor(private readonly lines: ReadonlyArray<string>) {
    super()
  }
  protected draw(width: number): ReadonlyArray<string> {
    return this.lines.map((line) => truncateToWidth(line, width, ""))
  }
}
