// pi-tui's editor turns every tab into four spaces (its private `normalizeText`, on a paste, on
// `setText`), so a pasted Makefile reached the model with its recipes indented by spaces, which
// make refuses. Here a tab pasted, set back into the editor (a message returned to the draft) or
// recalled from history is kept as a figure space and three spaces, which show four columns wide
// as before, and becomes a tab again in what is submitted (`restoreTabs`). A figure space typed or
// pasted as such also comes out as a tab: it is all but unknown in text people send.
import { PasteTracker } from "./PastedText.js"
import { Editor } from "./PiTuiCore.js"

const KEPT_TAB = "\u2007   "
// biome-ignore lint/suspicious/noControlCharactersInRegex: a key's escape sequence
const CTRL_I = /\x1b\[(?:105|73);5u/g

/** Text with its tabs as the editor keeps them. */
export const keepTabs = (text: string): string => text.replaceAll("\t", KEPT_TAB)

/** The editor's text with its tabs back (a kept tab the person shortened is still one). */
export const restoreTabs = (text: string): string => text.replace(/\u2007 {0,3}/g, "\t")

export class TabKeepingEditor extends Editor {
  private readonly paste = new PasteTracker()

  /** The tabs inside a bracketed paste are kept (a tab typed outside one completes). */
  override handleInput(data: string): void {
    super.handleInput(
      // A terminal that encodes control bytes of a paste as CSI-u sends a tab as Ctrl+I.
      this.paste.touches(data) ? this.paste.map(data, (pasted) => keepTabs(pasted.replace(CTRL_I, "\t"))) : data
    )
  }

  override setText(text: string): void {
    super.setText(keepTabs(text))
  }

  override addToHistory(text: string): void {
    super.addToHistory(keepTabs(text))
  }
}
