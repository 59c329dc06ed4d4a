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

type Segment = "**" | RegExp

const hasMagic = (text: string): boolean => /[*?[\]{}]/.test(text)

/** Expands `{a,b}` alternatives (nested ones too) into plain patterns. */
export const expandBraces = (pattern: string): Array<string> => {
  let depth = 0
  let start = -1
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]
    if (char === "\\") {
      i++
    } else if (char === "{") {
      if (depth === 0) start = i
      depth++
    } else if (char === "}" && depth > 0) {
      depth--
      if (depth === 0) {
        const alternatives = splitTopLevel(pattern.slice(start + 1, i))
        if (alternatives.length < 2) continue
        const before = pattern.slice(0, start)
        const after = pattern.slice(i + 1)
        return alternatives.flatMap((alternative) => expandBraces(before + alternative + after))
      }
    }
  }
  return [pattern]
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

const segmentRegExp = (segment: string): RegExp => {
  let source = ""
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i]!
    if (char === "\\" && i + 1 < segment.length) {
      source += escapeRegex(segment[++i]!)
    } else if (char === "*") {
      source += "[^/]*"
    } else if (char === "?") {
      source += "[^/]"
    } else if (char === "[") {
      const close = segment.indexOf("]", i + 2)
      if (close === -1) {
        source += "\\["
        continue
      }
      let body = segment.slice(i + 1, close)
      if (body.startsWith("!")) body = `^${body.slice(1)}`
      source += `[${body.replace(/\\/g, "\\\\")}]`
      i = close
    } else {
      source += escapeRegex(char)
    }
  }
  return new RegExp(`^${source}$`)
}

const escapeRegex = (char: string): string => char.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

const compileOne = (pattern: string): ReadonlyArray<Segment> => {
  const segments: Array<Segment> = []
  for (const part of pattern.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "**") {
      if (segments[segments.length - 1] !== "**") segments.push("**")
    } else {
      segments.push(segmentRegExp(part))
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
    else if (segment.test(name)) next.add(state + 1)
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

/** Compiles a glob pattern. */
export const compileGlob = (pattern: string): GlobMatcher => {
  const compiled = expandBraces(pattern).map(compileOne)
  return {
    matches: (relative) => compiled.some((segments) => run(segments, relative).has(segments.length)),
    mayMatchBelow: (relativeDirectory) =>
      compiled.some((segments) => [...run(segments, relativeDirectory)].some((state) => state < segments.length))
  }
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
