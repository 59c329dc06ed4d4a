import { ToolError } from "@alisio/domain/Errors"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

/**
 * A small glob matcher (Node 20 has no `fs.glob`): `*`, `?`, `[abc]`, `[!a-z]`, `{a,b}` and `**`
 * for any number of folders. Paths are `/`-separated and relative to the walk's root; `*` also
 * matches names starting with a dot.
 */
export interface GlobMatcher {
  /** Whether a relative path matches the pattern. */
  readonly matches: (relative: string) => boolean
  /** Whether something below this relative folder could still match (prunes the walk). */
  readonly mayMatchBelow: (relativeDirectory: string) => boolean
}

/** One name's pattern, matched without regular expressions so no pattern can backtrack for ever. */
interface NamePattern {
  readonly tokens: ReadonlyArray<Token>
}

type Token =
  | { readonly _tag: "Char"; readonly char: string }
  | { readonly _tag: "AnyChar" }
  | { readonly _tag: "Star" }
  | { readonly _tag: "Class"; readonly negated: boolean; readonly ranges: ReadonlyArray<readonly [string, string]> }

type Segment = "**" | NamePattern

/** Brace alternatives a pattern may expand to: `{a,b}{c,d}…` doubles with each group. */
export const MAX_ALTERNATIVES = 1_000

/** A pattern whose braces expand past `MAX_ALTERNATIVES`. */
export class GlobTooComplexError extends Data.TaggedError("GlobTooComplexError")<{ readonly pattern: string }> {
  override get message(): string {
    return `the glob ${this.pattern} expands to more than ${MAX_ALTERNATIVES} alternatives; use fewer {a,b} groups`
  }
}

const hasMagic = (text: string): boolean => /[*?[\]{}]/.test(text)

/**
 * Expands `{a,b}` alternatives (nested ones too) into plain patterns; throws `GlobTooComplexError`
 * past `MAX_ALTERNATIVES`, before the work grows with them.
 */
export const expandBraces = (pattern: string): Array<string> => {
  const out: Array<string> = []
  const expand = (text: string): void => {
    let depth = 0
    let start = -1
    for (let i = 0; i < text.length; i++) {
      const char = text[i]
      if (char === "\\") {
        i++
      } else if (char === "{") {
        if (depth === 0) start = i
        depth++
      } else if (char === "}" && depth > 0) {
        depth--
        if (depth === 0) {
          const alternatives = splitTopLevel(text.slice(start + 1, i))
          if (alternatives.length < 2) continue
          const before = text.slice(0, start)
          const after = text.slice(i + 1)
          for (const alternative of alternatives) expand(before + alternative + after)
          return
        }
      }
    }
    if (out.length >= MAX_ALTERNATIVES) throw new GlobTooComplexError({ pattern })
    out.push(text)
  }
  expand(pattern)
  return out
}

const splitTopLevel = (body: string): Array<string> => {
  const parts: Array<string> = []
  let depth = 0
  let current = ""
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!
    if (char === "\\") {
      current += char + (body[i + 1] ?? "")
      i++
      continue
    }
    if (char === "{") depth++
    if (char === "}") depth--
    if (char === "," && depth === 0) {
      parts.push(current)
      current = ""
    } else {
      current += char
    }
  }
  parts.push(current)
  return parts
}

const compileName = (segment: string): NamePattern => {
  const tokens: Array<Token> = []
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i]!
    if (char === "\\" && i + 1 < segment.length) {
      tokens.push({ _tag: "Char", char: segment[++i]! })
    } else if (char === "*") {
      if (tokens.at(-1)?._tag !== "Star") tokens.push({ _tag: "Star" })
    } else if (char === "?") {
      tokens.push({ _tag: "AnyChar" })
    } else if (char === "[") {
      const close = segment.indexOf("]", i + 2)
      if (close === -1) {
        tokens.push({ _tag: "Char", char })
        continue
      }
      let body = segment.slice(i + 1, close)
      const negated = body.startsWith("!") || body.startsWith("^")
      if (negated) body = body.slice(1)
      const ranges: Array<readonly [string, string]> = []
      for (let j = 0; j < body.length; j++) {
        const from = body[j]!
        if (body[j + 1] === "-" && j + 2 < body.length) {
          ranges.push([from, body[j + 2]!])
          j += 2
        } else {
          ranges.push([from, from])
        }
      }
      tokens.push({ _tag: "Class", negated, ranges })
      i = close
    } else {
      tokens.push({ _tag: "Char", char })
    }
  }
  return { tokens }
}

