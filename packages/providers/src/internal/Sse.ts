/** One server-sent event: its `event:` name, its joined `data:` lines and any `error:` lines. */
export interface SseEvent {
  readonly event: string | undefined
  readonly data: string
  /** llama.cpp before PR #16109 sent errors in a non-standard `error:` field, which the spec says to ignore. */
  readonly error: string | undefined
}

/**
 * Incremental `text/event-stream` decoder. Bytes arrive split anywhere (inside a line, a CRLF pair or
 * a UTF-8 sequence); lines end in LF, CRLF or CR; `:` lines are comments; `data:` may lack its space.
 * At the end of the body a pending event is dispatched even without its blank line, because some
 * servers send the final `data: [DONE]` without one.
 */
export class SseDecoder {
  private readonly utf8 = new TextDecoder()
  private buffer = ""
  private afterCR = false
  private event: string | undefined = undefined
  private readonly data: Array<string> = []
  private readonly error: Array<string> = []

  push(bytes: Uint8Array, out: Array<SseEvent>): void {
    this.feed(this.utf8.decode(bytes, { stream: true }), out)
  }

  end(out: Array<SseEvent>): void {
    this.feed(this.utf8.decode(), out)
    if (this.buffer.length > 0) {
      const line = this.buffer
      this.buffer = ""
      this.line(line, out)
    }
    this.dispatch(out)
  }

  private feed(text: string, out: Array<SseEvent>): void {
    if (text.length === 0) return
    let start = 0
    if (this.afterCR) {
      this.afterCR = false
      if (text.charCodeAt(0) === 10) start = 1
    }
    let cr = text.indexOf("\r", start)
    let lf = text.indexOf("\n", start)
    while (cr !== -1 || lf !== -1) {
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf)
      const piece = text.slice(start, end)
      const line = this.buffer.length > 0 ? this.buffer + piece : piece
      this.buffer = ""
      this.line(line, out)
      start = end + 1
      if (end === cr) {
        if (start === text.length) this.afterCR = true
        else if (text.charCodeAt(start) === 10) start++
        cr = text.indexOf("\r", start)
      }
      if (lf !== -1 && lf < start) lf = text.indexOf("\n", start)
    }
    if (start < text.length) this.buffer += text.slice(start)
  }

  private line(line: string, out: Array<SseEvent>): void {
    if (line.length === 0) {
      this.dispatch(out)
      return
    }
    if (line.charCodeAt(0) === 58) return // ":" comment, e.g. keep-alive pings
    const colon = line.indexOf(":")
    // The field is compared in place: slicing it out would copy a short string per line.
    const value = colon === -1 ? "" : line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1)
    const length = colon === -1 ? line.length : colon
    if (length === 4 && line.startsWith("data")) this.data.push(value)
    else if (length === 5 && line.startsWith("event")) this.event = value
    else if (length === 5 && line.startsWith("error")) this.error.push(value)
  }

  private dispatch(out: Array<SseEvent>): void {
    if (this.data.length > 0 || this.error.length > 0) {
      out.push({
        event: this.event,
        data: this.data.length === 1 ? this.data[0]! : this.data.join("\n"),
        error: this.error.length > 0 ? this.error.join("\n") : undefined
      })
    }
    this.event = undefined
    this.data.length = 0
    this.error.length = 0
  }
}
