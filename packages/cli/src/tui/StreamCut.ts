// Where streamed text may be cut, so that it is cleaned (`sanitize`) a piece at a time and still
// shows as the whole would. A cut after a newline is safe: no escape sequence, surrogate pair or
// `\r\n` spans one, and a string sequence (OSC, DCS…) still open there goes on in the next piece,
// cleaned as if it began with that sequence's introducer (`openString`). A line of hundreds of KB
// without a newline also needs cuts inside it, or each delta would clean it whole again: there a
// cut falls between two letters, digits, punctuation marks or spaces (never inside a grapheme:
// no combining mark, joiner, surrogate or control is next to it) and after the end of the last
// escape sequence, which must be complete.

import { ESCAPE_SEQUENCES } from "@alisio/runtime/TerminalText"
import { sanitizeContinuing } from "./Sanitize.js"

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const STRING_INTRODUCER = /^(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])/
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const STRING_END = /(?:\u0007|\u001b\\|\u009c)$/
// biome-ignore lint/suspicious/noControlCharactersInRegex: what may start an escape sequence
const INTRODUCER = /[\u001b\u0090\u0098\u009b\u009d-\u009f]/g
// biome-ignore lint/suspicious/noControlCharactersInRegex: a sequence that more text could still make longer
const UNFINISHED = /^(?:(?:\u001b\[|\u009b)[0-?]*[ -/]*|\u001b[ -/]*)$/
/** Characters that are a grapheme of their own next to another of them (Hangul jamo excluded: they join). */
const PLAIN = /^(?![\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\ud7b0-\ud7ff])[\p{L}\p{N}\p{P} ]$/u

/** The introducer of a string sequence (OSC, DCS…) still open at the end of `text`, else "". */
export const openString = (text: string): string => {
  let last: RegExpExecArray | undefined
  for (const match of text.matchAll(ESCAPE_SEQUENCES)) last = match
  if (last === undefined || last.index + last[0].length !== text.length) return ""
  const introducer = STRING_INTRODUCER.exec(last[0])
  return introducer !== null && !STRING_END.test(last[0]) ? introducer[0] : ""
}

/** Where the string sequence (OSC, DCS…) open at the end of `text` starts, else -1. */
export const openAt = (text: string): number => {
  let last: RegExpExecArray | undefined
  for (const match of text.matchAll(ESCAPE_SEQUENCES)) last = match
  if (last === undefined || last.index + last[0].length !== text.length) return -1
  return STRING_INTRODUCER.test(last[0]) && !STRING_END.test(last[0]) ? last.index : -1
}

/**
 * The longest a string sequence may stay open while streaming, well above a real one (an OSC 8
 * link, a title, a clipboard payload of reasonable size). Past it the sequence is dropped unseen,
 * with what follows it up to its terminator or the end of its line, and the text goes on from
 * there: an unterminated `ESC ]` cannot hold an ever-growing uncut tail.
 */
export const OPEN_SEQUENCE_LIMIT = 4096

// biome-ignore lint/suspicious/noControlCharactersInRegex: what ends a dropped sequence
const SKIP_END = /\n|\u0007|\u009c|\u001b\\/

/** An over-long sequence being dropped: up to its terminator, or to the newline that ends its line. */
export class DroppedSequence {
  active = false
  private escape = false

  start(dropped: string): void {
    this.active = true
    this.escape = dropped.endsWith("\u001b")
  }

  stop(): void {
    this.active = false
    this.escape = false
  }

  /** How many of the first characters of `delta` are still part of the sequence dropped. */
  through(delta: string): number {
    if (delta === "") return 0
    if (this.escape && delta.startsWith("\\")) {
      this.stop()
      return 1
    }
    const end = SKIP_END.exec(delta)
    if (end === null) {
      this.escape = delta.endsWith("\u001b")
      return delta.length
    }
    this.stop()
    return end[0] === "\n" ? end.index : end.index + end[0].length
  }
}

/** How far back from the end a cut inside a line is looked for. */
const WINDOW = 256

/**
 * The escape sequences of a growing text, read once each: where the last one may start. A cut
 * inside a line must come after it, so it is found in time bounded by the window, not the line.
 */
export class InLineCuts {
  private scanned = 0
  private lastIntroducer = -1

  /** Forgets the first `count` characters (they were cut off the text). */
  drop(count: number): void {
    this.scanned = Math.max(0, this.scanned - count)
    this.lastIntroducer = this.lastIntroducer >= count ? this.lastIntroducer - count : -1
  }

  reset(): void {
    this.scanned = 0
    this.lastIntroducer = -1
  }

  /**
   * The latest place after `from` and near the end of `text` where it may be cut inside a line,
   * else -1: where a sentence starts when there is one (the row that ends early there reads as a
   * break), else before a word.
   */
  find(text: string, from: number, startsBlock: (rest: string) => boolean = () => false): number {
    INTRODUCER.lastIndex = this.scanned
    for (let match = INTRODUCER.exec(text); match !== null; match = INTRODUCER.exec(text))
      this.lastIntroducer = match.index
    this.scanned = text.length
    let earliest = Math.max(from + 1, text.length - WINDOW)
    if (this.lastIntroducer >= 0) {
      ESCAPE_SEQUENCES.lastIndex = this.lastIntroducer
      const sequence = ESCAPE_SEQUENCES.exec(text)
      ESCAPE_SEQUENCES.lastIndex = 0
      if (sequence === null || sequence.index !== this.lastIntroducer) return -1
      const end = sequence.index + sequence[0].length
      if (end === text.length || UNFINISHED.test(text.slice(sequence.index))) return -1
      earliest = Math.max(earliest, end)
    }
    let word = -1
    let fallback = -1
    for (let at = text.length - 2; at >= earliest; at--) {
      const before = text[at - 1]!
      const after = text[at]!
      if (!PLAIN.test(before) || !PLAIN.test(after) || before === "\\") continue
      if (startsBlock(text.slice(at, at + 16))) continue
      if (before === " " && /\p{Lu}/u.test(after) && /[.!?:;]/.test(text[at - 2] ?? "")) return at
      if (word === -1 && before === " " && /\p{L}/u.test(after)) word = at
      if (fallback === -1) fallback = at
    }
    return word !== -1 ? word : fallback
  }
}

/**
 * Streamed text cleaned a piece at a time, each piece once: what is settled is handed on as it is
 * cut (`reset`: a carriage return in it takes back the line it goes on); the rest, at most about a
 * line's start or the window, is cleaned again when asked.
 */
export class CleanStream {
  private pending = ""
  private carry = ""
  private readonly cuts = new InLineCuts()
  private readonly dropped = new DroppedSequence()
  /** Characters cleaned so far: the work streaming costs. */
  work = 0

  /** Characters received and not settled yet. */
  get pendingLength(): number {
    return this.pending.length
  }

  /** The text settled by `delta`, cleaned; "" while nothing could be cut. */
  append(delta: string): { readonly text: string; readonly reset: boolean } {
    this.pending += this.dropped.active ? delta.slice(this.dropped.through(delta)) : delta
    if (this.pending.length > OPEN_SEQUENCE_LIMIT) this.bound()
    const newline = this.pending.lastIndexOf("\n")
    let cut = newline + 1
    if (this.pending.length - cut > WINDOW) {
      const inLine = this.cuts.find(this.pending, cut)
      if (inLine > 0) cut = inLine
    }
    if (cut === 0) return { text: "", reset: false }
    const raw = this.pending.slice(0, cut)
    const cleaned = this.clean(raw)
    this.carry = openString(this.carry + raw)
    this.pending = this.pending.slice(cut)
    this.cuts.drop(cut)
    return cleaned
  }

  /** What is not settled yet, cleaned: the end of the current line. */
  unsettled(): { readonly text: string; readonly reset: boolean } {
    return this.pending === "" ? { text: "", reset: false } : this.clean(this.pending)
  }

  /** Drops the string sequences left open in the pending text for longer than the limit. */
  private bound(): void {
    for (;;) {
      const at = openAt(this.carry + this.pending)
      if (at === -1) return
      const start = Math.max(0, at - this.carry.length)
      if (this.pending.length - start <= OPEN_SEQUENCE_LIMIT) return
      if (at < this.carry.length) this.carry = ""
      const newline = this.pending.indexOf("\n", start + OPEN_SEQUENCE_LIMIT)
      if (newline === -1) {
        this.dropped.start(this.pending)
        this.pending = this.pending.slice(0, start)
        this.cuts.reset()
        return
      }
      this.pending = this.pending.slice(0, start) + this.pending.slice(newline)
      this.cuts.reset()
    }
  }

  private clean(raw: string): { readonly text: string; readonly reset: boolean } {
    this.work += raw.length
    return sanitizeContinuing(this.carry + raw)
  }
}
