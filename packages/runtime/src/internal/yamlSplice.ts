// A configuration edit written back as the person wrote the file: the top-level settings an edit did
// not change keep their bytes (flow style `[a, b]`, spacing, indentation, quotes, comments); only
// the changed ones are written anew, and added ones go after the last. The YAML library would print
// the whole document in its own style (`[ a, b ]`, 2-space indents, long lists over several lines).
import type * as YAML from "yaml"
import { yaml } from "./yaml.js"

interface SourcePair {
  readonly key: string
  /** The setting as JSON before the edit, to tell whether the edit changed it. */
  readonly before: string
  /** From its key to the end of its value; a trailing comment on the value's line stays after it. */
  readonly start: number
  readonly end: number
}

/** What an edit may keep of the file: its top-level settings, when it is a block mapping of plain keys. */
export interface Source {
  readonly text: string
  readonly pairs: ReadonlyArray<SourcePair>
}

const json = (value: unknown): string => JSON.stringify(value) ?? "undefined"

/** The top-level settings of `doc`, parsed from `text`, before any edit; `undefined` when the file is of another shape. */
export const sourceOf = (text: string, doc: YAML.Document): Source | undefined => {
  const map = doc.contents
  if (!yaml().isMap(map) || map.flow === true || doc.errors.length > 0) return undefined
  let values: Record<string, unknown>
  try {
    values = doc.toJS() as Record<string, unknown>
  } catch {
    return undefined
  }
  const pairs: Array<SourcePair> = []
  for (const pair of map.items) {
    const key = pair.key
    if (!yaml().isScalar(key) || typeof key.value !== "string" || key.range == null) return undefined
    const value = pair.value
    const end = yaml().isNode(value) && value.range != null ? value.range[1] : key.range[1]
    pairs.push({ key: key.value, before: json(values[key.value]), start: key.range[0], end })
  }
  return { text, pairs }
}

/** The indentation the file uses: its first indented setting's, else two spaces. */
const indentOf = (text: string): number => {
  const indented = /^( +)[^\s#]/m.exec(text)?.[1]?.length
  return indented !== undefined && indented >= 2 && indented <= 8 ? indented : 2
}

/** One setting as the library prints it, without what the file around it keeps (the comment above, the one after). */
const render = (pair: YAML.Pair, options: YAML.ToStringOptions): string => {
  const Y = yaml()
  const key = Y.isNode(pair.key) ? pair.key.clone() : pair.key
  if (Y.isNode(key)) {
    key.commentBefore = null
    key.spaceBefore = false
  }
  let value: unknown = pair.value
  if (Y.isScalar(value) || (Y.isCollection(value) && value.flow === true)) {
    const bare = value.clone()
    bare.comment = null
    value = bare
  }
  const single = new Y.Document({})
  const map = single.contents as YAML.YAMLMap
  map.items.push(new Y.Pair(key, value))
  return single.toString(options).replace(/\n$/, "")
}

/** A flow collection written with spaces inside its brackets: `[ a, b ]`. */
const PADDED = /[[{] +[^\s\]}]/

/** Whether a setting's flow collections are written padded: as its own are, else as the file's. */
const padded = (written: string, options: YAML.ToStringOptions): boolean =>
  /[[{]/.test(written) ? PADDED.test(written) : options.flowCollectionPadding === true

/** Where the line holding `at - 1` ends, after its newline. */
const lineEnd = (text: string, at: number): number => {
  if (at > 0 && text[at - 1] === "\n") return at
  const newline = text.indexOf("\n", at)
  return newline < 0 ? text.length : newline + 1
}

/**
 * The text of the edited `doc`: `source` with each changed setting written anew, removed ones taken
 * out with their line, added ones after the last; `undefined` when the edit cannot be written so
 * (the document is no longer a mapping, or the result would not read back as `doc`).
 */
export const spliced = (source: Source, doc: YAML.Document): string | undefined => {
  const Y = yaml()
  const map = doc.contents
  if (!Y.isMap(map) || map.flow === true) return undefined
  try {
    const values = doc.toJS() as Record<string, unknown>
    const { text } = source
    const options: YAML.ToStringOptions = {
      indent: indentOf(text),
      lineWidth: 0,
      flowCollectionPadding: PADDED.test(text),
      // A list written at its key's indentation (`plugins:` then `- a`) gets its entries so.
      indentSeq: !/^\S[^\n]*:[ \t]*\r?\n-[ \t]/m.test(text)
    }
    const current = new Map<string, YAML.Pair>()
    for (const pair of map.items) {
      // A key an edit added is a plain string; one read from the file, a scalar node.
      const key = Y.isScalar(pair.key) ? pair.key.value : pair.key
      if (typeof key !== "string") return undefined
      current.set(key, pair)
    }
    const known = new Set(source.pairs.map((pair) => pair.key))
    let out = ""
    let at = 0
    for (const pair of source.pairs) {
      const now = current.get(pair.key)
      if (now !== undefined && json(values[pair.key]) === pair.before) continue
      out += text.slice(at, pair.start)
      if (now === undefined) {
        at = lineEnd(text, pair.end)
        continue
      }
      out += render(now, { ...options, flowCollectionPadding: padded(text.slice(pair.start, pair.end), options) })
      if (text[pair.end - 1] === "\n") out += "\n"
      at = pair.end
    }
    const added = [...current].filter(([key]) => !known.has(key)).map(([, pair]) => pair)
    const last = source.pairs.at(-1)
    const insertAt = last === undefined ? text.length : Math.max(at, lineEnd(text, last.end))
    out += text.slice(at, insertAt)
    if (added.length > 0) {
      if (out !== "" && !out.endsWith("\n")) out += "\n"
      for (const pair of added) out += `${render(pair, options)}\n`
    }
    out += text.slice(insertAt)
    const check = Y.parseDocument(out)
    if (check.errors.length > 0 || json(check.toJS()) !== json(values)) return undefined
    return out
  } catch {
    return undefined
  }
}
