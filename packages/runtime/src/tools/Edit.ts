import { isUtf8 } from "node:buffer"
import * as fs from "node:fs/promises"
import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { withFileLock } from "./internal/fileLocks.js"
import {
  checkWritable,
  clipLine,
  formatBytes,
  lineAt,
  looksBinary,
  notUtf8,
  statExisting,
  utf16Advice,
  writeWorkspaceFile
} from "./internal/files.js"
import { resolvePath, tryFs } from "./internal/workspace.js"

const Input = Schema.Struct({
  path: Schema.String.annotations({ description: "The file, relative to the workspace (or absolute)." }),
  old_string: Schema.String.annotations({
    description: "The exact text to replace, whitespace included; it must occur exactly once unless replace_all."
  }),
  new_string: Schema.String.annotations({ description: "The text to put in its place." }),
  replace_all: Schema.optional(
    Schema.Boolean.annotations({ description: "Replace every occurrence instead of requiring exactly one." })
  )
})

export interface EditOptions {
  /** Larger files are refused (default 16 MiB): edit holds the whole file, twice, while it works. */
  readonly maxFileBytes?: number
}

/** `edit` (TL-1): an exact replacement that must match once (or every match with `replace_all`). */
export const make = (options: EditOptions = {}): Tool => {
  const maxFileBytes = options.maxFileBytes ?? 16 * 1024 * 1024
  return defineTool({
    name: "edit",
    description:
      "Replaces exact text in a file. old_string must match the file exactly (indentation and " +
      "line breaks included, without the line numbers read shows) and occur exactly once; add surrounding " +
      "lines to make it unique, or set replace_all.",
    effect: "write",
    input: Input,
    run: (input, context) =>
      Effect.gen(function* () {
        if (input.old_string.length === 0) {
          return yield* new ToolError({ message: "old_string is empty; use write to create or replace a whole file" })
        }
        if (input.old_string === input.new_string) {
          return yield* new ToolError({ message: "old_string and new_string are the same; there is nothing to change" })
        }
        const target = yield* resolvePath(context, input.path)
        // Read, changed and written as one step: another edit of this file in the same response waits.
        return yield* withFileLock(target.real)(
          Effect.gen(function* () {
            const stat = yield* statExisting(target, "edit changes existing files: write creates it through the link")
            if (stat.isDirectory()) {
              return yield* new ToolError({ message: `${target.display} is a directory; edit changes files` })
            }
            // Reading a pipe would wait for a writer, and a device like /dev/zero never ends.
            if (!stat.isFile()) {
              return yield* new ToolError({
                message: `${target.display} is not a regular file (a device, pipe or socket); edit changes text files only`
              })
            }
            if (stat.size > maxFileBytes) {
              return yield* new ToolError({
                message:
                  `${target.display} is too large to edit (${formatBytes(stat.size)}, more than ${formatBytes(maxFileBytes)}); ` +
                  "change it with bash (sed, a script) instead"
              })
            }
            yield* checkWritable(target.real, target.display, stat.mode, "edit")
            const bytes = yield* tryFs(target.display, () => fs.readFile(target.real))
            if (looksBinary(bytes)) {
              return yield* new ToolError({
                message:
                  utf16Advice(bytes, target.display) ??
                  `${target.display} is a binary file; edit changes text files only`
              })
            }
            const text = bytes.toString("utf8")
            if (!isUtf8(bytes)) {
              // Decoding replaced its other bytes with U+FFFD: writing the text back would change them.
              return yield* new ToolError({
                message:
                  `${notUtf8(target.display, lineAt(text, text.indexOf("\uFFFD")))}, and edit would change them; ` +
                  "change it with bash (sed, iconv) instead"
              })
            }
            let oldString = input.old_string
            let newString = input.new_string
            let offsets = occurrences(text, oldString)
            if (
              offsets.length === 0 &&
              text.includes("\r\n") &&
              oldString.includes("\n") &&
              !oldString.includes("\r")
            ) {
              // The model writes \n; a file with Windows line ends keeps them.
              oldString = oldString.replace(/\n/g, "\r\n")
              newString = newString.replace(/\r?\n/g, "\r\n")
              offsets = occurrences(text, oldString)
            }
            if (offsets.length === 0) {
              return yield* new ToolError({ message: notFoundMessage(target.display, text, input.old_string) })
            }
            if (offsets.length > 1 && input.replace_all !== true) {
              const lines = offsets
                .slice(0, 10)
                .map((offset) => lineAt(text, offset))
                .join(", ")
              return yield* new ToolError({
                message:
                  `old_string occurs ${offsets.length} times in ${target.display} (lines ${lines}` +
                  `${offsets.length > 10 ? ", …" : ""}); include more surrounding lines to make it unique, ` +
                  "or set replace_all to replace every occurrence"
              })
            }
            let updated = ""
            let from = 0
            for (const offset of offsets) {
              updated += text.slice(from, offset) + newString
              from = offset + oldString.length
            }
            updated += text.slice(from)
            yield* writeWorkspaceFile(target.real, target.display, updated, stat)
            const firstLine = lineAt(text, offsets[0]!)
            return textResult(
              offsets.length === 1
                ? `Replaced 1 occurrence in ${target.display} (line ${firstLine}).`
                : `Replaced ${offsets.length} occurrences in ${target.display}.`
            )
          })
        )
      })
  })
}

