// Text for the terminal: plugin output stripped of escape sequences and controls, and lines cut
// to a number of columns by display width (a wide character takes two).

import { CONTROLS, ESCAPE_SEQUENCES } from "../TerminalText.js"

/** Plugin text as plain lines: escape sequences and control characters removed; `\n` splits lines. */
export const sanitizeLines = (text: string): ReadonlyArray<string> =>
  text
    .replace(ESCAPE_SEQUENCES, "")
    .split("\n")
    .map((line) => line.replace(/\t/g, " ").replace(CONTROLS, "").replace(/\r/g, ""))

// East Asian Wide and Fullwidth blocks (Unicode 15), coarse but safe.
const WIDE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x231a, 0x231b],
  [0x2329, 0x232a],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd]
]

const isWide = (codePoint: number): boolean => {
  for (const [from, to] of WIDE_RANGES) {
    if (codePoint < from) return false
    if (codePoint <= to) return true
  }
  return false
}

const ZERO_WIDTH = /^[\p{Mark}\u200b-\u200d\u2060\ufeff]/u
const EMOJI = /\p{Emoji_Presentation}|\p{Extended_Pictographic}\ufe0f/u
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/

let segmenter: Intl.Segmenter | undefined
/** Made on first use: setting up ICU's break iterator cost a run's start ~20 ms (Node 20, bench/README.md). */
const graphemes = (text: string) => {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" })
  return segmenter.segment(text)
}

/** Columns one grapheme cluster takes. */
const graphemeWidth = (grapheme: string): number => {
  if (ZERO_WIDTH.test(grapheme)) return 0
  if (EMOJI.test(grapheme)) return 2
  return isWide(grapheme.codePointAt(0) ?? 0) ? 2 : 1
}

/** Columns `text` takes on a terminal (no escape sequences expected). */
export const displayWidth = (text: string): number => {
  if (PRINTABLE_ASCII.test(text)) return text.length
  let width = 0
  for (const { segment } of graphemes(text)) width += graphemeWidth(segment)
  return width
}

/** The longest prefix of `text` that fits in `columns`; a wide character never straddles the edge. */
export const fitWidth = (text: string, columns: number): string => {
  if (columns <= 0) return ""
  if (PRINTABLE_ASCII.test(text)) return text.length <= columns ? text : text.slice(0, columns)
  let width = 0
  let end = 0
  for (const { segment, index } of graphemes(text)) {
    width += graphemeWidth(segment)
    if (width > columns) return text.slice(0, end)
    end = index + segment.length
  }
  return text
}
