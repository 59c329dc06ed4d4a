// pi-tui's virtual terminal for tests (as in its own test suite): xterm.js, headless, so what the
// UI writes is interpreted as a real terminal would and the screen can be read back.

import type { Terminal } from "@earendil-works/pi-tui"
import xterm from "@xterm/headless"

export class VirtualTerminal implements Terminal {
  private readonly xterm: InstanceType<typeof xterm.Terminal>
  private inputHandler: ((data: string) => void) | undefined
  private resizeHandler: (() => void) | undefined
  /** Every byte written, for checks on escape sequences (colour, cursor). */
  written = ""

  constructor(
    private cols = 80,
    private lines = 24
  ) {
    this.xterm = new xterm.Terminal({ cols, rows: lines, disableStdin: true, allowProposedApi: true, scrollback: 5000 })
  }

  start(onInput: (data: string) => void, onResize: () => void): void {
    this.inputHandler = onInput
    this.resizeHandler = onResize
  }
  stop(): void {
    this.inputHandler = undefined
    this.resizeHandler = undefined
  }
  async drainInput(): Promise<void> {}
  write(data: string): void {
    this.written += data
    this.xterm.write(data)
  }
  get columns(): number {
    return this.cols
  }
  get rows(): number {
    return this.lines
  }
  get kittyProtocolActive(): boolean {
    return false
  }
  moveBy(lines: number): void {
    if (lines > 0) this.write(`\x1b[${lines}B`)
    else if (lines < 0) this.write(`\x1b[${-lines}A`)
  }
  hideCursor(): void {
    this.write("\x1b[?25l")
  }
  showCursor(): void {
    this.write("\x1b[?25h")
  }
  clearLine(): void {
    this.write("\x1b[K")
  }
  clearFromCursor(): void {
    this.write("\x1b[J")
  }
  clearScreen(): void {
    this.write("\x1b[2J\x1b[H")
  }
  setTitle(): void {}
  setProgress(): void {}
  setProgramStatus(): void {}

  /** Types `data` as the keyboard would send it. */
  send(data: string): void {
    this.inputHandler?.(data)
  }

  resize(cols: number, rows: number): void {
    this.cols = cols
    this.lines = rows
    this.xterm.resize(cols, rows)
    this.resizeHandler?.()
  }

  flush(): Promise<void> {
    return new Promise((resolve) => this.xterm.write("", () => resolve()))
  }

  /** The visible screen, lines without trailing blanks. */
  async screen(): Promise<Array<string>> {
    await this.flush()
    const buffer = this.xterm.buffer.active
    const out: Array<string> = []
    for (let i = 0; i < this.xterm.rows; i++)
      out.push(buffer.getLine(buffer.viewportY + i)?.translateToString(true) ?? "")
    return out
  }

  /** The scrollback and the screen. */
  async all(): Promise<Array<string>> {
    await this.flush()
    const buffer = this.xterm.buffer.active
    const out: Array<string> = []
    for (let i = 0; i < buffer.length; i++) out.push(buffer.getLine(i)?.translateToString(true) ?? "")
    return out
  }
}

/** Lets pi-tui's scheduled frame (next tick, then at most every 16 ms) reach the terminal. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 40))
