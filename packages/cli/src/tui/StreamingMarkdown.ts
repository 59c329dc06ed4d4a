// An answer rendered as Markdown while it streams. Re-parsing (or re-cleaning) the whole answer on
// every delta would cost time in its length, so a long answer would stream in quadratic time;
// instead the text is cut into blocks that are cleaned and parsed once and cached, and only the
// unfinished tail is cleaned and parsed again as deltas arrive. The lines already shown never
// change, so the screen is only appended to.
//
// Where it may be cut: after a blank line outside a code fence; and, once the tail grows past
// TAIL_LIMIT (an answer without blank lines), between two lines of plain prose, between two
// one-line items of a list, after a line of code that is not blank, or between two rows of a table
// (`BlockLines.ts` reads the lines, `MarkdownPiece.ts` draws a piece of a code block without the
// fences around it, and one of a table under its hidden header). A table's column widths depend on
// every row, so its pieces, drawn each with its own widths while it streams, are replaced once it
// ends by the table whole, parsed once: what stays on screen is what the whole answer shows. The
// complete lines are read once each, as they arrive, so finding the cuts costs time in the new
// text only; and only the tail is kept as one string that grows.
//
// A line longer than TAIL_LIMIT (minified JSON, a run-on answer) is cut inside too, where
// `StreamCut.ts` finds it safe, so a single line of hundreds of KB streams in linear time as well;
// while it streams its pieces are drawn one under the other (a row ends early at each cut, and
// Markdown that straddles one shows its markers). A cut inside a code block closes it for that
// piece and opens it again for the next, without drawing either fence. Once the block holding the
// line is cut at a safe place (a blank line, between plain lines) or the answer ends (`finish`), its
// pieces are joined back into one, drawn as the whole would be: each character is joined once, so
// the cost stays linear. A carriage return in such a line takes back only what came after the last cut.
//
// The text is kept as it came and cleaned (`sanitize`) a block at a time, never a delta at a time,
// cut only where `StreamCut.ts` says no escape sequence, surrogate pair or `\r\n` spans; a string
// sequence (OSC, DCS…) still open at a cut goes on in the next block, which is cleaned as if it
// began with that sequence's introducer, so no part of its payload ever shows.

import { Container, type Markdown, type MarkdownTheme, Spacer } from "@earendil-works/pi-tui"
import { closesFence, type Kind, kindOf, mayBeFence, opensFence, QuoteLines, TableLines } from "./BlockLines.js"
import { type Head, Piece } from "./MarkdownPiece.js"
import { sanitize } from "./Sanitize.js"
import { DroppedSequence, InLineCuts, OPEN_SEQUENCE_LIMIT, openAt, openString } from "./StreamCut.js"

/** The unfinished tail is cut between plain lines once it holds this many characters. */
export const TAIL_LIMIT = 1024

