// The YAML front matter of agent files: the subset such files use (block mappings and sequences,
// flow `[a, b]` / `{ a: b }`, quoted and plain scalars, `|` and `>` blocks, comments). The plugin
// depends on the domain and effect only, so no YAML library. Values that YAML would refuse but
// agent files commonly hold, such as a plain description with ": " inside, are read as the text
// they plainly are.

import * as Data from "effect/Data"
import * as Predicate from "effect/Predicate"

export type YamlValue = string | number | boolean | null | ReadonlyArray<YamlValue> | YamlMap
export interface YamlMap {
  readonly [key: string]: YamlValue
}

/** A key of the top-level mapping, with the line (1-based, in the file) where it is. */
export interface FrontMatterEntry {
  readonly key: string
  readonly value: YamlValue
  readonly line: number
}

export interface ParsedFile {
  /** The top-level keys in order; empty when the file has no front matter. */
  readonly entries: ReadonlyArray<FrontMatterEntry>
  /** The Markdown after the front matter. */
  readonly body: string
  /** Whether the file starts with a front matter block. */
  readonly hasFrontMatter: boolean
}

/** Front matter the parser could not read: the line (in the file) and why. */
export class FrontMatterError extends Data.TaggedError("FrontMatterError")<{
  readonly line: number
  readonly reason: string
}> {}

const broken = (line: number, reason: string) => new FrontMatterError({ line, reason })
const isFrontMatterError = (error: unknown): error is FrontMatterError => Predicate.isTagged(error, "FrontMatterError")

interface Line {
  readonly number: number
  readonly indent: number
  readonly text: string
}

const isBlank = (text: string) => text.trim() === "" || /^\s*#/.test(text)

/** Removes a comment that starts with " #" outside quotes. */
const stripComment = (text: string): string => {
  let quote: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quote !== undefined) {
      if (c === quote) quote = undefined
      continue
    }
    if (c === '"' || c === "'") quote = c
    else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]!))) return text.slice(0, i).trimEnd()
  }
  return text
}

const scalar = (raw: string): YamlValue => {
  const text = raw.trim()
  if (text === "" || text === "~" || text === "null" || text === "Null" || text === "NULL") return null
  if (/^(true|True|TRUE)$/.test(text)) return true
  if (/^(false|False|FALSE)$/.test(text)) return false
  if (/^[-+]?\d+$/.test(text)) return Number(text)
  if (/^[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number(text)
  return text
}

const unescapeDouble = (body: string, line: number): string =>
  body.replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_, code: string) => {
    switch (code[0]) {
      case "n":
        return "\n"
      case "t":
        return "\t"
      case "r":
        return "\r"
      case "0":
        return "\0"
      case "u":
      case "x":
        return String.fromCharCode(Number.parseInt(code.slice(1), 16))
      case '"':
      case "\\":
      case "/":
      case " ":
        return code
      default:
        throw broken(line, `unknown escape \\${code} in a double-quoted string`)
    }
  })

/** A flow value (`[…]`, `{…}`, a quoted or plain scalar) read from `text` at `at`. */
class FlowReader {
  at = 0
  constructor(
    readonly text: string,
    readonly line: number
  ) {}

  private skip() {
    while (this.at < this.text.length && /\s/.test(this.text[this.at]!)) this.at++
  }

  private fail(reason: string): never {
    throw broken(this.line, reason)
  }

  value(inFlow: boolean): YamlValue {
    this.skip()
    const c = this.text[this.at]
    if (c === "[") return this.sequence()
    if (c === "{") return this.mapping()
    if (c === '"' || c === "'") return this.quoted()
    const start = this.at
    while (this.at < this.text.length) {
      const d = this.text[this.at]!
      if (inFlow && (d === "," || d === "]" || d === "}")) break
      if (inFlow && d === ":" && /\s/.test(this.text[this.at + 1] ?? " ")) break
      this.at++
    }
    return scalar(this.text.slice(start, this.at))
  }

  quoted(): string {
    const quote = this.text[this.at]!
    let out = ""
    this.at++
    for (;;) {
      if (this.at >= this.text.length) this.fail(`a ${quote === '"' ? "double" : "single"}-quoted string is not closed`)
      const c = this.text[this.at]!
      if (quote === "'" && c === "'") {
        if (this.text[this.at + 1] === "'") {
          out += "'"
          this.at += 2
          continue
        }
        this.at++
        return out
      }
      if (quote === '"' && c === "\\") {
        out += this.text.slice(this.at, this.at + 2)
        this.at += 2
        continue
      }
      if (quote === '"' && c === '"') {
        this.at++
        return unescapeDouble(out, this.line)
      }
      out += c
      this.at++
    }
  }