const matchesOne = (token: Token, char: string): boolean => {
  switch (token._tag) {
    case "Char":
      return token.char === char
    case "AnyChar":
      return true
    case "Class":
      return token.ranges.some(([from, to]) => from <= char && char <= to) !== token.negated
    case "Star":
      return false
  }
}

/**
 * Whether a name matches: the classic wildcard walk that, on a mismatch, lets the last `*`
 * swallow one more character. At most name × pattern steps, whatever the pattern.
 */
const matchName = (pattern: NamePattern, name: string): boolean => {
  const tokens = pattern.tokens
  let t = 0
  let n = 0
  let star = -1
  let starAt = 0
  while (n < name.length) {
    const token = tokens[t]
    if (token?._tag === "Star") {
      star = t++
      starAt = n
    } else if (token !== undefined && matchesOne(token, name[n]!)) {
      t++
      n++
    } else if (star !== -1) {
      t = star + 1
      n = ++starAt
    } else {
      return false
    }
  }
  while (tokens[t]?._tag === "Star") t++
  return t === tokens.length
}

const compileOne = (pattern: string): ReadonlyArray<Segment> => {
  const segments: Array<Segment> = []
  for (const part of pattern.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "**") {
      if (segments[segments.length - 1] !== "**") segments.push("**")
    } else {
      segments.push(compileName(part))
    }
  }
  return segments
}

/** Pattern positions reachable by `**` matching nothing. */
const closure = (segments: ReadonlyArray<Segment>, states: Set<number>): Set<number> => {
  for (const state of states) {
    if (segments[state] === "**") states.add(state + 1)
  }
  return states
}

const step = (segments: ReadonlyArray<Segment>, states: Set<number>, name: string): Set<number> => {
  const next = new Set<number>()
  for (const state of states) {
    const segment = segments[state]
    if (segment === undefined) continue
    if (segment === "**") next.add(state)
    else if (matchName(segment, name)) next.add(state + 1)
  }
  return closure(segments, next)
}

const run = (segments: ReadonlyArray<Segment>, relative: string): Set<number> => {
  let states = closure(segments, new Set([0]))
  for (const name of relative.split("/")) {
    if (name === "" || name === ".") continue
    states = step(segments, states, name)
    if (states.size === 0) break
  }
  return states
}

/** Compiles a glob pattern; throws `GlobTooComplexError` (see `expandBraces`). */
export const compileGlob = (pattern: string): GlobMatcher => {
  const compiled = expandBraces(pattern).map(compileOne)
  return {
    matches: (relative) => compiled.some((segments) => run(segments, relative).has(segments.length)),
    mayMatchBelow: (relativeDirectory) =>
      compiled.some((segments) => [...run(segments, relativeDirectory)].some((state) => state < segments.length))
  }
}

/**
 * Compiles a pattern for one name, without folders (`*KEY*`, `LC_*`, `{A,B}_*`): a name is matched
 * against each alternative directly, with none of a path's splitting and state sets.
 */
export const compileNameGlob = (pattern: string): ((name: string) => boolean) => {
  const alternatives = expandBraces(pattern).map(compileName)
  return (name) => alternatives.some((alternative) => matchName(alternative, name))
}

/**
 * Splits a pattern into the folder its leading literal segments name and the rest, so a walk
 * starts as deep as it can: `src/**\/*.ts` → `{ base: "src", rest: "**\/*.ts" }`.
 */
export const splitGlobBase = (pattern: string): { readonly base: string; readonly rest: string } => {
  const absolute = pattern.startsWith("/")
  const parts = pattern.split("/")
  if (absolute) parts.shift()
  const literal: Array<string> = []
  while (parts.length > 1 && !hasMagic(parts[0]!)) literal.push(parts.shift()!)
  const base = (absolute ? "/" : "") + literal.join("/")
  return { base: base === "" ? "." : base, rest: parts.join("/") }
}

/** `compileGlob` for a tool: a pattern too complex to expand is an error the model sees. */
export const globMatcher = (pattern: string): Effect.Effect<GlobMatcher, ToolError> =>
  Effect.try({
    try: () => compileGlob(pattern),
    catch: (error) => new ToolError({ message: (error as GlobTooComplexError).message })
  })
