// What a line of streamed Markdown is, read on its own: where the answer may be cut between lines
// (`StreamingMarkdown.ts`) depends on it. A code fence closes only with its own character, at
// least as long (CommonMark); a table is a header row, a delimiter row with as many cells, and the
// rows that start with a pipe.

/** A line that may start or interrupt a block other than a paragraph, or be a table's row. */
export const BLOCK_START = /^(?:[\s#>|<=~$\\`]|[-*+_](?:[\s*_-]|$)|\d{1,9}[.)](?:\s|$)|\[[^\]]*\]:)|\|/
const LIST_ITEM = /^(?:([-*+])|\d{1,9}([.)])) \S/
const FENCE = /^\s*(`{3,}|~{3,})(.*)$/
const TABLE_DELIMITER = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/
/** A row of a table that goes on: a line that starts with a pipe. */
const TABLE_ROW = /^ {0,3}\|/

export type Kind = "prose" | "item" | "other"

/** What a line is, and for a list item its marker ("-", "*", "+", or "." and ")" of a numbered one). */
export const kindOf = (line: string): { readonly kind: Kind; readonly marker: string } => {
  const item = LIST_ITEM.exec(line)
  if (item !== null) return { kind: "item", marker: item[1] ?? item[2] ?? "" }
  return { kind: BLOCK_START.test(line) ? "other" : "prose", marker: "" }
}

/** Whether a line starts with what may be a code fence (so no cut inside it is safe). */
export const mayBeFence = (line: string): boolean => /^\s*(```|~~~)/.test(line)

/** The fence a line opens a code block with, else "". */
export const opensFence = (line: string): string => {
  const fence = FENCE.exec(line)
  if (fence === null) return ""
  const mark = fence[1]!
  return mark.startsWith("`") && fence[2]!.includes("`") ? "" : mark
}

/** Whether a line closes the code block opened with `mark`: the same character, at least as many, nothing after. */
export const closesFence = (line: string, mark: string): boolean => {
  const fence = FENCE.exec(line)
  return fence !== null && fence[1]![0] === mark[0] && fence[1]!.length >= mark.length && fence[2]!.trim() === ""
}

/** How many cells a table's row has (pipes escaped with a backslash do not count). */
const cellCount = (line: string): number => {
  const cells = line.trim().split(/(?<!\\)\|/)
  if (cells[0]!.trim() === "") cells.shift()
  if (cells.length > 0 && cells.at(-1)!.trim() === "") cells.pop()
  return cells.length
}

/** Whether `delimiter` under `header` makes the two a table's head. */
export const isTableHead = (header: string, delimiter: string): boolean =>
  header.includes("|") &&
  !/^\s/.test(header) &&
  TABLE_DELIMITER.test(delimiter) &&
  cellCount(header) === cellCount(delimiter)

/** The markers of a blockquote's line, nested or not ("> ", "> > "…): what the quote's text follows. */
const QUOTE_MARKERS = /^(?:> ?)+/

/**
 * A blockquote read a line at a time, from its first line (after a blank line or a paragraph) to
 * the next blank line: it may be cut before a line where the two halves show as the whole quote
 * would, by the rules the answer is cut by, applied to the quote's text. Every line of it must
 * have the same markers, the same nesting, and hold prose or a list item of one line; after any
 * other line (a lazy one, a nested quote starting, an empty quoted line, a heading…) it is not
 * cut again.
 */
export class QuoteLines {
  private depth = 0
  private open = true
  private previous: Kind | undefined
  private prose = true
  private list = ""

  /** A blank line or a code fence: what comes next may start a quote. */
  reset(): void {
    this.depth = 0
    this.open = true
    this.previous = undefined
    this.prose = true
    this.list = ""
  }

  stop(): void {
    this.open = false
  }

  /** Reads a line after `before` (all the lines since the blank line before being prose: `afterProse`); whether a cut may come before it. */
  read(line: string, before: Kind | undefined, afterProse: boolean): boolean {
    const markers = QUOTE_MARKERS.exec(line)?.[0]
    if (markers === undefined) {
      if (this.depth > 0) this.open = false
      return false
    }
    if (!this.open) return false
    const depth = markers.split(">").length - 1
    if (this.depth === 0) {
      if (before !== undefined && !(afterProse && before === "prose")) this.open = false
      this.depth = depth
    } else if (depth !== this.depth) this.open = false
    const text = line.slice(markers.length)
    const now = kindOf(text)
    if (!this.open || text.trim() === "" || now.kind === "other") {
      this.open = false
      return false
    }
    const cut =
      this.previous !== undefined &&
      ((now.kind === "prose" && this.previous === "prose" && this.prose) ||
        (now.kind === "item" && this.list === now.marker))
    if (now.kind !== "prose") this.prose = false
    if (now.kind === "item") this.list = now.marker
    this.previous = now.kind
    return cut
  }
}

/** A table read a line at a time: its delimiter row under its header starts it; it may be cut between two rows. */
export class TableLines {
  /** A line that may be a table's header, and the head (header and delimiter rows) of the table going on, else "". */
  private header = ""
  private head = ""
  /** Whether the last line read was a row of that table. */
  private row = false

  reset(): void {
    this.header = ""
    this.head = ""
    this.row = false
  }

  /** Reads a line (`first`: the first since a blank line); the table's head when a cut may come before it, else "". */
  read(line: string, first: boolean): string {
    let cut = ""
    if (this.head !== "" && TABLE_ROW.test(line)) {
      if (this.row) cut = this.head
      this.row = true
    } else {
      this.head = this.header !== "" && isTableHead(this.header, line) ? `${this.header}\n${line}` : ""
      this.row = false
    }
    this.header = first && line.includes("|") ? line : ""
    return cut
  }
}
