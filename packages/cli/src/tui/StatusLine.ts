// The line under the editor: what runs (model, session, turns, tokens and context left, active
// time) and what is happening now (waiting for the first token with a spinner and the seconds,
// a wait on the person with the clock paused, and the seconds with it; a retry). Fields drop out on narrow terminals.
import { formatDuration } from "@alisio/domain/Durations"
import { type Component, truncateToWidth, visibleWidth } from "./PiTuiCore.js"
import type { Theme } from "./Theme.js"

export type Activity =
  | { readonly _tag: "Idle" }
  | { readonly _tag: "Starting" }
  | { readonly _tag: "FirstToken"; readonly since: number }
  | { readonly _tag: "Streaming" }
  | { readonly _tag: "Thinking"; readonly since: number }
  | { readonly _tag: "Tool"; readonly name: string; readonly since: number }
  | { readonly _tag: "Compacting"; readonly since: number }
  | { readonly _tag: "Cancelling" }

export interface StatusState {
  model: string | undefined
  session: string | undefined
  turns: number
  inputTokens: number
  outputTokens: number
  /** The prompt size of the latest request: how full the context is. */
  contextTokens: number | undefined
  contextWindow: number | undefined
  activeMs: number
  activity: Activity
  /** Waits on the person open now: the run's active clock is paused. */
  waits: number
  retry: string | undefined
  queued: number
  hint: string | undefined
  readOnly: boolean
}

export const initialStatus = (): StatusState => ({
  model: undefined,
  session: undefined,
  turns: 0,
  inputTokens: 0,
  outputTokens: 0,
  contextTokens: undefined,
  contextWindow: undefined,
  activeMs: 0,
  activity: { _tag: "Idle" },
  waits: 0,
  retry: undefined,
  queued: 0,
  hint: undefined,
  readOnly: false
})

/** 12345 → "12.3k". */
export const compactCount = (n: number): string =>
  n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k` : `${(n / 1_000_000).toFixed(1)}M`

export class StatusLine implements Component {
  readonly state: StatusState = initialStatus()
  private frame = 0
  private now = 0
  private cache: { width: number; lines: ReadonlyArray<string> } | undefined

  /** Told after every update, so the screen draws it. */
  onChange: () => void = () => {}

  constructor(private readonly theme: Theme) {}

  /**
   * Advances the spinner; `now` is the Effect clock's time. Returns whether anything visible moved.
   * While a wait on the person is open the seconds stand still, as the active clock does: a tool's
   * count is its running time, not the time its approval waited.
   */
  tick(now: number): boolean {
    const activity = this.state.activity
    if (this.state.waits > 0 && this.now > 0 && now > this.now && "since" in activity)
      this.state.activity = { ...activity, since: activity.since + (now - this.now) }
    this.now = now
    const moving = this.state.activity._tag !== "Idle" && this.state.waits === 0
    if (moving) this.frame += 1
    this.invalidate()
    return moving || this.state.activity._tag !== "Idle"
  }

  update(change: (state: StatusState) => void): void {
    change(this.state)
    this.invalidate()
    this.onChange()
  }

  invalidate(): void {
    this.cache = undefined
  }

  private activityText(): string | undefined {
    const t = this.theme
    const s = this.state
    const spinner = t.accent(t.glyphs.spinner[this.frame % t.glyphs.spinner.length]!)
    const seconds = (since: number) => `${Math.max(0, Math.floor((this.now - since) / 1000))}s`
    if (s.waits > 0) return t.warn(`${t.glyphs.pause} waiting for you · clock paused`)
    switch (s.activity._tag) {
      case "Idle":
        return undefined
      case "Starting":
        return `${spinner} starting`
      case "FirstToken":
        return `${spinner} waiting for the first token ${seconds(s.activity.since)}`
      case "Thinking":
        return `${spinner} thinking ${seconds(s.activity.since)}`
      case "Streaming":
        return `${spinner} answering`
      case "Tool":
        return `${spinner} ${s.activity.name} ${seconds(s.activity.since)}`
      case "Compacting":
        return `${spinner} compacting the history ${seconds(s.activity.since)}`
      case "Cancelling":
        return t.warn("cancelling…")
    }
  }

  render(width: number): ReadonlyArray<string> {
    if (this.cache?.width === width) return this.cache.lines
    const t = this.theme
    const s = this.state
    const sep = t.dim(" · ")
    const fields: Array<string> = []
    const activity = this.activityText()
    if (activity !== undefined) fields.push(activity)
    if (s.retry !== undefined) fields.push(t.warn(`${t.glyphs.retry} ${s.retry}`))
    fields.push(t.bold(s.model ?? "no model"))
    fields.push(t.dim(s.session === undefined ? "new session" : `session ${s.session}`))
    if (s.readOnly) fields.push(t.warn("read-only"))
    if (s.turns > 0) fields.push(t.dim(`${s.turns} turn${s.turns === 1 ? "" : "s"}`))
    if (s.inputTokens + s.outputTokens > 0)
      fields.push(t.dim(`${compactCount(s.inputTokens)}↑ ${compactCount(s.outputTokens)}↓`))
    if (s.contextWindow !== undefined && s.contextTokens !== undefined) {
      const left = Math.max(0, Math.round(100 - (100 * s.contextTokens) / s.contextWindow))
      fields.push((left < 15 ? t.warn : t.dim)(`${left}% context left`))
    }
    if (s.activeMs > 0) fields.push(t.dim(`${formatDuration(s.activeMs)} active`))
    if (s.queued > 0) fields.push(t.accent(`${s.queued} queued`))
    const line = fitFields(fields, sep, width)
    const lines = [line]
    const hint =
      s.hint ??
      (s.waits > 0
        ? "answer above · ctrl-c cancels the run"
        : s.activity._tag === "Idle"
          ? "/ commands · @ files · ↑ history · ctrl-d exit"
          : "esc cancels · type to queue")
    lines.push(truncateToWidth(t.dim(hint), width, "…"))
    this.cache = { width, lines }
    return lines
  }
}

/** As many fields as fit, in order; the first always shows (cut if it must). */
const fitFields = (fields: ReadonlyArray<string>, sep: string, width: number): string => {
  let line = ""
  for (const field of fields) {
    const next = line === "" ? field : line + sep + field
    if (visibleWidth(next) > width) break
    line = next
  }
  return line === "" ? truncateToWidth(fields[0] ?? "", width, "…") : line
}
