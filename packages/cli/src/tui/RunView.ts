// A run as the screen shows it: each run event updates the conversation and the status line (the
// UI renders events, it decides nothing). The stored messages of a resumed session are drawn the
// same way, so what the screen shows is what the session holds.
import { formatDuration } from "@alisio/domain/Durations"
import { type Message, textOf } from "@alisio/domain/Message"
import type { KnownRunEvent, RunStatus } from "@alisio/domain/RunEvent"
import { toolResults } from "../ToolResults.js"
import { type NoticeLevel, ReasoningEntry, UserEntry } from "./Entries.js"
import { SafeMarkdown } from "./SafeMarkdown.js"
import { sanitize, sanitizeLine } from "./Sanitize.js"
import type { Screen } from "./Screen.js"
import { compactCount } from "./StatusLine.js"
import { StreamingMarkdown } from "./StreamingMarkdown.js"
import { ToolCard } from "./ToolCard.js"

/** The most of a tool's name the status line could show. */
const STATUS_NAME_COLUMNS = 120

const retryReason: Record<string, string> = {
  first_token_timeout: "no answer yet",
  rate_limited: "rate limited",
  server_error: "server error",
  network: "connection lost"
}

/** A stored message and the run that wrote it. */
export interface StoredEntry {
  readonly message: Message
  readonly runId?: string | undefined
}

/** What a shown-again session knows of how each run ended. */
export interface EndedRun {
  readonly id: string
  readonly status: RunStatus
  readonly error?: string | undefined
}

/** The line a run that did not complete ends with when its session is shown again, as it did live. */
export const endingLine = (run: EndedRun): { readonly text: string; readonly level: NoticeLevel } | undefined => {
  switch (run.status) {
    case "cancelled":
      return { text: "Cancelled.", level: "warning" }
    case "failed":
      return { text: `The run failed: ${run.error ?? "no reason was stored."}`, level: "error" }
    case "interrupted":
      return { text: `Interrupted: ${run.error ?? "the process running it ended first."}`, level: "warning" }
    case "turns_exceeded":
      return { text: run.error ?? "Stopped at the turn limit.", level: "warning" }
    default:
      return undefined
  }
}

export class RunView {
  private text: StreamingMarkdown | undefined
  private reasoning: ReasoningEntry | undefined
  private readonly cards = new Map<string, ToolCard>()
  private readonly expandable: Array<ToolCard | ReasoningEntry | UserEntry> = []
  private expanded = false
  /** The latest answer's text, for /copy. */
  lastAnswer = ""

  constructor(
    private readonly screen: Screen,
    /** The Effect clock's time, as the session's ticker last read it. */
    public now: () => number
  ) {}

  /** Ctrl-O: every tool card and reasoning block at once, expanded or collapsed. */
  toggleExpanded(): void {
    this.expanded = !this.expanded
    for (const block of this.expandable) block.setExpanded(this.expanded)
    this.screen.tui.requestRender()
  }

  private endBlocks(): void {
    this.reasoning?.finish()
    this.reasoning = undefined
    this.text?.finish()
    this.text = undefined
  }

  /** A message of the person's, in the transcript: a long one collapsed as tool output is. */
  user(text: string): UserEntry {
    const entry = new UserEntry(text, this.screen.theme)
    entry.setExpanded(this.expanded)
    this.expandable.push(entry)
    this.screen.add(entry)
    return entry
  }

  /** Takes back a message shown as sent that was refused before anything was stored. */
  unsend(entry: UserEntry): void {
    const at = this.expandable.indexOf(entry)
    if (at >= 0) this.expandable.splice(at, 1)
    this.screen.remove(entry)
  }

  private card(id: string, name: string, args: string): ToolCard {
    const card = new ToolCard(id, name, args, this.screen.theme)
    card.setExpanded(this.expanded)
    this.cards.set(id, card)
    this.expandable.push(card)
    this.screen.add(card)
    return card
  }

  private answer(): StreamingMarkdown {
    if (this.text === undefined) {
      this.reasoning?.finish()
      this.reasoning = undefined
      this.text = new StreamingMarkdown(this.screen.theme.markdown)
      this.screen.add(this.text)
    }
    return this.text
  }

