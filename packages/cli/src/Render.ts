import { textOf } from "@alisio/domain/Message"
import type { ApprovalKind, KnownRunEvent, RunEventDataMap } from "@alisio/domain/RunEvent"
import { encodeRunEvent, isTerminalType } from "@alisio/domain/RunEvent"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import { formatDuration } from "./Durations.js"
import { jsonLine } from "./JsonLine.js"
import { makeProgress, makeStatusLine, type Progress, type StatusLine } from "./Progress.js"
import { isTerminal, paint } from "./Terminal.js"

export { useColor } from "./Terminal.js"

/**
 * Writes to a stream once per turn of the event loop: a streamed answer arrives as thousands of
 * deltas, and a write (a system call) per delta cost more than everything else the CLI does.
 */
const buffered = (stream: NodeJS.WriteStream) => {
  let pending = ""
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending === "") return
    const text = pending
    pending = ""
    stream.write(text)
  }
  return {
    write: (text: string) => {
      pending += text
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    },
    flush
  }
}

/**
 * What the headless policy decided, in the user's words: `--yes` approves access outside the
 * workspace too, so each path it approved is named once; a denial says what was denied and why.
 */
const policyDecisions = () => {
  const pending = new Map<string, { readonly kind: ApprovalKind; readonly path: string | undefined }>()
  const named = new Set<string>()
  return (event: KnownRunEvent): { readonly approved: string } | { readonly denied: string } | undefined => {
    if (event.type === "approval_requested") {
      pending.set(event.data.approvalId, { kind: event.data.kind, path: event.data.path })
      return undefined
    }
    if (event.type !== "approval_resolved" || event.data.by !== "policy") return undefined
    const request = pending.get(event.data.approvalId)
    pending.delete(event.data.approvalId)
    const external = request?.kind === "external_directory"
    if (!event.data.approved) {
      return {
        denied: external
          ? `denied: headless runs deny access outside the workspace${request.path === undefined ? "" : `, here ${request.path}`}; pass --yes to allow it`
          : "denied: headless runs deny tools that need approval; pass --yes to allow them"
      }
    }
    if (!external || request.path === undefined || named.has(request.path)) return undefined
    named.add(request.path)
    return { approved: `alisio: --yes approved access outside the workspace: ${request.path}` }
  }
}

/** What a run's events become on stdout and stderr. */
export interface Renderer {
  readonly event: (event: KnownRunEvent, now: number) => void
  /**
   * An event read back from the store (a replayed or followed run): no delta was stored, so the
   * text mode prints each assistant message's text as the answer the run streamed.
   */
  readonly stored: (event: KnownRunEvent, now: number) => void
  /** Redraws what changes with time (the progress line), at the Clock's `now`. */
  readonly tick: (now: number) => void
  /** Ends the output: the progress line cleared, stdout flushed, then `lastLine` on stderr, if any. */
  readonly close: (lastLine?: string) => void
}

/**
 * `--json`: one event a line, Schema-encoded, the only thing on stdout (EV-1); with `events:
 * false` (`--json --final`) nothing per event, the outcome is printed at the end instead.
 */
export const makeJsonWriter = (options: { readonly events: boolean }): Renderer => {
  const stdout = buffered(process.stdout)
  const decided = policyDecisions()
  const event = (event: KnownRunEvent) => {
    const decision = decided(event)
    if (decision !== undefined && "approved" in decision) process.stderr.write(`${decision.approved}\n`)
    if (!options.events) return
    stdout.write(jsonLine(encodeRunEvent(event)))
    // The process may exit right after the terminal event: nothing may wait in the buffer then.
    if (isTerminalType(event.type)) stdout.flush()
  }
  return {
    event,
    stored: event,
    tick: () => undefined,
    close: (lastLine) => {
      stdout.flush()
      if (lastLine !== undefined) process.stderr.write(`${lastLine}\n`)
    }
  }
}

/** Writes one event as a JSON line at once (replays, listings). */
export const writeJsonLine = (event: KnownRunEvent): void => {
  process.stdout.write(jsonLine(encodeRunEvent(event)))
}

