import * as fs from "node:fs/promises"
import * as path from "node:path"
import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { clipLine } from "./internal/files.js"
import { globMatcher } from "./internal/glob.js"
import { integerAtLeast } from "./internal/schema.js"
import { makeSearchPool } from "./internal/searchWorker.js"
import { IGNORED_DIRECTORIES, walk } from "./internal/walk.js"
import { displayBelow, listed, type ResolvedPath, resolvePath, tryFs } from "./internal/workspace.js"

export interface GrepOptions {
  /** Most matching lines returned by one call (default 200; the model may ask for fewer). */
  readonly maxResults?: number
  /** Larger files are passed over (default 5 MiB). */
  readonly maxFileBytes?: number
  /** Matching lines are cut at this length (default 300). */
  readonly maxLineLength?: number
  /** A search still running after this long is stopped (default 60 s). */
  readonly timeoutMs?: number
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

// Files go to the search thread, which reads them, in batches: a round trip costs about as much
// as reading a few files.
const BATCH_FILES = 256

/**
 * `grep` (TL-1): lines matching a regular expression, as `path:line: text`, under a result cap.
 * The matching runs on a worker thread (TL-6): JavaScript's regular expressions backtrack, and a
 * pattern like `^(a+)+$` would otherwise block the process for ever. Interrupting the call (Ctrl-C,
 * the run's timeout) or its own timeout terminates that thread.
 */
export const make = (options: GrepOptions = {}): Tool => {
  const cap = options.maxResults ?? 200
  const maxFileBytes = options.maxFileBytes ?? 5 * 1024 * 1024
  const maxLineLength = options.maxLineLength ?? 300
  const timeoutMs = options.timeoutMs ?? 60_000
  const pool = makeSearchPool()
  return defineTool({
    name: "grep",
    description:
      "Searches file contents with a JavaScript regular expression and returns path:line: text for " +
      `each matching line (at most ${cap}). Filter files with glob; binary files and ` +
      `${[...IGNORED_DIRECTORIES].join(" and ")} are skipped.`,
    effect: "read",
    input: Input,
    run: (input, context) => {
      // Files searched so far: a timeout says how far it got, telling a large tree from a bad pattern.
      let searched = 0
      return Effect.gen(function* () {
        const flags = input.case_insensitive === true ? "i" : ""
        yield* Effect.try({
          try: () => new RegExp(input.pattern, flags),
          // V8's message already reads "Invalid regular expression: /a(b/: Unterminated group".
          catch: (error) =>
            new ToolError({
              message:
                `${error instanceof Error ? error.message : `Invalid regular expression: ${error}`} ` +
                (/^\(\?[a-zA-Z]+\)/.test(input.pattern)
                  ? "(inline flags such as (?i) are not JavaScript: leave them out and set case_insensitive)"
                  : "(the pattern is a JavaScript regular expression; escape ( [ { . * + ? \\ | ^ $ to match them literally)")
            })
        })
        const limit = Math.min(input.max_results ?? cap, cap)
        const root = yield* resolvePath(context, input.path ?? ".")
        const stat = yield* tryFs(root.display, () => fs.stat(root.real))
        const filter = input.glob === undefined ? undefined : yield* fileFilter(input.glob)
        const search = yield* pool.session
        const results: Array<string> = []
        let skippedLarge = 0
        let full = false
        let pending: Array<readonly [absolute: string, display: string]> = []

        const flush = Effect.gen(function* () {
          const batch = pending
          pending = []
          if (batch.length === 0 || full) return
          const reply = yield* search.run({
            pattern: input.pattern,
            flags,
            files: batch.map(([absolute]) => absolute),
            remaining: limit - results.length,
            maxLineLength,
            maxFileBytes
          })
          for (const [file, line, head, length] of reply.matches) {
            results.push(`${listed(batch[file]![1])}:${line}: ${clipLine(head, maxLineLength, length)}`)
          }
          // Files too large count only up to the file where the search stopped, as a walk would.
          skippedLarge += reply.tooLarge
          full = reply.full
          searched += reply.full ? reply.stoppedAt + 1 : batch.length
        })

        const searchFile = (absolute: string, display: string): Effect.Effect<void, ToolError> => {
          pending.push([absolute, display])
          return pending.length >= BATCH_FILES ? flush : Effect.void
        }

        if (stat.isFile()) {
          yield* searchFile(root.real, root.display)
        } else if (stat.isDirectory()) {
          yield* walk(root.real, root.display, {
            includeIgnored: false,
            visit: (entry) =>
              Effect.gen(function* () {
                if (entry.kind !== "file" || (filter !== undefined && !filter(entry.relative))) return true
                yield* searchFile(path.join(root.real, entry.relative), displayBelow(root, entry.relative))
                return !full
              })
          })
        } else {
          return yield* new ToolError({ message: `${root.display} is neither a file nor a folder` })
        }
        yield* flush
        return textResult(render(results, { full, limit, skippedLarge, maxFileBytes, pattern: input.pattern, root }))
      }).pipe(
        Effect.scoped,
        Effect.timeoutFail({
          duration: Duration.millis(timeoutMs),
          onTimeout: () =>
            new ToolError({
              message:
                `grep stopped after ${Math.round(timeoutMs / 1000)} s without finishing, ${searched} file${searched === 1 ? "" : "s"} ` +
                "searched: the pattern may backtrack catastrophically (nested quantifiers such as (a+)+), or the tree " +
                "is very large; simplify the pattern or narrow path or glob"
            })
        })
      )
    }
  })
}

/** A glob without `/` matches file names anywhere (like ripgrep's `-g`); with one, paths below the root. */
const fileFilter = (glob: string): Effect.Effect<(relative: string) => boolean, ToolError> =>
  Effect.map(globMatcher(glob), (matcher) =>
    glob.includes("/")
      ? matcher.matches
      : (relative: string) => matcher.matches(relative.slice(relative.lastIndexOf("/") + 1))
  )

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
  // POSIX classes read as plain sets in JavaScript: [[:digit:]] is one of [:digt followed by ].
  const hint = info.pattern.includes("[[:")
    ? " (POSIX classes such as [[:alpha:]] are not JavaScript: use [A-Za-z], \\d, \\s or \\w)"
    : ""
  const body = results.length === 0 ? `No lines match /${info.pattern}/${where}.${hint}` : results.join("\n")
  return [body, ...notes].join("\n")
}