  apply(event: KnownRunEvent): void {
    const status = this.screen.status
    const screen = this.screen
    switch (event.type) {
      case "run_started":
        status.update((s) => {
          s.activity = { _tag: "FirstToken", since: this.now() }
          s.retry = undefined
        })
        break
      case "text_delta": {
        this.answer().append(event.data.text)
        if (status.state.activity._tag !== "Streaming" || status.state.retry !== undefined)
          status.update((s) => {
            s.activity = { _tag: "Streaming" }
            s.retry = undefined
          })
        break
      }
      case "reasoning_delta": {
        if (this.reasoning === undefined) {
          this.text?.finish()
          this.text = undefined
          this.reasoning = new ReasoningEntry(screen.theme)
          this.reasoning.setExpanded(this.expanded)
          this.expandable.push(this.reasoning)
          screen.add(this.reasoning)
        }
        this.reasoning.append(event.data.text)
        if (status.state.activity._tag !== "Thinking")
          status.update((s) => {
            s.activity = { _tag: "Thinking", since: this.now() }
            s.retry = undefined
          })
        break
      }
      case "message":
        if (event.data.message.role === "assistant") {
          const text = textOf(event.data.message.content)
          if (text.trim() !== "") this.lastAnswer = text
          this.endBlocks()
        }
        break
      case "tool_call_started":
        this.endBlocks()
        this.card(event.data.toolCallId, event.data.name, event.data.arguments)
        status.update((s) => {
          s.activity = { _tag: "Tool", name: sanitizeLine(event.data.name, STATUS_NAME_COLUMNS), since: this.now() }
        })
        break
      case "tool_progress":
        this.cards.get(event.data.toolCallId)?.progress(event.data.text)
        break
      case "tool_call_completed":
        this.cards
          .get(event.data.toolCallId)
          ?.complete(event.data.status, event.data.result, event.data.durationMs, event.data.resultChars)
        status.update((s) => {
          s.activity = { _tag: "FirstToken", since: this.now() }
        })
        break
      case "approval_requested":
        if (event.data.toolCallId !== undefined) this.cards.get(event.data.toolCallId)?.waiting(true)
        break
      case "approval_resolved":
        for (const card of this.cards.values()) card.waiting(false)
        break
      case "turn_completed":
        status.update((s) => {
          s.turns += 1
          if (event.data.usage !== undefined) {
            s.inputTokens += event.data.usage.inputTokens
            s.outputTokens += event.data.usage.outputTokens
            s.contextTokens = event.data.usage.inputTokens + event.data.usage.outputTokens
          }
          s.activity = { _tag: "FirstToken", since: this.now() }
        })
        if (event.data.finishReason === "content_filter") {
          screen.notice("The provider's content filter stopped the answer.", "warning")
        }
        break
      case "request_retry": {
        const what =
          `${retryReason[event.data.reason] ?? event.data.reason}` +
          (event.data.status === undefined ? "" : ` (HTTP ${event.data.status})`)
        const when =
          event.data.reason === "first_token_timeout"
            ? "sent again"
            : `retrying in ${formatDuration(event.data.afterMs)}`
        const line = `${what}; ${when} (${event.data.attempt}/${event.data.of})`
        screen.notice(line, "retry")
        status.update((s) => {
          s.retry = line
          s.activity = { _tag: "FirstToken", since: this.now() }
        })
        break
      }
      case "truncation_recovery":
        screen.notice(
          `The answer was cut by the output budget (${event.data.maxOutputTokens} tokens); asking again (${event.data.attempt}/${event.data.of})`,
          "warning"
        )
        break
      case "response_truncated":
        screen.notice(
          `The answer was cut at ${event.data.maxOutputTokens} output tokens (${event.data.source}).`,
          "warning"
        )
        break
      case "compaction_started":
        this.endBlocks()
        status.update((s) => {
          s.activity = { _tag: "Compacting", since: this.now() }
          s.contextWindow = event.data.contextWindow
        })
        break
      case "compaction_completed":
        screen.notice(
          `${screen.theme.glyphs.retry} compacted the history: ${event.data.newlyCompacted} older messages summarised, about ${compactCount(event.data.tokensBefore)} → ${compactCount(event.data.tokensAfter)} tokens`
        )
        status.update((s) => {
          s.contextTokens = event.data.tokensAfter
          s.activity = { _tag: "FirstToken", since: this.now() }
        })
        break
      case "compaction_failed":
        screen.notice(
          `Could not compact the history (${event.data.error})${event.data.continued ? "; going on with it as it is" : ""}.`,
          "warning"
        )
        status.update((s) => {
          s.activity = { _tag: "FirstToken", since: this.now() }
        })
        break
      case "child_session_started":
        screen.notice(
          `${screen.theme.glyphs.bullet} child session ${event.data.childSessionId.slice(0, 8)} started${event.data.title === undefined ? "" : `: ${event.data.title}`}`
        )
        break
      case "child_session_ended":
        screen.notice(
          `${screen.theme.glyphs.bullet} child session ${event.data.childSessionId.slice(0, 8)} ${event.data.status}`
        )
        break
      case "plugin_failed":
        screen.notice(`plugin ${event.data.pluginId} failed (${event.data.stage}): ${event.data.message}`, "warning")
        break
      case "mcp_server_failed":
        screen.notice(
          `MCP server ${event.data.server} ${event.data.stage === "start" ? "did not start" : "went away"}: ${event.data.message}` +
            (event.data.log === undefined ? "" : ` (log: ${event.data.log})`),
          "warning"
        )
        break
      case "run_completed":
        this.endBlocks()
        if (event.data.text.trim() !== "") this.lastAnswer = event.data.text
        else screen.notice("The model gave no final answer.")
        this.idle()
        break
      case "run_failed":
        this.endBlocks()
        screen.notice(`The run failed: ${event.data.error}`, "error")
        this.idle()
        break
      case "run_cancelled":
        this.endBlocks()
        for (const card of this.cards.values())
          if (card.status === "running" || card.status === "waiting") card.complete("cancelled", "", 0)
        screen.notice("Cancelled.", "warning")
        this.idle()
        break
      case "turns_exceeded":
        this.endBlocks()
        screen.notice(`Stopped after ${event.data.turns} turns (the limit is ${event.data.maxTurns}).`, "warning")
        this.idle()
        break
      default:
        break
    }
    screen.tui.requestRender()
  }