export class StreamingMarkdown extends Container {
  /** The text of the frozen blocks, as it came; and what came after them, the tail (positions below are in it). */
  private readonly done: Array<string> = []
  private rest = ""
  /** A string sequence open where the frozen blocks end: the tail is cleaned as if it began with it. */
  private carry = ""
  private blocks = 0
  /** Where the next complete line to read starts, and what the reading knows so far. */
  private scanned = 0
  private fenced = false
  /** The fence of the code block going on ("```", "~~~~"…), else "". */
  private mark = ""
  private readonly table = new TableLines()
  private previous: { readonly kind: Kind; readonly marker: string } | undefined
  /** Whether every line since the last blank line is prose; and the blockquote going on. */
  private prose = true
  private readonly quote = new QuoteLines()
  /** The marker of the list going on since the last blank line, else "". */
  private list = ""
  /** The latest place in the tail after a blank line, and the latest between two plain lines. */
  private blankCut = -1
  private plainCut = -1
  /** The opener of the code block `plainCut` falls in (between two of its lines), else "". */
  private cutOpener = ""
  /** The head of the table `plainCut` falls in (between two of its rows), else "". */
  private cutTable = ""
  /** Whether the last line read was a line of code, not blank: the next one may start a piece. */
  private codeLine = false
  private tailShown = false
  /** Whether the next block stands apart from the last one (cut at a blank line), or goes on from it. */
  private gapBeforeTail = true
  private readonly tail: Piece
  private readonly cuts = new InLineCuts()
  /** The line that opened the code block going on, and its fence, while it is; else "". */
  private opener = ""
  /** The opener, cleaned, when the frozen blocks end inside a code block: the tail goes on in it. */
  private reopen = ""
  private reopenHead: Head = "none"
  /** Whether the tail starts inside a line cut before (its first line is not a line's start). */
  private continued = false
  /**
   * The pieces of a block cut inside a line, while it goes on: their text cleaned (without the
   * fences drawn around a piece of a code block), and where in the children the first was placed.
   */
  private chain:
    | {
        readonly texts: Array<string>
        readonly at: number
        readonly gap: boolean
        readonly head: string
        readonly headKind: Head
      }
    | undefined
  /** A sequence left open past the limit, being dropped (its text is the last of `done`). */
  private readonly dropped = new DroppedSequence()
  /** Characters cleaned and handed to Markdown so far: the work streaming costs. */
  work = 0

  constructor(
    private readonly theme: MarkdownTheme,
    private readonly paddingX = 0
  ) {
    super()
    this.tail = new Piece("", paddingX, theme)
  }

  /** Everything received so far. */
  get value(): string {
    return this.done.join("") + this.rest
  }

  append(delta: string): void {
    if (delta === "") return
    if (this.dropped.active) {
      const through = this.dropped.through(delta)
      this.done[this.done.length - 1] += delta.slice(0, through)
      if (through === delta.length) return
      this.rest += delta.slice(through)
    } else this.rest += delta
    this.settle()
  }

  setText(text: string): void {
    const value = this.value
    if (text.startsWith(value)) {
      this.append(text.slice(value.length))
      return
    }
    this.done.length = 0
    this.rest = text
    this.carry = ""
    this.blocks = 0
    this.scanned = 0
    this.fenced = false
    this.mark = ""
    this.table.reset()
    this.previous = undefined
    this.prose = true
    this.quote.reset()
    this.list = ""
    this.blankCut = -1
    this.plainCut = -1
    this.cutOpener = ""
    this.cutTable = ""
    this.codeLine = false
    this.tailShown = false
    this.gapBeforeTail = true
    this.cuts.reset()
    this.opener = ""
    this.reopen = ""
    this.reopenHead = "none"
    this.continued = false
    this.chain = undefined
    this.dropped.stop()
    this.clear()
    this.settle()
  }

  /** The answer is complete: a line still cut into pieces is joined back and drawn whole. */
  finish(): void {
    if (this.chain === undefined) return
    this.scan()
    this.freeze(this.rest.length, false, "", true)
  }

