import type { ApprovalKind, KnownRunEvent } from "@alisio/domain/RunEvent"
import { encodeRunEvent } from "@alisio/domain/RunEvent"

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

const isTerminal = (event: KnownRunEvent) =>
  event.type === "run_completed" ||
  event.type === "run_failed" ||
  event.type === "run_cancelled" ||
  event.type === "turns_exceeded"

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

/** One event a line, Schema-encoded: the only thing `--json` writes on stdout (EV-1). */
export const makeJsonWriter = () => {
  const stdout = buffered(process.stdout)
  const decided = policyDecisions()
  return (event: KnownRunEvent): void => {
    const decision = decided(event)
    if (decision !== undefined && "approved" in decision) process.stderr.write(`${decision.approved}\n`)
    stdout.write(`${JSON.stringify(encodeRunEvent(event))}\n`)
    // The process may exit right after the terminal event: nothing may wait in the buffer then.
    if (isTerminal(event)) stdout.flush()
  }
}

/** Writes one event as a JSON line at once (replays, listings). */
export const writeJsonLine = (event: KnownRunEvent): void => {
  process.stdout.write(`${JSON.stringify(encodeRunEvent(event))}\n`)
}

const oneLine = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** Colors only for a terminal, and never with NO_COLOR. */
export const useColor = (stream: NodeJS.WriteStream): boolean =>
  stream.isTTY === true && (process.env.NO_COLOR === undefined || process.env.NO_COLOR === "")

/**
 * The text mode: the answer streams to stdout; tool activity, retries and failures go to stderr,
 * so `alisio run "…" > answer.txt` keeps only the answer.
 */
export const makeTextRenderer = () => {
  const color = useColor(process.stderr)
  const dim = (text: string) => (color ? `\x1b[2m${text}\x1b[22m` : text)
  const red = (text: string) => (color ? `\x1b[31m${text}\x1b[39m` : text)
  let stdoutAtLineStart = true
  let stderrAtLineStart = true
  const stdout = buffered(process.stdout)
  const decided = policyDecisions()
  const out = (text: string) => {
    if (text === "") return
    stdout.write(text)
    stdoutAtLineStart = text.endsWith("\n")
  }
  const err = (line: string) => {
    stdout.flush()
    // Keep a half-written answer line and the tool notes apart on a shared terminal.
    if (!stdoutAtLineStart && process.stdout.isTTY === true) out("\n")
    if (!stderrAtLineStart) process.stderr.write("\n")
    process.stderr.write(`${line}\n`)
    stderrAtLineStart = true
  }
  const finishAnswer = () => {
    if (!stdoutAtLineStart) out("\n")
    stdout.flush()
  }

  return (event: KnownRunEvent): void => {
    switch (event.type) {
      case "text_delta":
        return out(event.data.text)
      case "tool_call_started":
        return err(dim(`▸ ${event.data.name} ${oneLine(event.data.arguments, 160)}`))
      case "tool_progress": {
        if (!stdoutAtLineStart && process.stdout.isTTY === true) out("\n")
        stdout.flush()
        process.stderr.write(dim(event.data.text))
        stderrAtLineStart = event.data.text.endsWith("\n")
        return
      }
      case "tool_call_completed":
        if (event.data.status === "completed") return
        return err(red(`  ${event.data.status}: ${oneLine(event.data.result, 200)}`))
      case "approval_resolved": {
        const decision = decided(event)
        if (decision === undefined) return
        return "approved" in decision ? err(decision.approved) : err(dim(`  (${decision.denied})`))
      }
      case "approval_requested":
        decided(event)
        return
      case "request_retry":
        return err(
          dim(
            `… no response within ${event.data.afterMs} ms; sending the request again (${event.data.attempt}/${event.data.of})`
          )
        )
      case "truncation_recovery":
        return err(
          dim(
            `… the response was cut by the ${event.data.maxOutputTokens}-token output limit; asking again (${event.data.attempt}/${event.data.of})`
          )
        )
      case "response_truncated":
        finishAnswer()
        return err(dim(`(the answer was cut by the ${event.data.maxOutputTokens}-token output limit)`))
      case "run_completed":
        return finishAnswer()
      case "run_failed":
        finishAnswer()
        return err(red(`alisio: ${event.data.error}`))
      case "turns_exceeded":
        finishAnswer()
        return err(red(`alisio: the run reached its limit of ${event.data.maxTurns} turns`))
      case "run_cancelled":
        finishAnswer()
        return err(dim("alisio: cancelled"))
      default:
        return
    }
  }
}
