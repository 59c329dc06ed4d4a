import * as fs from "node:fs/promises"
import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { withFileLock } from "./internal/fileLocks.js"
import { checkWritable, countLines, formatBytes, writeWorkspaceFile } from "./internal/files.js"
import { newNameSlip, resolvePath } from "./internal/workspace.js"

const Input = Schema.Struct({
  path: Schema.String.annotations({ description: "The file, relative to the workspace (or absolute)." }),
  content: Schema.String.annotations({ description: "The whole new content of the file." })
})

/** `write` (TL-1): replaces or creates a file, with its parent folders, atomically (in place when hard-linked). */
export const make = (): Tool =>
  defineTool({
    name: "write",
    description:
      "Writes a whole file, creating it and its parent folders when missing, or replacing it. " +
      "To change part of an existing file, prefer edit.",
    effect: "write",
    input: Input,
    run: (input, context) =>
      Effect.gen(function* () {
        if (/[\\/]$/.test(input.path)) {
          return yield* new ToolError({ message: `${input.path} names a folder; give a file path` })
        }
        const target = yield* resolvePath(context, input.path)
        // Not between another call's read and write of this file (see withFileLock).
        return yield* withFileLock(target.real)(
          Effect.gen(function* () {
            const existing = yield* Effect.promise(() =>
              fs.stat(target.real).then(
                (stat) => stat,
                () => undefined
              )
            )
            if (existing?.isDirectory() === true) {
              return yield* new ToolError({ message: `${target.display} is a directory; give a file path` })
            }
            // The rename that makes the write atomic would put a file in place of a device, pipe or socket.
            if (existing !== undefined && !existing.isFile()) {
              return yield* new ToolError({
                message: `${target.display} is not a regular file (a device, pipe or socket); write replaces files only`
              })
            }
            const slip = existing === undefined ? yield* newNameSlip(target.absolute, target.display) : undefined
            if (slip !== undefined) return yield* new ToolError({ message: slip })
            if (existing !== undefined) yield* checkWritable(target.real, target.display, existing.mode, "write")
            // Writing through the real path keeps a symlink pointing at the file it names.
            yield* writeWorkspaceFile(target.real, target.display, input.content, existing)
            const lines = countLines(input.content)
            const size = `${lines} line${lines === 1 ? "" : "s"}, ${formatBytes(Buffer.byteLength(input.content))}`
            return textResult(`${existing === undefined ? "Created" : "Wrote"} ${target.display} (${size}).`)
          })
        )
      })
  })
