// Text from the model, tools and plugins reaches the screen only through here: escape sequences
// and control characters are removed (the runtime's `TerminalText` says why), tabs become spaces,
// carriage returns keep only what they left, and a lone half of a surrogate pair becomes U+FFFD
// (the terminal draws it one column wide where the layout counted none, and every frame after
// lands a row lower). Streamed text is kept as it came and cleaned in pieces cut where no sequence,
// pair or `\r\n` can span (`StreamCut.ts`): cut between two deltas, they would leave their halves
// on the screen.
import { CONTROLS, ESCAPE_SEQUENCES } from "@alisio/runtime/TerminalText"

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * A piece of text cleaned as `sanitize` does; `reset` when a carriage return in its first line
 * takes back what the line held before the piece.
 */
export const sanitizeContinuing = (text: string): { readonly text: string; readonly reset: boolean } => {
  let reset = false
  const cleaned = text
    .replace(ESCAPE_SEQUENCES, "")
    .replace(/\t/g, "    ")
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line, index) => {
      const cr = line.lastIndexOf("\r", line.length - 2)
      if (index === 0 && cr !== -1 && cr < line.length - 1) reset = true
      return (cr === -1 ? line : line.slice(cr + 1)).replace(CONTROLS, "").replace(/\r/g, "")
    })
    .join("\n")
    .replace(LONE_SURROGATE, "\ufffd")
  return { text: cleaned, reset }
}

/** Text safe to lay out: no escape sequences, no control characters but newlines. */
export const sanitize = (text: string): string => sanitizeContinuing(text).text

/**
 * Text for a single row (a tool's name, a title): sanitized, its line breaks made spaces; given the
 * row's columns, cut first to what they could show (pi-tui measures a long line that is not all
 * ASCII in time that grows far faster than its length: minutes for 80 KB).
 */
export const sanitizeLine = (text: string, columns = Number.POSITIVE_INFINITY): string =>
  sanitize(text.length > columns * 4 ? text.slice(0, columns * 4) : text).replace(/\n/g, " ")
