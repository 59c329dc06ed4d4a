// The dialogs that take the editor's place while the person is asked something: a tool approval
// (yes / yes for this session / no), a question with its options or an answer of their own, a plan
// to approve or send back, and a list to pick from (the session picker of /resume).

import { type Component, type Focusable, Input, matchesKey, truncateToWidth } from "@earendil-works/pi-tui"
import type { GrantOffer } from "./Grants.js"
import { PasteTracker } from "./PastedText.js"
import { SafeMarkdown } from "./SafeMarkdown.js"
import { sanitize, sanitizeLine } from "./Sanitize.js"
import type { Theme } from "./Theme.js"
import { wrapLine } from "./Wrap.js"

export interface Choice {
  readonly label: string
  /** A key that picks it at once (`y`, `n`, `1`…). */
  readonly key?: string | undefined
  readonly detail?: string | undefined
}

const wrapLines = (text: string, width: number, style: (line: string) => string, indent: string) =>
  text
    .split("\n")
    .flatMap((line) => wrapLine(line, Math.max(1, width - indent.length)))
    .map((line) => truncateToWidth(indent + style(line), width, "…"))

/** A list of choices moved through with ↑/↓ (or picked by key), chosen with Enter; Esc cancels. */
export class ChoiceList implements Component {
  selected = 0
  constructor(
    readonly choices: ReadonlyArray<Choice>,
    private readonly theme: Theme,
    private readonly onChoose: (index: number) => void,
    private readonly onCancel: () => void,
    private readonly maxVisible = 8
  ) {}

  invalidate(): void {}

  handleInput(data: string): void {
    if (matchesKey(data, "up")) this.selected = (this.selected + this.choices.length - 1) % this.choices.length
    else if (matchesKey(data, "down")) this.selected = (this.selected + 1) % this.choices.length
    else if (matchesKey(data, "enter")) this.onChoose(this.selected)
    else if (matchesKey(data, "escape")) this.onCancel()
    else {
      const index = this.choices.findIndex((choice) => choice.key !== undefined && choice.key === data.toLowerCase())
      if (index !== -1) this.onChoose(index)
    }
  }

  render(width: number): ReadonlyArray<string> {
    const t = this.theme
    const start = Math.max(
      0,
      Math.min(this.selected - Math.floor(this.maxVisible / 2), this.choices.length - this.maxVisible)
    )
    const shown = this.choices.slice(start, start + this.maxVisible)
    const lines = shown.map((choice, offset) => {
      const index = start + offset
      const mine = index === this.selected
      const key = choice.key === undefined ? "" : t.dim(` (${choice.key})`)
      const text = sanitizeLine(choice.label, width)
      const label = `${mine ? t.accent(`${t.glyphs.prompt} `) : "  "}${mine ? t.bold(text) : text}${key}`
      const detail = choice.detail === undefined ? "" : `  ${t.dim(sanitizeLine(choice.detail, width))}`
      return truncateToWidth(label + detail, width, "…")
    })
    if (this.choices.length > this.maxVisible) lines.push(t.dim(`  ${this.selected + 1}/${this.choices.length}`))
    return lines
  }
}

/** What a dialog gives back to the screen; one with more to show than fits unfolds with Ctrl-O. */
export interface Dialog extends Component, Focusable {
  readonly toggleExpanded?: () => void
}

const DETAIL_ROWS = 12
const EXPANDED_DETAIL_ROWS = 400
/** Rows kept from the end when the middle is left out: what a command does last is shown too. */
const TAIL_ROWS = 3

/**
 * Rows that fit `limit`: all of them, or the first and the last with how many are left out between
 * them in the middle, so nothing is hidden without saying so.
 */
export const fitRows = (
  rows: ReadonlyArray<string>,
  limit: number,
  more: (hidden: number) => string
): ReadonlyArray<string> => {
  if (rows.length <= limit) return rows
  const tail = Math.min(TAIL_ROWS, limit - 2)
  const head = limit - 1 - tail
  return [...rows.slice(0, head), more(rows.length - head - tail), ...rows.slice(rows.length - tail)]
}

abstract class Framed implements Dialog {
  focused = false
  constructor(protected readonly theme: Theme) {}
  protected abstract body(width: number): Array<string>
  abstract handleInput(data: string): void
  invalidate(): void {}
  render(width: number): ReadonlyArray<string> {
    const t = this.theme
    const rule = t.dim(t.glyphs.rule.repeat(Math.max(1, width)))
    return [rule, ...this.body(width), rule]
  }
}

/** A tool approval: what will run, and yes / yes for this session / no. */
export class ApprovalDialog extends Framed {
  private readonly list: ChoiceList
  private expanded = false
  private cache: { readonly width: number; readonly rows: ReadonlyArray<string> } | undefined
  constructor(
    theme: Theme,
    private readonly title: string,
    private readonly details: string,
    offer: GrantOffer | undefined,
    answer: (choice: "yes" | "always" | "no") => void
  ) {
    super(theme)
    const choices: Array<Choice & { readonly value: "yes" | "always" | "no" }> = [
      { label: "Yes", key: "y", value: "yes" },
      ...(offer === undefined
        ? []
        : [
            {
              label: `Yes, and allow ${sanitizeLine(offer.label)} for this session`,
              key: "a",
              value: "always" as const
            }
          ]),
      { label: "No", key: "n", value: "no" }
    ]
    this.list = new ChoiceList(
      choices,
      theme,
      (index) => answer(choices[index]!.value),
      () => answer("no")
    )
  }
  handleInput(data: string): void {
    this.list.handleInput(data)
  }
  readonly toggleExpanded = (): void => {
    this.expanded = !this.expanded
  }
  protected body(width: number): Array<string> {
    const t = this.theme
    if (this.cache?.width !== width)
      this.cache = { width, rows: wrapLines(sanitize(this.details).replace(/\s+$/, ""), width, t.code, "  ") }
    const rows = fitRows(this.cache.rows, this.expanded ? EXPANDED_DETAIL_ROWS : DETAIL_ROWS, (hidden) =>
      truncateToWidth(
        t.warn(
          `  … ${hidden} more line${hidden === 1 ? "" : "s"}${this.expanded ? " not shown" : " (Ctrl-O shows them)"}`
        ),
        width,
        "…"
      )
    )
    return [
      truncateToWidth(t.bold(t.warn(sanitizeLine(this.title, width))), width, "…"),
      ...rows,
      ...this.list.render(width)
    ]
  }
}

