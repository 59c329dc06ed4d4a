// Lines cut to the screen's width. pi-tui's `wrapTextWithAnsi` takes far longer than a line's
// length on a line of thousands of characters (a pasted log, a minified file, a model's run-on
// output): seconds for 100 KB, minutes once the line holds a wide character, with the screen frozen
// meanwhile. Lines of ordinary length keep its layout; longer ones, plain text (the UI styles the
// rows after wrapping), are cut here in one pass: at the last space that fits, or inside a word
// longer than the row.
import { visibleWidth, wrapTextWithAnsi } from "./PiTuiCore.js"

/** Lines up to this many UTF-16 units go to pi-tui. */
export const LONG_LINE = 512

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" })

/**
 * The graphemes of a text, segmented a window at a time: Node's segmenter slows down more than
 * linearly over one long string. A window's last grapheme may be cut short, so it starts the next.
 */
const printableAscii = /^[\x20-\x7e]*$/

function* graphemes(text: string): Generator<string> {
  const WINDOW = 256
  let start = 0
  while (start < text.length) {
    const end = Math.min(text.length, start + WINDOW)
    const window = text.slice(start, end)
    if (printableAscii.test(window)) {
      // One character is one grapheme here: no segmenter needed.
      yield* window
      start = end
      continue
    }
    const parts = Array.from(segmenter.segment(window), (part) => part.segment)
    const whole = end === text.length || parts.length === 1 ? parts.length : parts.length - 1
    for (let index = 0; index < whole; index++) {
      yield parts[index]!
      start += parts[index]!.length
    }
  }
}

const widthOf = (grapheme: string): number => {
  const code = grapheme.charCodeAt(0)
  return grapheme.length === 1 && code >= 0x20 && code < 0x7f ? 1 : visibleWidth(grapheme)
}

/** The rows of one line (no newline in it) at `width` columns; at most `maxRows` of them. */
export const wrapLine = (line: string, width: number, maxRows = Number.POSITIVE_INFINITY): Array<string> => {
  if (line.length <= LONG_LINE) return wrapTextWithAnsi(line, width).slice(0, maxRows)
  const { rows, row } = wrapLong(line, width, false, maxRows)
  if (row !== "" || rows.length === 0) rows.push(row)
  return rows.slice(0, maxRows)
}

/**
 * The rows of a long line in one pass: those that are finished, and the row still open at its end.
 * Wrapping the open row followed by more text (`continuing`: not the line's first row) gives the
 * rows the whole would, so a line that grows is wrapped a piece at a time.
 */
export const wrapLong = (
  line: string,
  width: number,
  continuing = false,
  maxRows = Number.POSITIVE_INFINITY
): { readonly rows: Array<string>; readonly row: string } => {
  const room = Math.max(1, width)
  const rows: Array<string> = []
  let row = ""
  let rowWidth = 0
  // Where the row may break (just after its last space), and the width up to there.
  let breakAt = -1
  let widthAtBreak = 0
  const mayBreak = () => {
    breakAt = row.length
    widthAtBreak = rowWidth
  }
  const push = (text: string) => {
    rows.push(text)
    breakAt = -1
  }
  for (const segment of graphemes(line)) {
    if (rows.length >= maxRows) return { rows: rows.slice(0, maxRows), row: "" }
    if (segment === " ") {
      if (rowWidth + 1 > room) {
        push(row.trimEnd())
        row = ""
        rowWidth = 0
      } else if (rowWidth > 0 || (rows.length === 0 && !continuing)) {
        row += " "
        rowWidth += 1
        mayBreak()
      }
      continue
    }
    const cells = widthOf(segment)
    // A wide (CJK) character may break on either side, as in pi-tui.
    const wide = cells === 2
    if (wide && rowWidth > 0) mayBreak()
    if (rowWidth + cells > room && rowWidth > 0) {
      if (breakAt > 0 && breakAt < row.length) {
        const rest = row.slice(breakAt)
        push(row.slice(0, breakAt).trimEnd())
        row = rest
        rowWidth -= widthAtBreak
      }
      if (rowWidth + cells > room) {
        push(row.trimEnd())
        row = ""
        rowWidth = 0
      }
    }
    row += segment
    rowWidth += cells
    if (wide) mayBreak()
  }
  return { rows, row }
}

/** Markdown lines up to this many units go to pi-tui whole (a long paragraph of prose is one line). */
const LONG_MARKDOWN_LINE = 2048

/** Whether a line of `text` is longer than LONG_MARKDOWN_LINE, in one pass (a regular expression for it backtracks a line at every start). */
const hasLongLine = (text: string): boolean => {
  let start = 0
  while (start < text.length) {
    const end = text.indexOf("\n", start)
    if ((end === -1 ? text.length : end) - start > LONG_MARKDOWN_LINE) return true
    if (end === -1) return false
    start = end + 1
  }
  return false
}

/**
 * Markdown with its long lines cut into rows of the width it is drawn at, before pi-tui lays it out
 * (its `transform` option): a run-on line shows as the rows it would wrap to anyway.
 */
export const markdownOptions = {
  transform: (markdown: string, width: number): string =>
    hasLongLine(markdown)
      ? markdown
          .split("\n")
          .map((line) => (line.length > LONG_MARKDOWN_LINE ? wrapLine(line, width).join("\n") : line))
          .join("\n")
      : markdown
}
