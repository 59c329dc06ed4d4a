// The default mascot and start-up screen (EX-3), and how styled lines reach the terminal.
import type { TerminalCapabilities } from "@alisio/domain/Extensions"
import { displayWidth, fitWidth } from "./terminalText.js"

export type Style = "mascot" | "title" | "dim"

/** A run of text in one style; plugin text is never styled. */
export interface Span {
  readonly text: string
  readonly style?: Style | undefined
}
export type StyledLine = ReadonlyArray<Span>

// A cloud blowing the trade winds ("alisios"); box drawing, or plain ASCII for terminals without UTF-8.
const UNICODE_MASCOT = ["   ╭─╮ ╭──╮", " ╭─╯ ╰─╯  ╰╮  ≈≈", " │  ◕ ‿ ◕  │ ≈≈≈", " ╰─────────╯  ≈≈"] as const
const ASCII_MASCOT = ["   .-. .--.", " .-' '-'  '.  ~~", " |  o _ o  | ~~~", " '---------'  ~~"] as const

export const defaultMascot = (terminal: TerminalCapabilities): ReadonlyArray<string> =>
  terminal.unicode ? UNICODE_MASCOT : ASCII_MASCOT

export interface StartupInfo {
  readonly version?: string | undefined
  readonly hint?: ReadonlyArray<string> | undefined
}

export const DEFAULT_HINT = ["Type a task to begin.", "/help for commands."] as const

const GAP = 3

/**
 * The mascot with the name, version and hint beside it when the terminal is wide enough, below it
 * otherwise, and without it when even that does not fit.
 */
export const defaultScreen = (
  terminal: TerminalCapabilities,
  mascot: { readonly lines: ReadonlyArray<string>; readonly ours: boolean },
  info: StartupInfo
): ReadonlyArray<StyledLine> => {
  const title: StyledLine = [
    { text: "Alisio", style: "title" },
    ...(info.version === undefined || info.version === "" ? [] : [{ text: ` ${info.version}`, style: "dim" as const }])
  ]
  const text: ReadonlyArray<StyledLine> = [title, ...(info.hint ?? DEFAULT_HINT).map((line) => [{ text: line }])]
  const textWidth = Math.max(...text.map(lineWidth))
  const mascotWidth = Math.max(0, ...mascot.lines.map(displayWidth))
  const mascotStyle: Style | undefined = mascot.ours ? "mascot" : undefined
  const mascotLine = (line: string): Span => ({
    text: line + " ".repeat(Math.max(0, mascotWidth - displayWidth(line))),
    style: mascotStyle
  })

  if (mascot.lines.length === 0 || terminal.columns < mascotWidth || terminal.rows < mascot.lines.length + 2) {
    return text
  }
  if (terminal.columns >= mascotWidth + GAP + textWidth) {
    const height = Math.max(mascot.lines.length, text.length)
    const offset = Math.max(0, Math.min(1, height - text.length))
    return Array.from({ length: height }, (_, row): StyledLine => {
      const beside = text[row - offset]
      const left = mascotLine(mascot.lines[row] ?? "")
      return beside === undefined ? [left] : [left, { text: " ".repeat(GAP) }, ...beside]
    })
  }
  return [...mascot.lines.map((line) => [mascotLine(line)]), [], ...text]
}

const lineWidth = (line: StyledLine): number => line.reduce((width, span) => width + displayWidth(span.text), 0)

const SGR: Record<Style, readonly [string, string]> = {
  mascot: ["\u001b[36m", "\u001b[39m"],
  title: ["\u001b[1m", "\u001b[22m"],
  dim: ["\u001b[2m", "\u001b[22m"]
}

/** The line cut to `columns`, trailing spaces dropped, coloured only when the terminal has colour. */
export const paint = (line: StyledLine, columns: number, color: boolean): string => {
  let left = columns
  let out = ""
  const kept: Array<Span> = []
  for (const span of line) {
    if (left <= 0) break
    const text = fitWidth(span.text, left)
    left -= displayWidth(text)
    kept.push({ text, style: span.style })
  }
  while (kept.length > 0 && kept[kept.length - 1]!.text.trimEnd() === "") kept.pop()
  const last = kept.length - 1
  kept.forEach((span, index) => {
    const text = index === last ? span.text.trimEnd() : span.text
    out += color && span.style !== undefined && text !== "" ? SGR[span.style][0] + text + SGR[span.style][1] : text
  })
  return out
}
