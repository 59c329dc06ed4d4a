// A terminal in bracketed-paste mode wraps what is pasted in ESC[200~ … ESC[201~. Editors that
// treat pasted text otherwise than typed keys (tabs kept, line breaks as spaces) follow those
// markers across input chunks: a paste can end in a later chunk than it began.

const PASTE_START = "\x1b[200~"
const PASTE_END = "\x1b[201~"

/** Where a stream of input stands: inside a paste or not, carried from one chunk to the next. */
export class PasteTracker {
  private pasting = false

  /** Whether `data` needs `map`: it is inside a paste or starts one. */
  touches(data: string): boolean {
    return this.pasting || data.includes(PASTE_START)
  }

  /** `data` with `change` applied to its pasted text only; the markers and typed keys are as they came. */
  map(data: string, change: (pasted: string) => string): string {
    let out = ""
    let rest = data
    while (rest !== "") {
      const marker = this.pasting ? PASTE_END : PASTE_START
      const at = rest.indexOf(marker)
      const before = at === -1 ? rest : rest.slice(0, at)
      out += this.pasting ? change(before) : before
      if (at === -1) break
      out += marker
      rest = rest.slice(at + marker.length)
      this.pasting = !this.pasting
    }
    return out
  }
}
