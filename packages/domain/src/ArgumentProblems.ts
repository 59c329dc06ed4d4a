import * as ParseResult from "effect/ParseResult"

// What was wrong with a tool call's arguments, in one line the model can act on: each argument
// named once with what it must be and what it was. Effect's own tree opens with the whole input
// type and repeats a union's every member; `{ limit: 0 }` would read "Expected undefined".

/** `options[1].label`, or "the arguments" for the whole object. */
const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "the arguments"
    : path
        .map((key, index) => (typeof key === "number" ? `[${key}]` : `${index === 0 ? "" : "."}${String(key)}`))
        .join("")

const EXPECTED = /^Expected ([\s\S]*), actual ([\s\S]*)$/

/** A type as a person names it: a whole object's or array's type is too long to repeat. */
const typeName = (type: string): string =>
  type.startsWith("{") ? "an object" : type.startsWith("ReadonlyArray<") ? "an array" : type

/** One line naming each argument that is wrong and why, e.g. `limit must be …, got 0; path is missing`. */
export const describeArgumentProblems = (error: ParseResult.ParseError): string => {
  const groups = new Map<string, Array<ParseResult.ArrayFormatterIssue>>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const key = pathText(issue.path)
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [issue])
    else group.push(issue)
  }
  const lines: Array<string> = []
  for (const [name, issues] of groups) {
    // An optional argument's union says it could be left out: true, and no help.
    const useful = issues.filter((issue) => !/^Expected undefined, actual /.test(issue.message))
    if (
      useful.length === 0 &&
      [...groups.keys()].some((key) => key.startsWith(`${name}.`) || key.startsWith(`${name}[`))
    )
      continue
    const shown = useful.length === 0 ? issues : useful
    const expected: Array<string> = []
    let actual: string | undefined
    const others: Array<string> = []
    for (const issue of shown) {
      const match = EXPECTED.exec(issue.message)
      if (match === null) {
        others.push(issue.message)
        continue
      }
      expected.push(typeName(match[1]!))
      actual = match[2]!
    }
    if (name === "the arguments" && expected.includes("an object")) {
      lines.push(`the arguments must be a JSON object, got ${actual}`)
      continue
    }
    const parts = [...others.map((message) => `${name} ${message}`)]
    if (expected.length > 0) parts.push(`${name}: expected ${[...new Set(expected)].join(" or ")}, got ${actual}`)
    lines.push(parts.join("; "))
  }
  return lines.join("; ")
}
