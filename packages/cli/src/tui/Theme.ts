// The UI's styles: one place decides colour (none under NO_COLOR, on a dumb terminal, or when the
// output is not a terminal), and every component takes its styles from here.
import type { EditorTheme, MarkdownTheme, SelectListTheme } from "@earendil-works/pi-tui"
import { highlight } from "./Highlight.js"

type Style = (text: string) => string

const identity: Style = (text) => text

export interface Theme {
  readonly color: boolean
  readonly bold: Style
  readonly dim: Style
  readonly italic: Style
  readonly accent: Style
  readonly user: Style
  readonly ok: Style
  readonly warn: Style
  readonly error: Style
  readonly code: Style
  readonly markdown: MarkdownTheme
  readonly editor: EditorTheme
  readonly select: SelectListTheme
  /** A glyph for the kind of terminal: Unicode where the locale allows it. */
  readonly glyphs: Glyphs
}

export interface Glyphs {
  readonly bullet: string
  readonly ok: string
  readonly failed: string
  readonly denied: string
  readonly running: string
  readonly collapsed: string
  readonly expanded: string
  readonly spinner: ReadonlyArray<string>
  readonly pause: string
  readonly retry: string
  readonly prompt: string
  readonly rule: string
}

const unicodeGlyphs: Glyphs = {
  bullet: "●",
  ok: "✓",
  failed: "✗",
  denied: "⊘",
  running: "◌",
  collapsed: "▸",
  expanded: "▾",
  spinner: ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"],
  pause: "⏸",
  retry: "↻",
  prompt: "›",
  rule: "─"
}

const asciiGlyphs: Glyphs = {
  bullet: "*",
  ok: "+",
  failed: "x",
  denied: "-",
  running: "o",
  collapsed: ">",
  expanded: "v",
  spinner: ["|", "/", "-", "\\"],
  pause: "||",
  retry: "~",
  prompt: ">",
  rule: "-"
}

/** Whether the terminal gets colour: a terminal, no `NO_COLOR` (https://no-color.org), not dumb. */
export const colorFor = (isTTY: boolean, env: NodeJS.ProcessEnv = process.env): boolean =>
  isTTY && (env.NO_COLOR === undefined || env.NO_COLOR === "") && env.TERM !== "dumb"

/** Whether the locale can show Unicode glyphs (a UTF-8 locale, or none set, as on most terminals today). */
export const unicodeFor = (env: NodeJS.ProcessEnv = process.env): boolean => {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || ""
  return env.TERM !== "linux" && (locale === "" || /utf-?8/i.test(locale))
}

export const makeTheme = (options: { readonly color: boolean; readonly unicode?: boolean }): Theme => {
  const sgr =
    (open: string, close: string): Style =>
    (text) =>
      options.color && text !== "" ? `\x1b[${open}m${text}\x1b[${close}m` : text
  const bold = sgr("1", "22")
  const dim = sgr("2", "22")
  const italic = sgr("3", "23")
  const accent = sgr("36", "39")
  const code = sgr("33", "39")
  const underline = sgr("4", "24")
  const glyphs = options.unicode === false ? asciiGlyphs : unicodeGlyphs
  const select: SelectListTheme = {
    selectedPrefix: (text) => accent(text),
    selectedText: (text) => (options.color ? bold(accent(text)) : text),
    description: dim,
    scrollInfo: dim,
    noMatch: dim
  }
  const markdown: MarkdownTheme = {
    heading: (text) => bold(accent(text)),
    link: underline,
    linkUrl: dim,
    code,
    codeBlock: identity,
    codeBlockBorder: dim,
    quote: italic,
    quoteBorder: dim,
    hr: dim,
    listBullet: accent,
    bold,
    italic,
    strikethrough: sgr("9", "29"),
    underline,
    ...(options.color ? { highlightCode: (source: string, lang?: string) => highlight(source, lang) } : {})
  }
  return {
    color: options.color,
    bold,
    dim,
    italic,
    accent,
    user: sgr("1;34", "22;39"),
    ok: sgr("32", "39"),
    warn: sgr("33", "39"),
    error: sgr("31", "39"),
    code,
    markdown,
    editor: { borderColor: dim, selectList: select },
    select,
    glyphs
  }
}