  /** Reads the complete lines that arrived since the last call. */
  private scan(): void {
    let end = this.rest.indexOf("\n", this.scanned)
    while (end !== -1) {
      const start = this.scanned
      const line = this.rest.slice(start, end)
      this.scanned = end + 1
      end = this.rest.indexOf("\n", this.scanned)
      if (start === 0 && this.continued) {
        this.continued = false
        if (!this.fenced) this.previous = { kind: "prose", marker: "" }
        this.codeLine = this.fenced
        this.quote.stop()
        this.table.reset()
        continue
      }
      const mark = this.fenced ? "" : opensFence(line)
      if (mark !== "" || (this.fenced && closesFence(line, this.mark))) {
        this.fenced = mark !== ""
        this.mark = mark
        this.opener = this.fenced ? line : ""
        this.table.reset()
        this.previous = undefined
        this.prose = true
        this.quote.reset()
        this.list = ""
        this.codeLine = false
        continue
      }
      if (this.fenced) {
        if (this.codeLine) {
          this.plainCut = start
          this.cutOpener = this.opener
        }
        this.codeLine = line.trim() !== ""
        continue
      }
      if (line.trim() === "") {
        if (start > 0) this.blankCut = this.scanned
        this.table.reset()
        this.previous = undefined
        this.prose = true
        this.quote.reset()
        this.list = ""
        continue
      }
      const now = kindOf(line)
      const before = this.previous
      const head = this.table.read(line, before === undefined)
      if (head !== "") {
        this.plainCut = start
        this.cutOpener = ""
        this.cutTable = head
      }
      const quoted = this.quote.read(line, before?.kind, this.prose)
      if (now.kind !== "prose") this.prose = false
      // Between two lines of a paragraph of prose alone, or of a blockquote's; before an item of the
      // list going on (the lines between, indented or not, are its last item's).
      if (
        (now.kind === "prose" && before?.kind === "prose" && this.prose) ||
        quoted ||
        (now.kind === "item" && this.list === now.marker)
      ) {
        this.plainCut = start
        this.cutOpener = ""
        this.cutTable = ""
      }
      if (now.kind === "item") this.list = now.marker
      else if (now.kind === "other" && !/^\s/.test(line)) this.list = ""
      this.previous = now
    }
  }

  private settle(): void {
    if (this.rest.length > OPEN_SEQUENCE_LIMIT) this.bound()
    this.scan()
    const blank = this.blankCut > 0
    const cut = blank ? this.blankCut : this.rest.length > TAIL_LIMIT && this.plainCut > 0 ? this.plainCut : -1
    if (cut > 0) this.freeze(cut, blank, blank ? "" : this.cutOpener, false, blank ? "" : this.cutTable)
    else if (this.rest.length - this.scanned > TAIL_LIMIT) this.cutInLine()
    const rest = this.clean(this.rest)
    this.tail.head = this.reopenHead
    this.tail.headText = this.reopen
    this.tail.setText(this.reopen === "" ? rest : `${this.reopen}\n${rest}`)
    this.work += rest.length
    const showTail = rest.trim() !== ""
    if (showTail !== this.tailShown) {
      this.tailShown = showTail
      if (showTail) this.place(this.tail, this.blocks > 0 && this.gapBeforeTail)
      else this.unplace(this.tail)
    }
  }

  private clean(raw: string): string {
    this.work += raw.length
    return this.carry === "" ? sanitize(raw) : sanitize(this.carry + raw)
  }

  /**
   * Drops a string sequence left open in the tail for longer than the limit, unseen, up to the end
   * of its line (or, when that has not come, what follows until it ends: `dropped`); what comes
   * before it is frozen first, so `done` and the tail still hold everything received, in order.
   */
  private bound(): void {
    for (;;) {
      const at = openAt(this.carry + this.rest)
      if (at === -1) return
      const start = Math.max(0, at - this.carry.length)
      if (this.rest.length - start <= OPEN_SEQUENCE_LIMIT) return
      this.scan()
      if (start > 0) this.freeze(start, false, this.fenced && start > this.scanned ? this.opener : "")
      const newline = this.rest.indexOf("\n", OPEN_SEQUENCE_LIMIT)
      const end = newline === -1 ? this.rest.length : newline
      const raw = this.rest.slice(0, end)
      this.done.push(raw)
      this.work += raw.length
      this.rest = this.rest.slice(end)
      this.carry = ""
      this.cuts.reset()
      this.scanned = Math.max(0, this.scanned - end)
      this.continued = true
      this.blankCut = -1
      this.plainCut = -1
      if (newline === -1) {
        this.dropped.start(raw)
        return
      }
    }
  }

