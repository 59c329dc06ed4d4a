// pi-tui's editor turns every tab into four spaces (its private `normalizeText`, on a paste, on
// `setText`), so a pasted Makefile reached the model with its recipes indented by spaces, which
// make refuses. Here a tab pasted, set back into the editor (a message returned to the draft) or
// recalled from history is kept as a mark and three spaces, which show four columns wide as
// before (the mark is drawn as a space), and becomes a tab again in what is submitted (`restoreTabs`).
//
// The mark is a private-use character that nothing in the editor holds: not its text, its
// collapsed pastes, its history or its undo steps. When the person types or pastes that very
// character, the marks already there move to another one first, so what was typed stays itself.
//
// A tab shows four columns wherever it is, not up to the next tab stop: the editor lays its text
// out, moves the cursor and deletes a character at a time by its own private layout, so a tab
// whose width depends on the text before it would have to be padded again after every edit, with
// the padding kept apart from spaces typed after it, inside the editor's text model.
import { PasteTracker } from "./PastedText.js"
import { Editor, truncateToWidth } from "./PiTuiCore.js"

const PRIVATE_USE_FIRST = 0xe000
const PRIVATE_USE_LAST = 0xf8ff
// biome-ignore lint/suspicious/noControlCharactersInRegex: a key's escape sequence
const CTRL_I = /\x1b\[(?:105|73);5u/g
/**
 * pi-tui lays the editor out one column narrower than it is drawn, and never ends wrapping a
 * two-column character into a single column (its stack overflows): narrower than this, the editor
 * is laid out at this width and its rows cut back to the terminal's.
 */
const NARROWEST_LAYOUT = 3

/** What of the editor's private state holds text, as pi-tui 0.x keeps it. */
interface EditorText {
  state: { lines: Array<string> }
  pastes: Map<number, string>
  history: Array<string>
  historyDraft: { lines: Array<string> } | null
  undoStack: { stack: Array<{ state: { lines: Array<string> }; pastes: Map<number, string> }> }
}

export class TabKeepingEditor extends Editor {
  private readonly paste = new PasteTracker()
  private mark = String.fromCharCode(PRIVATE_USE_FIRST)

  /** Text with its tabs as the editor keeps them. */
  keepTabs(text: string): string {
    return text.replaceAll("\t", `${this.mark}   `)
  }

  /** The editor's text with its tabs back (a kept tab the person shortened is still one). */
  restoreTabs(text: string): string {
    return text.replace(new RegExp(`${this.mark} {0,3}`, "g"), "\t")
  }

  /** The tabs inside a bracketed paste are kept (a tab typed outside one completes). */
  override handleInput(data: string): void {
    if (data.includes(this.mark)) this.moveMark(data)
    super.handleInput(
      // A terminal that encodes control bytes of a paste as CSI-u sends a tab as Ctrl+I.
      this.paste.touches(data) ? this.paste.map(data, (pasted) => this.keepTabs(pasted.replace(CTRL_I, "\t"))) : data
    )
  }

  /** The mark is drawn as a space: both are one column wide, so the editor's layout holds. */
  override render(width: number): Array<string> {
    const laidOut = Math.max(width, NARROWEST_LAYOUT)
    return super.render(laidOut).map((row) => {
      const line = row.includes(this.mark) ? row.replaceAll(this.mark, " ") : row
      return laidOut === width ? line : truncateToWidth(line, Math.max(0, width), "")
    })
  }

  override setText(text: string): void {
    super.setText(this.keepTabs(text))
  }

  override addToHistory(text: string): void {
    super.addToHistory(this.keepTabs(text))
  }

  /** Moves the marks of kept tabs to a character found neither in the editor nor in `incoming`. */
  private moveMark(incoming: string): void {
    const editor = this as unknown as EditorText
    const texts = (): Array<string> => [
      incoming,
      ...editor.state.lines,
      ...editor.pastes.values(),
      ...editor.history,
      ...(editor.historyDraft?.lines ?? []),
      ...editor.undoStack.stack.flatMap((step) => [...step.state.lines, ...step.pastes.values()])
    ]
    const held = texts().join("\n")
    let code = PRIVATE_USE_FIRST
    while (code < PRIVATE_USE_LAST && held.includes(String.fromCharCode(code))) code++
    const next = String.fromCharCode(code)
    const move = (text: string) => text.replaceAll(this.mark, next)
    const movePastes = (pastes: Map<number, string>) => {
      for (const [id, text] of pastes) pastes.set(id, move(text))
    }
    editor.state.lines = editor.state.lines.map(move)
    movePastes(editor.pastes)
    editor.history = editor.history.map(move)
    if (editor.historyDraft !== null) editor.historyDraft.lines = editor.historyDraft.lines.map(move)
    for (const step of editor.undoStack.stack) {
      step.state.lines = step.state.lines.map(move)
      movePastes(step.pastes)
    }
    this.mark = next
  }
}
