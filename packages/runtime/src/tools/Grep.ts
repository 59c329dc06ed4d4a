import * as fs from "node:fs/promises"
import * as path from "node:path"
import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { clipLine, looksBinary, SNIFF_BYTES } from "./internal/files.js"
import { compileGlob } from "./internal/glob.js"
import { integerAtLeast } from "./internal/schema.js"
import { IGNORED_DIRECTORIES, walk } from "./internal/walk.js"
import { displayBelow, type ResolvedPath, resolvePath, tryFs } from "./internal/workspace.js"

export interface GrepOptions {
  /** Most matching lines returned by one call (default 200; the model may ask for fewer). */
  readonly maxResults?: number
  /** Larger files are passed over (default 5 MiB). */
  readonly maxFileBytes?: number
  /** Matching lines are cut at this length (default 300). */
  readonly maxLineLength?: number
}

const Input = Schema.Struct({
  pattern: Schema.String.annotations({ description: "A JavaScript regular expression, e.g. function\\s+load" }),
  path: Schema.optional(
    Schema.String.annotations({ description: "A file or folder to search. Default: the workspace." })
  ),
  glob: Schema.optional(
    Schema.String.annotations({
      description: "Only files matching this glob: *.ts matches names anywhere, src/**/*.ts paths below path."
    })
  ),
  case_insensitive: Schema.optional(Schema.Boolean.annotations({ description: "Ignore letter case." })),
  max_results: Schema.optional(integerAtLeast(1, "Stop after this many matching lines."))
})

/** `grep` (TL-1): lines matching a regular expression, as `path:line: text`, under a result cap. */
export const make = (options: GrepOptions = {}): Tool => {
  const cap = options.maxResults ?? 200
  const maxFileBytes = options.maxFileBytes ?? 5 * 1024 * 1024
  const maxLineLength = options.maxLineLength ?? 300
  return defineTool({
    name: "grep",
    description:
      "Searches file contents with a JavaScript regular expression and returns path:line: text for " +
      `each matching line (at most ${cap}). Filter files with glob; binary files and ` +
      `${[...IGNORED_DIRECTORIES].join(" and ")} are skipped.`,
    effect: "read",
    input: Input,
    run: (input, context) =>
      Effect.gen(function* () {
        const regex = yield* Effect.try({
          try: () => new RegExp(input.pattern, input.case_insensitive === true ? "i" : ""),
          catch: (error) =>
            new ToolError({ message: `Invalid regular expression: ${error instanceof Error ? error.message : error}` })
        })
        const limit = Math.min(input.max_results ?? cap, cap)
        const root = yield* resolvePath(context, input.path ?? ".")
        const stat = yield* tryFs(root.display, () => fs.stat(root.absolute))
        const filter = input.glob === undefined ? undefined : fileFilter(input.glob)
        const results: Array<string> = []
        let skippedLarge = 0
        let full = false

        const searchFile = (absolute: string, display: string, size: number): Effect.Effect<void> =>
          Effect.gen(function* () {
            if (size > maxFileBytes) {
              skippedLarge++
              return
            }
            const bytes = yield* Effect.promise(() => fs.readFile(absolute).catch(() => undefined))
            if (bytes === undefined || looksBinary(bytes.subarray(0, SNIFF_BYTES))) return
            const lines = bytes.toString("utf8").split("\n")
            for (let i = 0; i < lines.length; i++) {
              const line = lines[i]!
              if (!regex.test(line)) continue
              if (results.length >= limit) {
                full = true
                return
              }
              results.push(`${display}:${i + 1}: ${clipLine(line.replace(/\r$/, ""), maxLineLength)}`)
            }
          })

        if (stat.isFile()) {
          yield* searchFile(root.absolute, root.display, stat.size)
        } else if (stat.isDirectory()) {
          yield* walk(root.absolute, root.display, {
            includeIgnored: false,
            visit: (entry) =>
              Effect.gen(function* () {
                if (entry.kind !== "file" || (filter !== undefined && !filter(entry.relative))) return true
                const absolute = path.join(root.absolute, entry.relative)
                const size = yield* Effect.promise(() =>
                  fs.stat(absolute).then(
                    (s) => s.size,
                    () => 0
                  )
                )
                yield* searchFile(absolute, displayBelow(root, entry.relative), size)
                return !full
              })
          })
        } else {
          return yield* new ToolError({ message: `${root.display} is neither a file nor a folder` })
        }
        return textResult(render(results, { full, limit, skippedLarge, maxFileBytes, pattern: input.pattern, root }))
      })
  })
}

/** A glob without `/` matches file names anywhere (like ripgrep's `-g`); with one, paths below the root. */
const fileFilter = (glob: string): ((relative: string) => boolean) => {
  const matcher = compileGlob(glob)
  return glob.includes("/")
    ? matcher.matches
    : (relative) => matcher.matches(relative.slice(relative.lastIndexOf("/") + 1))
}

const render = (
  results: ReadonlyArray<string>,
  info: {
    readonly full: boolean
    readonly limit: number
    readonly skippedLarge: number
    readonly maxFileBytes: number
    readonly pattern: string
    readonly root: ResolvedPath
  }
): string => {
  const notes = [
    ...(info.full ? [`[stopped at ${info.limit} matching lines; narrow the pattern, path or glob]`] : []),
    ...(info.skippedLarge > 0
      ? [`[${info.skippedLarge} file(s) over ${Math.round(info.maxFileBytes / 1024 / 1024)} MiB not searched]`]
      : [])
  ]
  const where = info.root.display === "." ? "" : ` in ${info.root.display}`
  const body = results.length === 0 ? `No lines match /${info.pattern}/${where}.` : results.join("\n")
  return [body, ...notes].join("\n")
}