  /** Cuts the unfinished line, grown past TAIL_LIMIT, where it is safe to. */
  private cutInLine(): void {
    const from = this.scanned
    if (!this.continued && mayBeFence(this.rest.slice(from, from + 16))) return
    const cut = this.cuts.find(this.rest, from, (next) => !this.fenced && kindOf(next).kind !== "prose")
    if (cut > from) this.freeze(cut, false, this.fenced ? this.opener : "")
  }

  /**
   * Freezes the tail up to `cut`: after a blank line, between two lines, or inside a line; `code`:
   * the opener of the code block the cut falls in, which the next piece goes on; `last`: the end of
   * the answer, where the pieces of a cut line are joined too; `table`: the head of the table the
   * cut falls in (between two rows), which the next piece goes on.
   */
  private freeze(cut: number, blank: boolean, code = "", last = false, table = ""): void {
    const raw = this.rest.slice(0, cut)
    const carried = this.carry + raw
    const whole = this.clean(raw)
    const head = this.reopen
    const headKind = this.reopenHead
    const fence = code === "" ? "" : opensFence(code) || "```"
    const end: Head = code !== "" ? "fence" : table !== "" ? "table" : "none"
    this.carry = openString(carried)
    this.done.push(raw)
    this.rest = this.rest.slice(cut)
    this.cuts.drop(cut)
    const inLine = cut > this.scanned && !last
    this.scanned = Math.max(0, this.scanned - cut)
    this.continued = inLine
    this.reopen = code !== "" ? sanitize(code) : table !== "" ? sanitize(table) : ""
    this.reopenHead = code !== "" ? "fence" : table !== "" ? "table" : "none"
    if (inLine) this.table.reset()
    this.blankCut = -1
    this.plainCut = -1
    if (this.tailShown) this.unplace(this.tail)
    this.tailShown = false
    const chain = this.chain
    const goesOn = inLine || table !== ""
    if (chain !== undefined && !goesOn) {
      // The pieces of a block cut inside a line or between a table's rows are replaced by the block whole.
      this.chain = undefined
      this.children.length = chain.at
      this.add(
        { head: chain.head, headKind: chain.headKind, text: chain.texts.join("") + whole, fence, end },
        chain.gap,
        blank
      )
      return
    }
    if (goesOn) {
      const texts = chain?.texts ?? []
      texts.push(whole)
      this.chain ??= { texts, at: this.children.length, gap: this.gapBeforeTail, head, headKind }
    }
    this.add({ head, headKind, text: whole, fence, end }, this.gapBeforeTail, blank)
  }

  /**
   * Places a block, drawn without what it goes on from (`head`: a code block's fence, a table's
   * head) or what closes it for the piece (`fence`, a table's bottom border: `end`).
   */
  private add(
    piece: {
      readonly head: string
      readonly headKind: Head
      readonly text: string
      readonly fence: string
      readonly end: Head
    },
    gap: boolean,
    blank: boolean
  ): void {
    const { head, fence } = piece
    const cleaned = piece.text.replace(/\n+$/, "")
    if (cleaned.trim() === "") {
      this.gapBeforeTail = gap || blank
      return
    }
    const block = `${head === "" ? "" : `${head}\n`}${cleaned}${fence === "" ? "" : `\n${fence}`}`
    this.work += block.length
    const part = new Piece(block, this.paddingX, this.theme)
    part.head = piece.headKind
    part.headText = head
    part.last = piece.end
    this.place(part, gap)
    this.blocks += 1
    this.gapBeforeTail = blank
  }

  private place(part: Markdown, gap: boolean): void {
    if (this.children.length > 0 && gap) this.addChild(new Spacer(1))
    this.addChild(part)
  }

  private unplace(part: Markdown): void {
    const at = this.children.lastIndexOf(part)
    if (at === -1) return
    const spacer = at > 0 && this.children[at - 1] instanceof Spacer
    this.children.splice(spacer ? at - 1 : at, spacer ? 2 : 1)
  }
}
