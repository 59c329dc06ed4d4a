// Markdown with optional YAML front matter, as prompt templates and skills are written for Claude
// Code, Codex and opencode. Broken front matter never makes a file unusable: its problems are
// reported, naming the file and the field, and the body is still the text.

import { terminalSafe } from "../../TerminalText.js"
import { yaml } from "../yaml.js"

/** A problem with a file the catalog or the system context read; the file is still used unless it says so. */
export interface FileDiagnostic {
  readonly file: string
  readonly message: string
}

/** Text about files on one line a terminal shows as it is: a file's name may hold escape sequences or line breaks. */
export const oneSafeLine = (text: string): string => terminalSafe(text).replace(/[\r\n\t]+/g, " ")

/** One line naming the file. */
export const formatDiagnostic = (diagnostic: FileDiagnostic): string =>
  oneSafeLine(`${diagnostic.file}: ${diagnostic.message}`)

export interface FrontMatter {
  readonly fields: Readonly<Record<string, unknown>>
  readonly body: string
  /** What was wrong with the front matter (the fields or the whole block were read as well as possible). */
  readonly problems: ReadonlyArray<string>
}

const opening = /^\uFEFF?---[ \t]*\r?\n/
const closing = /^(?:---|\.\.\.)[ \t]*$/m

/** `key: value` lines, for front matter YAML refuses (an unquoted `: ` in a description is common). */
const lineByLine = (block: string): Record<string, unknown> => {
  const fields: Record<string, unknown> = {}
  for (const line of block.split(/\r?\n/)) {
    const match = /^([A-Za-z][\w-]*):[ \t]*(.*)$/.exec(line)
    if (match !== null) fields[match[1]!] = match[2]!.replace(/^(["'])(.*)\1$/, "$2").trim()
  }
  return fields
}

/**
 * The YAML of a front matter block, or why it cannot be read. Building the value can throw (too many
 * aliases: the "billion laughs"; nesting too deep for the stack): that is a problem of the file too.
 */
const readYaml = (block: string): { readonly value?: unknown; readonly error?: string } => {
  try {
    const document = yaml().parseDocument(block, { prettyErrors: false })
    if (document.errors.length > 0) return { error: document.errors[0]!.message.split("\n")[0]! }
    return { value: document.toJS() }
  } catch (error) {
    return { error: String((error as Error)?.message ?? error).split("\n")[0]! }
  }
}

/** Splits a file into its front matter fields and its body. */
export const parseFrontMatter = (text: string): FrontMatter => {
  const open = opening.exec(text)
  if (open === null) return { fields: {}, body: text.replace(/^\uFEFF/, ""), problems: [] }
  const rest = text.slice(open[0].length)
  const close = closing.exec(rest)
  if (close === null) {
    return {
      fields: {},
      body: text,
      problems: ["its front matter has no closing `---` line, so the whole file is the text"]
    }
  }
  const block = rest.slice(0, close.index)
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "")
  const parsed = readYaml(block)
  if (parsed.error !== undefined) {
    return {
      fields: lineByLine(block),
      body,
      problems: [`its front matter is not valid YAML (${parsed.error}); it was read line by line as \`key: value\``]
    }
  }
  const value = parsed.value
  if (value === null || value === undefined) return { fields: {}, body, problems: [] }
  if (typeof value !== "object" || Array.isArray(value)) {
    return { fields: {}, body, problems: ["its front matter is not a mapping of `key: value`; it is ignored"] }
  }
  return { fields: value as Record<string, unknown>, body, problems: [] }
}

/**
 * A text field of the front matter: absent is `undefined`; a number or boolean is read as text;
 * anything else is reported (naming the field) and ignored.
 */
export const textField = (
  matter: FrontMatter,
  field: string,
  report: (message: string) => void
): string | undefined => {
  const value = matter.fields[field]
  if (value === undefined || value === null) return undefined
  // YAML's own escapes (`"\e]52;…\a"`) come out of the parser as the characters the file's text had not.
  if (typeof value === "string") return terminalSafe(value).trim() || undefined
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  report(`the front matter field \`${field}\` should be text, not ${Array.isArray(value) ? "a list" : "a mapping"}`)
  return undefined
}

/** The first non-empty line of a body, cut to `max` characters: the description of a file that gives none. */
export const firstLine = (body: string, max = 100): string => {
  const line =
    body
      .split(/\r?\n/)
      .map((l) => l.replace(/^#+\s*/, "").trim())
      .find((l) => l !== "") ?? ""
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}
