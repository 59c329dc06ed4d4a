import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { formatDuration } from "./Durations.js"
import { columns } from "./Terminal.js"

// What a headless run is doing while nothing else is printed, as one line on a terminal's stderr
// that a spinner animates: waiting for the model's first token, thinking, running a tool. Written
// only when stderr is a terminal; it is cleared before anything else is written, so it never
// ends up in the middle of the answer or of a tool's output.

/** What the run is doing, and since when (Clock milliseconds). */
type Activity =
  | { readonly _tag: "Idle" }
  | { readonly _tag: "Waiting"; readonly since: number }
  | { readonly _tag: "Thinking"; readonly since: number }
  | { readonly _tag: "Answering"; readonly since: number }
  | { readonly _tag: "Tools"; readonly since: number; readonly running: ReadonlyMap<string, string> }

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
/** How long a frame stays; also how often the line is redrawn. */
export const FRAME_MS = 80
/** A state shorter than this shows nothing: a quick tool call does not flicker. */
export const SHOW_AFTER_MS = 150

/** Whole seconds, as people read them, once a second has passed. */
const elapsed = (ms: number) => (ms < 1_000 ? "" : ` · ${formatDuration(Math.floor(ms / 1_000) * 1_000)}`)

/** The state of the status line, fed with the run's events. */
export interface Progress {
  readonly observe: (event: KnownRunEvent, now: number) => void
  /** The line to show at `now`, or `undefined` for none. */
  readonly line: (now: number) => string | undefined
}

/**
 * Follows a run's events. `showAnswering`: say so while the answer streams, for when it streams
 * somewhere the person does not see (stdout redirected to a file).
 */
export const makeProgress = (options: { readonly showAnswering: boolean }): Progress => {
  let activity: Activity = { _tag: "Idle" }
  let model = "the model"
  const waiting = (now: number) => {
    activity = { _tag: "Waiting", since: now }
  }
  const observe = (event: KnownRunEvent, now: number): void => {
    switch (event.type) {
      case "run_started":
        model = `${event.data.provider}/${event.data.model}`
        return waiting(now)
      case "request_retry":
      case "truncation_recovery":
        return waiting(now)
      case "text_delta":
        if (activity._tag !== "Answering") activity = { _tag: "Answering", since: now }
        return
      case "reasoning_delta":
        if (activity._tag !== "Thinking") activity = { _tag: "Thinking", since: now }
        return
      case "turn_completed":
        activity = { _tag: "Idle" }
        return
      case "tool_call_started": {
        const running = activity._tag === "Tools" ? new Map(activity.running) : new Map<string, string>()
        running.set(event.data.toolCallId, event.data.name)
        activity = { _tag: "Tools", since: activity._tag === "Tools" ? activity.since : now, running }
        return
      }
      case "tool_call_completed": {
        if (activity._tag !== "Tools") return
        const running = new Map(activity.running)
        running.delete(event.data.toolCallId)
        // The last result goes back to the model: the next request is on its way.
        if (running.size === 0) return waiting(now)
        activity = { ...activity, running }
        return
      }
      case "run_completed":
      case "run_failed":
      case "run_cancelled":
      case "turns_exceeded":
        activity = { _tag: "Idle" }
        return
      default:
        return
    }
  }
  const line = (now: number): string | undefined => {
    if (activity._tag === "Idle") return undefined
    const took = now - activity.since
    if (took < SHOW_AFTER_MS) return undefined
    const frame = FRAMES[Math.floor(now / FRAME_MS) % FRAMES.length]!
    switch (activity._tag) {
      case "Waiting":
        return `${frame} waiting for ${model}${elapsed(took)}`
      case "Thinking":
        return `${frame} ${model} is thinking${elapsed(took)}`
      case "Answering":
        return options.showAnswering ? `${frame} receiving the answer${elapsed(took)}` : undefined
      case "Tools": {
        const names = [...new Set(activity.running.values())]
        const what =
          activity.running.size === 1
            ? `running ${names[0]}`
            : `running ${activity.running.size} tools (${names.join(", ")})`
        return `${frame} ${what}${elapsed(took)}`
      }
    }
  }
  return { observe, line }
}

/**
 * One line of a terminal, rewritten in place with a carriage return and blanked with spaces (no
 * escape sequences). Text longer than the terminal is cut, so it never wraps onto a second line.
 */
export interface StatusLine {
  readonly show: (text: string | undefined) => void
  /** Blanks the line so other output starts at its beginning. */
  readonly clear: () => void
}

export const makeStatusLine = (stream: NodeJS.WriteStream): StatusLine => {
  let shown = ""
  const clear = () => {
    if (shown === "") return
    stream.write(`\r${" ".repeat([...shown].length)}\r`)
    shown = ""
  }
  const show = (text: string | undefined) => {
    if (text === undefined) return clear()
    const width = Math.max(10, columns(stream) - 1)
    const chars = [...text]
    const fitted = chars.length > width ? `${chars.slice(0, width - 1).join("")}…` : text
    if (fitted === shown) return
    const blank = Math.max(0, [...shown].length - [...fitted].length)
    stream.write(`\r${fitted}${" ".repeat(blank)}${blank > 0 ? `\r${fitted}` : ""}`)
    shown = fitted
  }
  return { show, clear }
}

/** Calls `tick` with the Clock's time every frame, until interrupted. */
export const animate = (tick: (now: number) => void): Effect.Effect<void> =>
  Effect.asVoid(
    Effect.repeat(
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => tick(now))),
      Schedule.spaced(Duration.millis(FRAME_MS))
    )
  )