/**
 * A one-line answer. pi-tui's Input drops the line breaks of a paste, gluing the last word of a
 * line to the first of the next; here they become spaces, so a pasted log or list stays readable.
 */
class AnswerInput extends Input {
  private readonly paste = new PasteTracker()

  override handleInput(data: string): void {
    super.handleInput(
      this.paste.touches(data) ? this.paste.map(data, (pasted) => pasted.replace(/[\r\n]+/g, " ")) : data
    )
  }
}

/** A question from the model: its options, or an answer typed by the person. */
export class QuestionDialog extends Framed {
  private readonly input = new AnswerInput()
  private readonly list: ChoiceList | undefined
  private typing: boolean

  constructor(
    theme: Theme,
    private readonly question: string,
    options: ReadonlyArray<string>,
    answer: (text: string) => void
  ) {
    super(theme)
    const choices: Array<Choice> = [
      ...options.map((option, index) => ({ label: sanitize(option), key: index < 9 ? String(index + 1) : undefined })),
      { label: "Type an answer of my own", key: undefined }
    ]
    this.list =
      options.length === 0
        ? undefined
        : new ChoiceList(
            choices,
            theme,
            (index) => {
              if (index < options.length) answer(options[index]!)
              else this.startTyping()
            },
            () => answer("(The person dismissed the question without answering.)")
          )
    this.typing = this.list === undefined
    this.input.onSubmit = (value) => {
      if (value.trim() !== "") answer(value.trim())
    }
    this.input.onEscape = () => {
      if (this.list !== undefined) this.typing = false
      else answer("(The person dismissed the question without answering.)")
    }
  }

  private startTyping(): void {
    this.typing = true
    this.input.focused = this.focused
  }

  handleInput(data: string): void {
    if (this.typing) this.input.handleInput(data)
    else this.list?.handleInput(data)
  }

  protected body(width: number): Array<string> {
    const t = this.theme
    this.input.focused = this.focused && this.typing
    const lines = [
      truncateToWidth(t.bold(t.accent("Question")), width, "…"),
      ...wrapLines(sanitize(this.question), width, (line) => line, "  ")
    ]
    if (this.list !== undefined && !this.typing) lines.push(...this.list.render(width))
    if (this.typing) {
      lines.push(t.dim("  Your answer (Enter sends, Esc goes back):"))
      lines.push(...this.input.render(width))
    }
    return lines
  }
}

/** A plan to approve, or to send back with what to change. */
export class PlanDialog extends Framed {
  private readonly markdown: SafeMarkdown
  private readonly list: ChoiceList
  private readonly input = new AnswerInput()
  private typing = false

  constructor(theme: Theme, plan: string, answer: (approved: boolean, feedback?: string) => void) {
    super(theme)
    this.markdown = new SafeMarkdown(sanitize(plan), 2, 0, theme.markdown)
    this.list = new ChoiceList(
      [
        { label: "Approve the plan", key: "y" },
        { label: "Ask for changes", key: "n" }
      ],
      theme,
      (index) => {
        if (index === 0) answer(true)
        else this.typing = true
      },
      () => answer(false)
    )
    this.input.onSubmit = (value) => answer(false, value.trim() === "" ? undefined : value.trim())
    this.input.onEscape = () => {
      this.typing = false
    }
  }

  handleInput(data: string): void {
    if (this.typing) this.input.handleInput(data)
    else this.list.handleInput(data)
  }

  protected body(width: number): Array<string> {
    const t = this.theme
    this.input.focused = this.focused && this.typing
    const lines = [truncateToWidth(t.bold(t.accent("Plan review")), width, "…"), ...this.markdown.render(width)]
    if (this.typing) {
      lines.push(t.dim("  What should change? (Enter sends, Esc goes back)"), ...this.input.render(width))
    } else lines.push(...this.list.render(width))
    return lines
  }
}

/** A list to pick from, with a title (the /resume session picker). */
export class PickerDialog extends Framed {
  private readonly list: ChoiceList
  constructor(
    theme: Theme,
    private readonly title: string,
    choices: ReadonlyArray<Choice>,
    pick: (index: number | undefined) => void
  ) {
    super(theme)
    this.list = new ChoiceList(
      choices,
      theme,
      (index) => pick(index),
      () => pick(undefined),
      10
    )
  }
  handleInput(data: string): void {
    this.list.handleInput(data)
  }
  protected body(width: number): Array<string> {
    const t = this.theme
    return [
      truncateToWidth(t.bold(t.accent(this.title)), width, "…"),
      ...this.list.render(width),
      t.dim("  ↑/↓ choose · Enter opens · Esc closes")
    ]
  }
}