  private sequence(): ReadonlyArray<YamlValue> {
    const items: Array<YamlValue> = []
    this.at++
    for (;;) {
      this.skip()
      if (this.text[this.at] === "]") {
        this.at++
        return items
      }
      if (this.at >= this.text.length) this.fail("a [ list is not closed")
      items.push(this.value(true))
      this.skip()
      if (this.text[this.at] === ",") this.at++
      else if (this.text[this.at] !== "]") this.fail(`expected "," or "]" in a [ list`)
    }
  }

  private mapping(): YamlMap {
    const map: Record<string, YamlValue> = {}
    this.at++
    for (;;) {
      this.skip()
      if (this.text[this.at] === "}") {
        this.at++
        return map
      }
      if (this.at >= this.text.length) this.fail("a { mapping is not closed")
      const key = this.value(true)
      this.skip()
      let value: YamlValue = null
      if (this.text[this.at] === ":") {
        this.at++
        value = this.value(true)
      }
      map[String(key)] = value
      this.skip()
      if (this.text[this.at] === ",") this.at++
      else if (this.text[this.at] !== "}") this.fail(`expected "," or "}" in a { mapping`)
    }
  }

  /** The whole text as one flow value; anything after it is an error. */
  whole(): YamlValue {
    const value = this.value(false)
    this.skip()
    if (this.at < this.text.length) this.fail(`unexpected text after the value: ${this.text.slice(this.at)}`)
    return value
  }
}

/** Block scalar lines (`|` keeps line breaks, `>` folds them; `-` strips the final break). */
const blockScalar = (indicator: string, lines: ReadonlyArray<Line>, raw: ReadonlyArray<string>): string => {
  const content = lines.length === 0 ? 0 : Math.min(...lines.filter((l) => l.text.trim() !== "").map((l) => l.indent))
  const texts = raw.map((text) => text.slice(content))
  while (texts.length > 0 && texts[texts.length - 1]!.trim() === "") texts.pop()
  const folded = indicator.startsWith(">")
  let out = ""
  texts.forEach((text, i) => {
    const previous = texts[i - 1]
    if (i === 0) out = text
    else if (!folded) out += `\n${text}`
    // Folding: an empty line is a line break; other breaks between plain lines become spaces.
    else if (text === "") out += "\n"
    else if (previous === "") out += text
    else if (/^\s/.test(text) || /^\s/.test(previous ?? "")) out += `\n${text}`
    else out += ` ${text}`
  })
  if (indicator.includes("-")) return out
  return `${out}\n`
}

class BlockParser {
  constructor(
    readonly lines: ReadonlyArray<Line>,
    readonly raw: ReadonlyArray<string>
  ) {}
  at = 0

  private next(): Line | undefined {
    while (this.at < this.lines.length && isBlank(this.lines[this.at]!.text)) this.at++
    return this.lines[this.at]
  }

  /** Lines more indented than `indent` (the body of a block scalar), raw. */
  private deeper(indent: number): { lines: Array<Line>; raw: Array<string> } {
    const lines: Array<Line> = []
    const raw: Array<string> = []
    while (this.at < this.lines.length) {
      const line = this.lines[this.at]!
      if (line.text.trim() !== "" && line.indent <= indent) break
      lines.push(line)
      raw.push(this.raw[this.at]!)
      this.at++
    }
    return { lines, raw }
  }

  /** The value after `key:` (or `- `) on line `line`, whose own indent is `indent`. */
  private valueAfter(rest: string, line: Line, indent: number): YamlValue {
    const text = stripComment(rest).trim()
    if (text === "") {
      const following = this.next()
      if (following === undefined) return null
      if (following.indent > indent) return this.block(following.indent)
      // A sequence may sit at the indent of its key.
      if (following.indent === indent && following.text.trimStart().startsWith("- ")) return this.sequence(indent)
      return null
    }
    if (/^[|>][-+]?\d*$/.test(text)) {
      const body = this.deeper(indent)
      return blockScalar(text, body.lines, body.raw)
    }
    if (text.startsWith("[") || text.startsWith("{") || text.startsWith('"') || text.startsWith("'")) {
      let joined = text
      // A flow value or quoted string may go on over the next, more indented lines.
      for (;;) {
        try {
          return new FlowReader(joined, line.number).whole()
        } catch (error) {
          const following = this.lines[this.at]
          if (!isFrontMatterError(error) || following === undefined || following.indent <= indent) {
            throw error
          }
          joined += ` ${following.text.trim()}`
          this.at++
        }
      }
    }
    // A plain scalar: continuation lines, more indented, are folded into it.
    let value = text
    for (;;) {
      const following = this.lines[this.at]
      if (following === undefined || isBlank(following.text) || following.indent <= indent) break
      value += ` ${stripComment(following.text).trim()}`
      this.at++
    }
    return scalar(value)
  }

