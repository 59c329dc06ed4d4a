// The screen's layout, top to bottom: the conversation (the start-up screen first), the plugins'
// panels, the messages queued while a run streams, the editor (or the dialog that takes its place
// while the person is asked something), and the status line. Rendered by pi-tui on the main screen,
// so the conversation stays in the terminal's scrollback.

import type { Dialog } from "./Dialogs.js"
import { LinesEntry, NoticeEntry, type NoticeLevel, UserEntry } from "./Entries.js"
import { PanelRegion } from "./Panels.js"
import { TabKeepingEditor } from "./PasteTabs.js"
import {
  type Component,
  Container,
  matchesKey,
  type Terminal,
  type TUI,
  TuiMainScreen,
  truncateToWidth,
  visibleWidth
} from "./PiTuiCore.js"
import { StatusLine } from "./StatusLine.js"
import type { Theme } from "./Theme.js"

/** A blank line between the blocks of the conversation. */
class Gap implements Component {
  invalidate(): void {}
  render(): ReadonlyArray<string> {
    return [""]
  }
}

/**
 * pi-tui ends the whole interface when a line it draws is wider than the terminal (it throws from
 * its render timer): a block that miscounts at some width, say a prefix wider than a terminal one
 * column wide, is cut to the width instead.
 */
class FittedScreen extends TuiMainScreen {
  override render(width: number): ReadonlyArray<string> {
    return super.render(width).map((line) => (visibleWidth(line) > width ? truncateToWidth(line, width, "") : line))
  }
}

export interface ScreenOptions {
  /**
   * How long after a wait's dialog (an approval, a question) opens the keys still go to the editor,
   * and after each such key: the person was typing, not answering, and a `y` in a word must not
   * approve a command. 0 (the default) gives every key to the dialog at once.
   */
  readonly dialogGraceMs?: number
  readonly now?: () => number
}

export class Screen {
  readonly tui: TUI
  readonly header = new Container()
  readonly transcript = new Container()
  readonly panels: PanelRegion
  readonly queued = new Container()
  readonly input = new Container()
  readonly editor: TabKeepingEditor
  readonly status: StatusLine
  private dialog: Dialog | undefined
  /** Until when keys go to the editor rather than to the dialog just opened. */
  private typingUntil = Number.NEGATIVE_INFINITY

  constructor(
    terminal: Terminal,
    readonly theme: Theme,
    private readonly options: ScreenOptions = {}
  ) {
    this.tui = new FittedScreen(terminal)
    this.panels = new PanelRegion(theme)
    this.status = new StatusLine(theme)
    this.status.onChange = () => this.tui.requestRender()
    this.editor = new TabKeepingEditor(this.tui, theme.editor, { paddingX: 0, autocompleteMaxVisible: 8 })
    this.tui.addChild(this.header)
    this.tui.addChild(this.transcript)
    this.tui.addChild(this.panels)
    this.tui.addChild(this.queued)
    this.tui.addChild(this.input)
    this.tui.addChild(this.status)
    this.input.addChild(this.editor)
    this.tui.setFocus(this.editor)
    this.tui.addInputListener((data) => {
      if (this.dialog === undefined || matchesKey(data, "ctrl+c") || this.now() >= this.typingUntil) return undefined
      // Typed ahead: the draft goes on (shown again when the dialog closes); the dialog waits for a pause.
      this.typingUntil = this.now() + (this.options.dialogGraceMs ?? 0)
      this.editor.handleInput(data)
      return { consume: true }
    })
  }

  private now(): number {
    return (this.options.now ?? performance.now.bind(performance))()
  }

  /**
   * The last frame: the conversation stays in the scrollback, the editor and the status line go. A
   * blank line ends it, where the cursor rests: pi-tui's stop writes a space there, which would
   * otherwise erase the first character of the conversation's last line. A block that cannot be
   * drawn (what made the interface crash) leaves the frame before as it was: thrown here, the error
   * would end the process from its crash handler, before the terminal is given back.
   */
  leave(): void {
    this.tui.removeChild(this.input)
    this.tui.removeChild(this.queued)
    this.tui.removeChild(this.status)
    this.tui.addChild(new Gap())
    try {
      this.tui.renderNow()
    } catch {}
  }

  /** Adds a block to the conversation, with a blank line before it. */
  add(component: Component): void {
    if (this.transcript.children.length > 0) this.transcript.addChild(new Gap())
    this.transcript.addChild(component)
    this.tui.requestRender()
  }

  /** Takes a block out of the conversation, with the blank line `add` put before it. */
  remove(component: Component): void {
    const children = this.transcript.children
    const at = children.indexOf(component)
    if (at < 0) return
    const gap =
      children[at - 1] instanceof Gap
        ? children[at - 1]
        : children[at + 1] instanceof Gap
          ? children[at + 1]
          : undefined
    this.transcript.removeChild(component)
    if (gap !== undefined) this.transcript.removeChild(gap)
    this.tui.requestRender()
  }

  notice(text: string, level: NoticeLevel = "info"): NoticeEntry {
    const entry = new NoticeEntry(text, level, this.theme)
    this.add(entry)
    return entry
  }

  /** Changes a notice shown earlier (a side question's answer as it streams). */
  updateNotice(entry: NoticeEntry, text: string, level?: NoticeLevel): void {
    entry.update(text, level)
    this.tui.requestRender()
  }

  setHeader(lines: ReadonlyArray<string>): void {
    this.header.clear()
    if (lines.length > 0) {
      this.header.addChild(new LinesEntry(lines))
      this.header.addChild(new Gap())
    }
    this.tui.requestRender()
  }

  /** Forgets the conversation shown (a new or another session); the scrollback keeps what was. */
  clearTranscript(): void {
    this.transcript.clear()
    this.tui.requestRender()
  }

  queue(text: string): UserEntry {
    const entry = new UserEntry(text, this.theme, true)
    this.queued.addChild(entry)
    this.tui.requestRender()
    return entry
  }

  unqueue(entry: UserEntry): void {
    this.queued.removeChild(entry)
    this.tui.requestRender()
  }

  get dialogOpen(): boolean {
    return this.dialog !== undefined
  }

  /** Unfolds or folds the open dialog's details; false when there is none that can. */
  toggleDialogExpanded(): boolean {
    if (this.dialog?.toggleExpanded === undefined) return false
    this.dialog.toggleExpanded()
    this.tui.requestRender()
    return true
  }

  /** Shows a dialog in the editor's place; `typedAhead`: keys typed as it opens still go to the editor. */
  showDialog(dialog: Dialog, typedAhead = false): void {
    if (typedAhead) this.typingUntil = this.now() + (this.options.dialogGraceMs ?? 0)
    this.dialog = dialog
    this.input.clear()
    this.input.addChild(dialog)
    this.tui.setFocus(dialog)
    this.tui.requestRender()
  }

  closeDialog(dialog?: Dialog): void {
    if (this.dialog === undefined || (dialog !== undefined && dialog !== this.dialog)) return
    this.dialog = undefined
    this.input.clear()
    this.input.addChild(this.editor)
    this.tui.setFocus(this.editor)
    this.tui.requestRender()
  }
}
export type { Terminal } from "./PiTuiCore.js"
