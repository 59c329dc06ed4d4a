import * as fs from "node:fs/promises"
import * as path from "node:path"
import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { IGNORED_DIRECTORIES, type WalkEntry, walk } from "./internal/walk.js"
import { listed, resolvePath, tryFs } from "./internal/workspace.js"

export interface LsOptions {
  /** Most entries listed by one call (default 500). */
  readonly maxEntries?: number
}

const Input = Schema.Struct({
  path: Schema.optional(
    Schema.String.annotations({
      description: "The folder, relative to the workspace (or absolute). Default: the workspace."
    })
  ),
  recursive: Schema.optional(Schema.Boolean.annotations({ description: "List the whole tree below the folder." })),
  include_ignored: Schema.optional(
    Schema.Boolean.annotations({ description: `Also enter ${[...IGNORED_DIRECTORIES].join(" and ")} folders.` })
  )
})

/** `ls` (TL-1): a folder's entries, or its tree; folders end with `/`, symlinks show their target. */
export const make = (options: LsOptions = {}): Tool => {
  const maxEntries = options.maxEntries ?? 500
  return defineTool({
    name: "ls",
    description:
      "Lists a folder: folders end with /, symlinks show -> target. With recursive, lists the tree " +
      `(without entering ${[...IGNORED_DIRECTORIES].join(" or ")} unless include_ignored). ` +
      `At most ${maxEntries} entries.`,
    effect: "read",
    input: Input,
    run: (input, context) =>
      Effect.gen(function* () {
        const target = yield* resolvePath(context, input.path ?? ".")
        const stat = yield* tryFs(target.display, () => fs.stat(target.real))
        if (!stat.isDirectory()) {
          return yield* new ToolError({ message: `${target.display} is not a folder; use read for files` })
        }
        const recursive = input.recursive === true
        const lines: Array<string> = []
        const notEntered: Array<string> = []
        let more = false
        const describe = (entry: WalkEntry) =>
          entry.kind === "directory"
            ? Effect.succeed(`${listed(entry.relative)}/`)
            : entry.kind === "symlink"
              ? Effect.promise(() =>
                  fs.readlink(path.join(target.real, entry.relative)).then(
                    (to) => `${listed(entry.relative)} -> ${listed(to)}`,
                    () => listed(entry.relative)
                  )
                )
              : Effect.succeed(listed(entry.relative))
        yield* walk(target.real, target.display, {
          includeIgnored: input.include_ignored === true,
          descend: () => recursive,
          visit: (entry) =>
            Effect.gen(function* () {
              if (lines.length >= maxEntries) {
                more = true
                return false
              }
              lines.push(yield* describe(entry))
              if (recursive && entry.ignored) notEntered.push(`${listed(entry.relative)}/`)
              return true
            })
        })
        if (lines.length === 0) return textResult(`${target.display} is empty.`)
        // A flat folder has no subfolder to list instead: say how much is left, and how to reach it.
        const total =
          more && !recursive ? yield* Effect.option(tryFs(target.display, () => fs.readdir(target.real))) : undefined
        const stoppedNote =
          total === undefined || total._tag === "None"
            ? `[stopped at ${maxEntries} entries; list a subfolder, or find files with glob, to see more]`
            : `[${maxEntries} of ${total.value.length} entries shown, sorted by name; ` +
              "find the others with glob and a pattern for this folder]"
        const notes = [
          ...(more ? [stoppedNote] : []),
          ...(notEntered.length > 0
            ? [`[not entered: ${notEntered.join(", ")}; set include_ignored to list them]`]
            : [])
        ]
        return textResult([`${target.display}/`, ...lines.map((line) => `  ${line}`), ...notes].join("\n"))
      })
  })
}
