// The model's reasoning as rows, kept up to date a delta at a time. Cleaning and wrapping the whole
// text again on every frame costs time in its length, so long reasoning would stream in quadratic
// time: here each piece is cleaned once as it is cut (`CleanStream`), each finished line wrapped
// once per width, and a long line a row at a time (`wrapLong`: its finished rows stay). The rows are
// those of the whole text cleaned, trimmed and wrapped.
import { truncateToWidth } from "./PiTuiCore.js"
import { CleanStream } from "./StreamCut.js"
import { LONG_LINE, wrapLine, wrapLong } from "./Wrap.js"

const INDENT = "  "

export class ReasoningText {
  private readonly stream = new CleanStream()
  /** Finished lines from the first that is not blank; blank ones after the last with text wait in `held`. */
  private readonly lines: Array<string> = []
  private held: Array<string> = []
  /** The settled pieces of the line going on, their length, and whether any is not blank. */
  private line: Array<string> = []
  private lineLength = 0
  private lineHasText = false
  /** Rows at `width`: of the first `wrapped` finished lines; of the line going on, finished and open. */
  private width = -1
  private style: (text: string) => string = (text) => text
  private finished: Array<string> = []
  private wrapped = 0
  private lastLineFrom = 0
  private lineRows: Array<string> = []
  private lineOpen = ""
  private linePieces = 0

  get work(): number {
    return this.stream.work
  }

  append(delta: string): void {
    const { text, reset } = this.stream.append(delta)
    if (reset) this.resetLine()
    if (text === "") return
    const parts = text.split("\n")
    this.extend(parts[0]!)
    for (let index = 1; index < parts.length; index++) {
      this.endLine()
      this.extend(parts[index]!)
    }
  }

  /** The rows at `width`, each styled and indented. */
  rows(width: number, style: (text: string) => string): Array<string> {
    if (width !== this.width || style !== this.style) {
      this.width = width
      this.style = style
      this.finished = []
      this.wrapped = 0
      this.lastLineFrom = 0
      this.lineRows = []
      this.lineOpen = ""
      this.linePieces = 0
    }
    const room = Math.max(1, width - INDENT.length)
    for (; this.wrapped < this.lines.length; this.wrapped++) {
      this.lastLineFrom = this.finished.length
      for (const row of wrapLine(this.lines[this.wrapped]!, room)) this.finished.push(this.styled(row))
    }
    const unsettled = this.stream.unsettled()
    const open = unsettled.reset && this.lines.length === 0 ? unsettled.text.trimStart() : this.first(unsettled.text)
    const hasText = open.trim() !== "" || (!unsettled.reset && this.lineHasText)
    if (!hasText) {
      const last = this.lines.at(-1)
      if (last === undefined) return [this.styled("")]
      if (!/\s$/.test(last)) return this.finished
      // The text ends here so far: its last line shows without its trailing blanks.
      const trimmed = wrapLine(last.trimEnd(), room).map((row) => this.styled(row))
      return [...this.finished.slice(0, this.lastLineFrom), ...trimmed]
    }
    const rows: Array<string> = []
    for (const line of this.held) for (const row of wrapLine(line, room)) rows.push(this.styled(row))
    const whole =
      unsettled.reset || this.lineLength + open.length <= 2 * LONG_LINE
        ? (unsettled.reset ? open : this.line.join("") + open).trimEnd()
        : undefined
    if (whole !== undefined && whole.length <= LONG_LINE) {
      for (const row of wrapLine(whole, room)) rows.push(this.styled(row))
      return [...this.finished, ...rows]
    }
    if (unsettled.reset) {
      for (const row of wrapLine(open.trimEnd(), room)) rows.push(this.styled(row))
      return [...this.finished, ...rows]
    }
    if (this.linePieces < this.line.length) {
      const wrapped = wrapLong(
        this.lineOpen + this.line.slice(this.linePieces).join(""),
        room,
        this.lineRows.length > 0
      )
      for (const row of wrapped.rows) this.lineRows.push(this.styled(row))
      this.lineOpen = wrapped.row
      this.linePieces = this.line.length
    }
    const end = wrapLong((this.lineOpen + open).trimEnd(), room, this.lineRows.length > 0)
    rows.push(...this.lineRows)
    for (const row of end.rows) rows.push(this.styled(row))
    if (end.row !== "" || rows.length === 0) rows.push(this.styled(end.row))
    return [...this.finished, ...rows]
  }

  private styled(row: string): string {
    return truncateToWidth(INDENT + this.style(row), this.width, "")
  }

  /** `text` as it shows at the start of a line: without leading blanks before the first text. */
  private first(text: string): string {
    return this.lines.length === 0 && !this.lineHasText ? text.trimStart() : text
  }

  private extend(piece: string): void {
    const text = this.first(piece)
    if (text === "") return
    this.line.push(text)
    this.lineLength += text.length
    if (text.trim() !== "") this.lineHasText = true
  }

  private endLine(): void {
    const line = this.line.join("")
    if (this.lineHasText) {
      for (const blank of this.held) this.lines.push(blank)
      this.held = []
      this.lines.push(line)
    } else if (this.lines.length > 0) this.held.push(line)
    this.resetLine()
  }

  private resetLine(): void {
    this.line = []
    this.lineLength = 0
    this.lineHasText = false
    this.lineRows = []
    this.lineOpen = ""
    this.linePieces = 0
  }
}
