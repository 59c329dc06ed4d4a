import * as fs from "node:fs/promises"
import * as path from "node:path"
import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { globMatcher, splitGlobBase } from "./internal/glob.js"
import { IGNORED_DIRECTORIES, walk } from "./internal/walk.js"
import { displayBelow, listed, resolvePath, tryFs } from "./internal/workspace.js"

export interface GlobOptions {
  /** Most paths returned by one call (default 1 000). */
  readonly maxResults?: number
}

const Input = Schema.Struct({
  pattern: Schema.String.annotations({
    description: "A glob: * and ? within a name, ** across folders, [abc], {a,b}. E.g. src/**/*.ts"
  }),
  path: Schema.optional(
    Schema.String.annotations({ description: "The folder the pattern is relative to. Default: the workspace." })
  ),
  include_ignored: Schema.optional(
    Schema.Boolean.annotations({ description: `Also search ${[...IGNORED_DIRECTORIES].join(" and ")} folders.` })
  )
})

/** `glob` (TL-1): the files whose paths match a pattern, sorted, under a result cap. */
export const make = (options: GlobOptions = {}): Tool => {
  const maxResults = options.maxResults ?? 1_000
  return defineTool({
    name: "glob",
    description:
      "Finds files by path pattern (e.g. **/*.ts, src/{a,b}/*.json); * does not cross folders, ** " +
      `does. Skips ${[...IGNORED_DIRECTORIES].join(" and ")} unless include_ignored. ` +
      `Returns sorted paths, at most ${maxResults}.`,
    effect: "read",
    input: Input,
    run: (input, context) =>
      Effect.gen(function* () {
        if (input.pattern.trim() === "") return yield* new ToolError({ message: "pattern is empty" })
        const split = splitGlobBase(input.pattern)
        const base = path.isAbsolute(split.base) ? split.base : path.join(input.path ?? ".", split.base)
        const root = yield* resolvePath(context, base)
        const stat = yield* tryFs(root.display, () => fs.stat(root.real))
        if (!stat.isDirectory()) {
          return yield* new ToolError({ message: `${root.display} is not a folder` })
        }
        const matcher = yield* globMatcher(split.rest)
        const found: Array<string> = []
        const stopped = yield* walk(root.real, root.display, {
          includeIgnored: input.include_ignored === true,
          descend: matcher.mayMatchBelow,
          visit: (entry) =>
            Effect.sync(() => {
              if (entry.kind === "directory" || !matcher.matches(entry.relative)) return true
              if (found.length >= maxResults) return false
              found.push(listed(displayBelow(root, entry.relative)))
              return true
            })
        })
        if (found.length === 0) {
          const where = root.display === "." ? "" : ` in ${root.display}`
          // In a glob \ escapes the next character: a Windows path (src\app\*.ts) matches nothing.
          const hint = /\\[^*?[\]{}!\\]/.test(input.pattern)
            ? ` (\\ escapes the next character in a glob: separate folders with /, as in ${input.pattern.replaceAll("\\", "/")})`
            : input.pattern.endsWith("/")
              ? " (glob finds files, not folders: use ls to list a folder)"
              : ""
          return textResult(`No files match ${input.pattern}${where}.${hint}`)
        }
        const note = stopped ? `\n[stopped at ${maxResults} paths; use a narrower pattern]` : ""
        return textResult(found.join("\n") + note)
      })
  })
}
