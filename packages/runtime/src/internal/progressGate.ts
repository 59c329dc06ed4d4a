/**
 * Bounds what one tool call streams as `tool_progress` (EV-3): a command printing gigabytes would
 * otherwise flood the terminal, the UI and every JSONL reader with all of it. Progress passes whole
 * up to a burst, then at a steady rate; what comes faster is left out and counted, and a line says
 * how much when the output shows again. When the call ends, the end of what was left out is shown,
 * since that is where a command says how it finished. The tool's result is not affected: it keeps
 * its own head and tail.
 */
export class ProgressGate {
  private allowance: number
  private lastAt: number | undefined
  private hidden = 0
  private hiddenTail = ""

  constructor(
    private readonly burstChars = 1_000_000,
    private readonly charsPerSecond = 250_000,
    private readonly tailChars = 4_000
  ) {
    this.allowance = burstChars
  }

  /** What to stream of `text`, arriving at `now` (milliseconds), or `undefined` to leave it out. */
  offer(text: string, now: number): string | undefined {
    if (this.lastAt !== undefined && now > this.lastAt) {
      this.allowance = Math.min(this.burstChars, this.allowance + ((now - this.lastAt) * this.charsPerSecond) / 1000)
    }
    this.lastAt = now
    if (text.length > this.allowance) {
      this.hidden += text.length
      // Only the tail of a piece can stay: a piece of megabytes is never copied whole.
      const end = text.length > this.tailChars ? text.slice(-this.tailChars) : text
      this.hiddenTail = (this.hiddenTail + end).slice(-this.tailChars)
      return undefined
    }
    this.allowance -= text.length
    if (this.hidden === 0) return text
    const note = this.note(this.hidden)
    this.hidden = 0
    this.hiddenTail = ""
    return note + text
  }

  /** The end of what was left out since the output last showed, when the call has ended. */
  end(): string | undefined {
    if (this.hidden === 0) return undefined
    const tail = this.hiddenTail
    const cut = this.hidden - tail.length
    this.hidden = 0
    this.hiddenTail = ""
    if (cut === 0) return tail
    // Start the tail at a line's start when it holds one.
    const from = tail.indexOf("\n") + 1
    return this.note(cut + from) + tail.slice(from)
  }

  private note(chars: number): string {
    return `\n[… ${chars} characters of output not streamed (too fast to follow) …]\n`
  }
}