  private idle(): void {
    this.screen.status.update((s) => {
      s.activity = { _tag: "Idle" }
      s.retry = undefined
    })
  }

  /** Draws stored messages (a resumed session), tool calls paired with their results. */
  /**
   * Shows a stored conversation again: its messages, and after the last message of each run that
   * did not complete, the line that run ended with (`endingLine`).
   */
  replay(stored: ReadonlyArray<StoredEntry>, runs: ReadonlyArray<EndedRun> = []): void {
    const screen = this.screen
    const messages = stored.map((entry) => entry.message)
    const endings = new Map(runs.map((run) => [run.id, endingLine(run)] as const))
    const resultOf = toolResults(messages)
    for (const [index, message] of messages.entries()) {
      if (message.role === "user") {
        const text = textOf(message.content)
        if (text !== "") this.user(text)
      } else if (message.role === "assistant") {
        for (const part of message.content) {
          if (part._tag === "reasoning" && part.text.trim() !== "") {
            const entry = new ReasoningEntry(screen.theme)
            entry.append(part.text)
            entry.finish()
            this.expandable.push(entry)
            screen.add(entry)
          } else if (part._tag === "text" && part.text.trim() !== "") {
            this.lastAnswer = part.text
            screen.add(new SafeMarkdown(sanitize(part.text), 0, 0, screen.theme.markdown))
          } else if (part._tag === "tool_call") {
            const card = this.card(part.id, part.name, part.arguments)
            const result = resultOf(index, part.id)
            if (result === undefined) card.complete("cancelled", "", 0)
            else {
              const text = textOf(result.content)
              const denied = result.isError && /was denied/.test(text)
              card.complete(denied ? "denied" : result.isError ? "error" : "completed", text, 0)
              card.durationMs = undefined
            }
          }
        }
      }
      const runId = stored[index]!.runId
      const ending = runId === undefined ? undefined : endings.get(runId)
      if (ending !== undefined && stored[index + 1]?.runId !== runId) screen.notice(ending.text, ending.level)
    }
    screen.tui.requestRender()
  }
}