  block(indent: number): YamlValue {
    const first = this.next()
    if (first === undefined) return null
    return first.text.trimStart().startsWith("- ") || first.text.trim() === "-"
      ? this.sequence(indent)
      : this.mapping(indent)
  }

  private sequence(indent: number): ReadonlyArray<YamlValue> {
    const items: Array<YamlValue> = []
    for (;;) {
      const line = this.next()
      if (line === undefined || line.indent !== indent) return items
      const text = line.text.trimStart()
      if (!(text.startsWith("- ") || text === "-")) return items
      this.at++
      const rest = text.slice(1).trimStart()
      const itemIndent = indent + (text.length - rest.length)
      if (/^[^\s"'[{][^:]*:(\s|$)/.test(rest)) {
        // `- key: value` starts a mapping item whose other keys sit under `key`.
        this.at--
        items.push(this.mappingFrom(itemIndent, rest))
      } else {
        items.push(this.valueAfter(rest, line, indent))
      }
    }
  }

  /** A mapping item of a sequence: its first key is on the `- ` line. */
  private mappingFrom(indent: number, firstText: string): YamlMap {
    const line = this.lines[this.at]!
    this.at++
    const map: Record<string, YamlValue> = {}
    const { key, rest } = splitKey(firstText, line.number)
    map[key] = this.valueAfter(rest, line, indent)
    Object.assign(map, this.mapping(indent))
    return map
  }

  mapping(indent: number, onEntry?: (entry: FrontMatterEntry) => void): YamlMap {
    const map: Record<string, YamlValue> = {}
    for (;;) {
      const line = this.next()
      if (line === undefined || line.indent < indent) return map
      if (line.indent > indent) throw broken(line.number, "this line is indented more than its neighbours")
      const text = line.text.trimStart()
      if (text.startsWith("- ")) throw broken(line.number, `a list item where a "key: value" line was expected`)
      this.at++
      const { key, rest } = splitKey(text, line.number)
      const value = this.valueAfter(rest, line, indent)
      map[key] = value
      onEntry?.({ key, value, line: line.number })
    }
  }
}

const splitKey = (text: string, line: number): { key: string; rest: string } => {
  if (text.startsWith('"') || text.startsWith("'")) {
    const reader = new FlowReader(text, line)
    const key = reader.quoted()
    const after = text.slice(reader.at).trimStart()
    if (!after.startsWith(":")) throw broken(line, `expected ":" after the key ${key}`)
    return { key, rest: after.slice(1) }
  }
  const match = /^([^:#]+?)\s*:(\s+|$)/.exec(text)
  if (match === null) throw broken(line, `expected "key: value", got: ${text}`)
  return { key: match[1]!, rest: text.slice(match[0].length) }
}

/** Splits a Markdown file into its front matter entries and its body. */
export const parseFrontMatter = (source: string): ParsedFile => {
  const text = source.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n")
  const all = text.split("\n")
  if (all[0]?.trimEnd() !== "---") return { entries: [], body: text.trim(), hasFrontMatter: false }
  const end = all.findIndex((line, i) => i > 0 && (line.trimEnd() === "---" || line.trimEnd() === "..."))
  if (end < 0) throw broken(1, 'the front matter starting with "---" is never closed by another "---" line')
  const raw = all.slice(1, end)
  const lines = raw.map((line, i) => {
    if (/^\t/.test(line)) throw broken(i + 2, "a tab indents this line; YAML indents with spaces")
    return { number: i + 2, indent: line.length - line.trimStart().length, text: line }
  })
  const entries: Array<FrontMatterEntry> = []
  const parser = new BlockParser(lines, raw)
  parser.mapping(0, (entry) => entries.push(entry))
  const rest = lines.slice(parser.at).find((line) => !isBlank(line.text))
  if (rest !== undefined) throw broken(rest.number, "this line is indented less than the front matter")
  return {
    entries,
    body: all
      .slice(end + 1)
      .join("\n")
      .trim(),
    hasFrontMatter: true
  }
}