/** Start offsets of the non-overlapping occurrences of `needle`. */
const occurrences = (text: string, needle: string): Array<number> => {
  const found: Array<number> = []
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) found.push(i)
  return found
}

/** Says why nothing matched, pointing at the closest line when one is close enough. */
const notFoundMessage = (display: string, text: string, oldString: string): string => {
  const base = `old_string was not found in ${display}`
  if (/^\s*\d+\t/.test(oldString)) {
    return `${base}; it seems to start with a line number from read: leave the numbers and the tab out`
  }
  const probe = oldString
    .split("\n")
    .map((line) => line.trim())
    .find((line) => line.length > 0)
  const closest = probe === undefined ? undefined : closestLine(text, probe)
  const hint =
    closest === undefined
      ? ""
      : closest.exact
        ? `; line ${closest.line} matches its first line when spacing is ignored, ` +
          "so the indentation, the spacing or the lines after it differ"
        : `; the closest line is ${closest.line}: ${JSON.stringify(clipLine(closest.text.trim(), 120))}`
  return `${base}${hint}. Read the file again and copy the text exactly.`
}

const MAX_LINES_COMPARED = 20_000

const closestLine = (
  text: string,
  probe: string
): { readonly line: number; readonly text: string; readonly exact: boolean } | undefined => {
  const lines = text.split("\n").slice(0, MAX_LINES_COMPARED)
  const probeGrams = bigrams(probe)
  let best: { line: number; text: string; exact: boolean; score: number } | undefined
  // Dice similarity is at most 2·short/(short+long), under 0.6 once a line is 2.34 times longer than
  // the probe: such lines are not scored, so a file of huge lines costs no more than its size.
  const longest = Math.ceil(probe.length * 2.34) + 2
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const trimmed = line.trim()
    if (trimmed.length === 0) continue
    if (trimmed === probe || squeeze(trimmed) === squeeze(probe)) return { line: i + 1, text: line, exact: true }
    if (trimmed.length > longest) continue
    const score = dice(probeGrams, bigrams(trimmed))
    if (score >= 0.6 && (best === undefined || score > best.score)) {
      best = { line: i + 1, text: line, exact: false, score }
    }
  }
  return best
}

const squeeze = (text: string): string => text.replace(/\s+/g, "")

const bigrams = (text: string): Map<string, number> => {
  const grams = new Map<string, number>()
  for (let i = 0; i < text.length - 1; i++) {
    const gram = text.slice(i, i + 2)
    grams.set(gram, (grams.get(gram) ?? 0) + 1)
  }
  return grams
}

/** Sørensen–Dice similarity of two bigram multisets, from 0 to 1. */
const dice = (a: Map<string, number>, b: Map<string, number>): number => {
  let total = 0
  let shared = 0
  for (const count of a.values()) total += count
  for (const [gram, count] of b) {
    total += count
    shared += Math.min(count, a.get(gram) ?? 0)
  }
  return total === 0 ? 0 : (2 * shared) / total
}
