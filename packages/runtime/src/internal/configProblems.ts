// A configuration file's problems as a person reads them: one line per setting, named by its path
// (`limits.maxTurns`), placed at its line and column in the YAML, saying what was expected.
import * as ParseResult from "effect/ParseResult"
import type * as YAML from "yaml"
import { yaml } from "./yaml.js"

export interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly target: "key" | "value"
  readonly text: string
}

/** One readable problem per path; alternatives of a union are joined with "or". */
export const describeIssues = (issue: ParseResult.ParseIssue, input: unknown): Array<Problem> => {
  const leaves = ParseResult.ArrayFormatter.formatIssueSync(issue)
  // `Schema.optional` adds `| undefined`, whose mismatch says nothing useful.
  const useful = leaves.filter((leaf) => !leaf.message.startsWith("Expected undefined,"))
  const byPath = new Map<string, { path: ReadonlyArray<PropertyKey>; missing: boolean; expected: Array<string> }>()
  for (const leaf of useful.length > 0 ? useful : leaves) {
    const key = JSON.stringify(leaf.path.map(String))
    const entry = byPath.get(key) ?? { path: leaf.path, missing: false, expected: [] }
    if (leaf._tag === "Missing") entry.missing = true
    else if (leaf._tag !== "Unexpected") entry.expected.push(expectation(leaf.message))
    byPath.set(key, entry)
  }
  const problems: Array<Problem> = []
  for (const { path, missing, expected } of byPath.values()) {
    if (missing) {
      const parent = path.slice(0, -1)
      const name = String(path[path.length - 1])
      const text = `required key "${name}" is missing`
      problems.push({ path, target: "value", text: parent.length === 0 ? text : `${formatPath(parent)}: ${text}` })
    } else if (expected.length > 0) {
      const wanted = joinAlternatives([...new Set(expected.flatMap((text) => text.split(" | ")))])
      problems.push({
        path,
        target: "value",
        text: `${formatPath(path)}: expected ${wanted}, got ${describeValue(valueAt(input, path))}`
      })
    }
  }
  return problems
}

const joinAlternatives = (items: ReadonlyArray<string>): string =>
  items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`

/** "Expected X, actual Y" → a readable X. */
const expectation = (message: string): string => {
  const match = /^Expected ([\s\S]*?), actual [\s\S]*$/.exec(message)
  const expected = match?.[1] ?? message.replace(/^Expected /, "")
  if (expected.startsWith("{")) return "a mapping (key: value)"
  if (/^(ReadonlyArray|Array)<|^readonly \[/.test(expected)) return "a list"
  switch (expected) {
    case "string":
      return "a string"
    case "number":
      return "a number"
    case "boolean":
      return "true or false"
    default:
      return expected
  }
}

export const describeValue = (value: unknown): string => {
  if (value === undefined || value === null) return "an empty value"
  if (Array.isArray(value)) return "a list"
  if (typeof value === "object") return "a mapping"
  // JSON writes these as null: `1e400` (or `.inf`) would read "got null".
  if (typeof value === "number" && Number.isNaN(value)) return "NaN (not a number)"
  if (typeof value === "number" && !Number.isFinite(value)) return "a number too large to hold (infinite)"
  const text = JSON.stringify(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let value = input
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return value
}

/** `limits.maxTurns`, `plugins[1].source`, `providers["my.host"].baseURL`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key, i) =>
      typeof key === "number"
        ? `[${key}]`
        : /^[A-Za-z_$][\w$-]*$/.test(String(key))
          ? `${i === 0 ? "" : "."}${String(key)}`
          : `[${JSON.stringify(String(key))}]`
    )
    .join("")

/**
 * The offset of the YAML node at a decoded path: the key itself (unknown keys), or its value.
 * A path that does not exist (a missing key) points at the deepest key that does.
 */
// Each mapping's pairs by key, built once: a file of many keys is located in linear time.
const pairsByMap = new WeakMap<YAML.YAMLMap, Map<string, YAML.Pair>>()

const keyText = (key: unknown): string => (yaml().isScalar(key) ? String(key.value) : String(key))

const pairsOf = (map: YAML.YAMLMap): Map<string, YAML.Pair> => {
  let pairs = pairsByMap.get(map)
  if (pairs === undefined) {
    pairs = new Map()
    for (const item of map.items) if (!pairs.has(keyText(item.key))) pairs.set(keyText(item.key), item)
    pairsByMap.set(map, pairs)
  }
  return pairs
}

/** A key written twice in one mapping: where, where it was first, and its path (`providers.openai.baseURL`). */
export interface DuplicateKey {
  readonly offset: number
  readonly firstOffset: number
  readonly path: ReadonlyArray<PropertyKey>
}

/**
 * The first key written twice in one mapping, in linear time (the `yaml` package's own check
 * compares every pair with every other: minutes for a file of many keys).
 */
export const duplicateKey = (doc: YAML.Document): DuplicateKey | undefined => {
  let found: DuplicateKey | undefined
  const nodes: Array<{ readonly node: unknown; readonly path: ReadonlyArray<PropertyKey> }> = [
    { node: doc.contents, path: [] }
  ]
  for (let i = 0; i < nodes.length; i++) {
    const { node, path } = nodes[i]!
    if (yaml().isMap(node)) {
      const seen = new Map<string, number>()
      for (const item of node.items) {
        const key = keyText(item.key)
        if (yaml().isScalar(item.key)) {
          const offset = item.key.range?.[0] ?? 0
          const firstOffset = seen.get(key)
          if (firstOffset !== undefined && (found === undefined || offset < found.offset)) {
            found = { offset, firstOffset, path: [...path, key] }
          }
          if (firstOffset === undefined) seen.set(key, offset)
        }
        nodes.push({ node: item.value, path: [...path, key] })
      }
    } else if (yaml().isSeq(node)) {
      for (const [index, item] of node.items.entries()) nodes.push({ node: item, path: [...path, index] })
    }
  }
  return found
}

export const locate = (doc: YAML.Document, path: ReadonlyArray<PropertyKey>, target: "key" | "value"): number => {
  const start = (node: unknown): number | undefined =>
    yaml().isNode(node) && node.range !== undefined && node.range !== null ? node.range[0] : undefined
  let node: unknown = doc.contents
  let offset = start(node) ?? 0
  for (let i = 0; i < path.length; i++) {
    if (yaml().isAlias(node)) node = node.resolve(doc)
    const key = path[i]!
    if (yaml().isMap(node)) {
      const pair = pairsOf(node).get(String(key))
      if (pair === undefined) return offset
      const keyOffset = start(pair.key) ?? offset
      if (i === path.length - 1 && target === "key") return keyOffset
      node = pair.value
      offset = start(pair.value) ?? keyOffset
      // A missing key below reports the line of its parent's key.
      if (i < path.length - 1) offset = keyOffset
    } else if (yaml().isSeq(node) && typeof key === "number") {
      const item = node.items[key]
      if (item === undefined) return offset
      node = item
      offset = start(item) ?? offset
    } else {
      return offset
    }
  }
  return start(node) ?? offset
}