/** Event text as one line for a note: never an escape sequence, whatever the stream is. */
const oneLine = (text: string, max: number): string => {
  const flat = terminalSafe(text).replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** A retry as one line: why, what happens next, and which attempt it is. */
export const retryLine = (data: RunEventDataMap["request_retry"]): string => {
  const status = data.status === undefined ? "" : ` (HTTP ${data.status})`
  const attempt = `(${data.attempt}/${data.of})`
  switch (data.reason) {
    case "first_token_timeout":
      return `↻ no response within ${formatDuration(data.afterMs)}; sending the request again ${attempt}`
    case "rate_limited":
      return `↻ rate limited${status}; retrying in ${formatDuration(data.afterMs)} ${attempt}`
    case "server_error":
      return `↻ server error${status}; retrying in ${formatDuration(data.afterMs)} ${attempt}`
    case "network":
      return `↻ network error; retrying in ${formatDuration(data.afterMs)} ${attempt}`
  }
}

/** How the text mode shows a run. */
export interface TextOptions {
  /** Only the answer on stdout, and errors on stderr. */
  readonly quiet: boolean
  /** The progress line (a spinner with elapsed time) on stderr, a terminal. */
  readonly progress: boolean
  /** A summary line ends the run: it says that the run was cancelled, no separate line does. */
  readonly summary: boolean
}

/**
 * The text mode: the answer streams to stdout; tool activity, retries and failures go to stderr,
 * so `alisio run "…" > answer.txt` keeps only the answer.
 */
export const makeTextRenderer = (options: TextOptions): Renderer => {
  const p = paint(process.stderr)
  const stdoutIsTerminal = isTerminal(process.stdout)
  const stderrIsTerminal = isTerminal(process.stderr)
  let stdoutAtLineStart = true
  let stderrAtLineStart = true
  const stdout = buffered(process.stdout)
  const decided = policyDecisions()
  const status: StatusLine | undefined = options.progress ? makeStatusLine(process.stderr) : undefined
  const progress: Progress | undefined = options.progress
    ? makeProgress({ showAnswering: !stdoutIsTerminal })
    : undefined
  const out = (text: string) => {
    if (text === "") return
    // The answer and the progress line share the terminal: the line goes before the answer comes,
    // and the answer starts on a line of its own after a command's unfinished last line.
    if (stdoutIsTerminal) {
      status?.clear()
      if (!stderrAtLineStart && stderrIsTerminal && stdoutAtLineStart) {
        process.stderr.write("\n")
        stderrAtLineStart = true
      }
    }
    stdout.write(text)
    stdoutAtLineStart = text.endsWith("\n")
  }
  const err = (line: string) => {
    status?.clear()
    stdout.flush()
    // Keep a half-written answer line and the tool notes apart on a shared terminal.
    if (!stdoutAtLineStart && stdoutIsTerminal) out("\n")
    if (!stderrAtLineStart) process.stderr.write("\n")
    process.stderr.write(`${line}\n`)
    stderrAtLineStart = true
  }
  const note = (line: string) => (options.quiet ? undefined : err(line))
  const finishAnswer = () => {
    if (!stdoutAtLineStart) out("\n")
    stdout.flush()
  }

  // The answer is the model's: on a terminal it may not drive the terminal; in a file it stays whole.
  const answer = (text: string) => out(stdoutIsTerminal ? terminalSafe(text) : text)

  const event = (event: KnownRunEvent, now: number): void => {
    progress?.observe(event, now)
    switch (event.type) {
      case "text_delta":
        return answer(event.data.text)
      case "tool_call_started":
        return note(p.dim(`▸ ${oneLine(event.data.name, 80)} ${oneLine(event.data.arguments, 160)}`))
      case "tool_progress": {
        if (options.quiet) return
        status?.clear()
        if (!stdoutAtLineStart && stdoutIsTerminal) out("\n")
        stdout.flush()
        const text = stderrIsTerminal ? terminalSafe(event.data.text, true) : event.data.text
        process.stderr.write(p.dim(text))
        stderrAtLineStart = text.endsWith("\n")
        return
      }
      case "tool_call_completed":
        if (event.data.status === "completed") return
        return note(p.red(`  ${event.data.status}: ${oneLine(event.data.result, 200)}`))
      case "approval_resolved": {
        const decision = decided(event)
        if (decision === undefined) return
        // An approval of access outside the workspace is a warning: even --quiet says it.
        return "approved" in decision ? err(decision.approved) : note(p.dim(`  (${decision.denied})`))
      }
      case "approval_requested":
        decided(event)
        return
      case "request_retry":
        return note(p.dim(retryLine(event.data)))
      case "truncation_recovery":
        return note(
          p.dim(
            `↻ the response was cut by the ${event.data.maxOutputTokens}-token output limit; asking again (${event.data.attempt}/${event.data.of})`
          )
        )
      case "compaction_completed":
        return note(
          p.dim(
            `↻ compacted the history: ${event.data.newlyCompacted} older messages summarised, about ${event.data.tokensBefore} → ${event.data.tokensAfter} tokens`
          )
        )
      case "compaction_failed":
        return note(p.dim(`↻ could not compact the history (${oneLine(event.data.error, 160)})`))
      case "response_truncated":
        finishAnswer()
        return note(p.dim(`(the answer was cut by the ${event.data.maxOutputTokens}-token output limit)`))
      case "turn_completed":
        if (event.data.finishReason !== "content_filter") return
        finishAnswer()
        return note(p.dim("(the provider's content filter stopped the answer)"))
      case "run_completed":
        finishAnswer()
        return event.data.text.trim() === "" ? note(p.dim("(the model gave no final answer)")) : undefined
      case "run_failed":
        finishAnswer()
        return err(p.red(`alisio: ${terminalSafe(event.data.error)}`))
      case "turns_exceeded":
        finishAnswer()
        return err(p.red(`alisio: the run reached its limit of ${event.data.maxTurns} turns`))
      case "run_cancelled":
        finishAnswer()
        return options.summary ? undefined : note(p.dim("alisio: cancelled"))
      default:
        return
    }
  }
  return {
    event,
    stored: (stored, now) => {
      if (stored.type === "message" && stored.data.message.role === "assistant") {
        answer(textOf(stored.data.message.content))
      }
      event(stored, now)
    },
    tick: (now) => {
      if (status === undefined || progress === undefined) return
      // Never over a half-written line of the answer.
      status.show(stdoutIsTerminal && !stdoutAtLineStart ? undefined : progress.line(now))
    },
    close: (lastLine) => {
      status?.clear()
      finishAnswer()
      if (lastLine !== undefined) err(lastLine)
    }
  }
}
