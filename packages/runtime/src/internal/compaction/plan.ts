// What to compact (CTX-1): the room a request has in the window, when to compact, and where to cut
// the history. The history is cut only between units — a user message, or an assistant message
// with the results of its tool calls — so a call is never separated from its result.

import type { ContextWindow } from "@alisio/domain/Limits"
import type { Message } from "@alisio/domain/Message"

/** A stored message and its position in the session (1-based, increasing). */
export interface HistoryEntry {
  readonly position: number
  readonly message: Message
}

/** The summary requests use in place of the stored messages up to `lastPosition`. */
export interface CompactionSnapshot {
  readonly summary: string
  readonly firstPosition: number
  readonly lastPosition: number
  /** How many stored messages the summary stands for. */
  readonly messagesCompacted: number
}

/** Compact when the estimate of the next request passes this share of the room it has. */
export const THRESHOLD_SHARE = 0.8
/** Keep verbatim the most recent turns within this share of the room; summarise the rest. */
export const KEEP_SHARE = 0.4
/** The summary's output budget: this share of the window, within the bounds below. */
const SUMMARY_SHARE = 0.1
const SUMMARY_MIN_TOKENS = 256
const SUMMARY_MAX_TOKENS = 8_192

/** The sizes one request is measured against, in estimated tokens. */
export interface Budget {
  readonly window: ContextWindow
  /** What the messages, system prompt and tools may take: the window less the output reserve. */
  readonly room: number
  /** Past this estimate, older turns are compacted first. */
  readonly threshold: number
  /** The recent turns kept verbatim when compacting. */
  readonly keep: number
  /** The output budget of a summary request. */
  readonly summaryTokens: number
}

/**
 * The budget of a request with output budget `maxOutputTokens`: the output reserve is that budget,
 * at most half the window (servers such as vLLM refuse a prompt and `max_tokens` that together
 * pass the window). `roomCap` lowers the room after a provider refused a request as too long.
 */
export const budgetOf = (window: ContextWindow, maxOutputTokens: number, roomCap?: number | undefined): Budget => {
  const reserve = Math.min(maxOutputTokens, Math.floor(window.tokens / 2))
  const room = Math.max(1, Math.min(window.tokens - reserve, roomCap ?? Number.POSITIVE_INFINITY))
  const summaryTokens = Math.min(
    maxOutputTokens,
    Math.max(SUMMARY_MIN_TOKENS, Math.min(SUMMARY_MAX_TOKENS, Math.floor(window.tokens * SUMMARY_SHARE)))
  )
  return {
    window,
    room,
    threshold: Math.floor(room * THRESHOLD_SHARE),
    keep: Math.floor(room * KEEP_SHARE),
    summaryTokens
  }
}

/** The index of the first entry after `position` (binary search: positions increase). */
export const indexAfter = (history: ReadonlyArray<HistoryEntry>, position: number): number => {
  let low = 0
  let high = history.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (history[mid]!.position <= position) low = mid + 1
    else high = mid
  }
  return low
}

/** The index of the last user message (the current run's prompt), or -1. */
export const pinnedIndex = (history: ReadonlyArray<HistoryEntry>): number => {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!.message.role === "user") return i
  return -1
}

/** Where units start in `history[from…]`: never on a tool result, which belongs to its call. */
export const unitStarts = (history: ReadonlyArray<HistoryEntry>, from: number): ReadonlyArray<number> => {
  const starts: Array<number> = []
  for (let i = from; i < history.length; i++) {
    if (history[i]!.message.role !== "tool" || starts.length === 0) starts.push(i)
  }
  return starts
}

/**
 * Where to cut: the index of the first entry kept verbatim (entries from `from` to it are
 * summarised). The most recent units within `keep` tokens are kept; when they all fit, all but the
 * last are summarised (the request is over its threshold for the summary or the fixed parts).
 * When the last unit alone passes `keep` — tool results the model has not answered yet, a large
 * file it just read — it is still kept verbatim while it takes at most `lastRoom`: summarised, the
 * model would only read them again. `undefined` when there is nothing to summarise: the current
 * prompt (`pinned`), sent whole anyway, does not count.
 */
export const planCut = (
  history: ReadonlyArray<HistoryEntry>,
  from: number,
  keep: number,
  tokensOf: (entry: HistoryEntry) => number,
  pinned = pinnedIndex(history),
  lastRoom = 0
): number | undefined => {
  const starts = unitStarts(history, from)
  if (starts.length === 0) return undefined
  const worthIt = (cut: number) => cut - from - (pinned >= from && pinned < cut ? 1 : 0) > 0
  const sizes = starts.map((start, u) => {
    const end = u + 1 < starts.length ? starts[u + 1]! : history.length
    let size = 0
    for (let i = start; i < end; i++) size += tokensOf(history[i]!)
    return size
  })
  const plan = (lastKeep: number) => {
    let kept = 0
    let cut = history.length
    for (let u = starts.length - 1; u >= 0; u--) {
      const size = sizes[u]!
      if (kept + size > (u === starts.length - 1 ? lastKeep : keep)) break
      kept += size
      cut = starts[u]!
    }
    if (cut > from && worthIt(cut)) return cut
    const allButLast = starts.length >= 2 ? starts[starts.length - 1]! : undefined
    return allButLast !== undefined && worthIt(allButLast) ? allButLast : undefined
  }
  // Kept whole only when something older is left to summarise; otherwise it is summarised too.
  return (lastRoom > keep ? plan(lastRoom) : undefined) ?? plan(keep)
}
