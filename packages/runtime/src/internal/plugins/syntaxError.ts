// Where a plugin's JavaScript does not parse (PL-6). Node 20 gives an ES module's SyntaxError no
// file or line (only its uncaught-error printer knows them), so the plugin's files are checked with
// `node --check`, which prints `file:line`, the line and a caret under the column. Nothing of the
// plugin runs: `--check` only parses. Paid only when an import failed with a SyntaxError.

import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** At most this many of the plugin's own files are checked after its entry. */
const MAX_FILES = 30
const CHECK_TIMEOUT_MS = 5_000

/** `file:line`, the source line, then spaces and a caret under the column. */
const LOCATED = /^(\S.*):(\d+)\r?\n.*\r?\n([ \t]*)\^/

const located = (text: string): string | undefined => {
  const match = LOCATED.exec(text)
  if (match === null) return undefined
  const [, where, line, indent] = match
  const file = where!.startsWith("file://") ? fileURLToPath(where!) : where!
  return `${file}:${line}:${indent!.length + 1}`
}

const checkFile = (file: string): string | undefined => {
  const checked = spawnSync(process.execPath, ["--check", file], { encoding: "utf8", timeout: CHECK_TIMEOUT_MS })
  return checked.status === 0 ? undefined : located(checked.stderr ?? "")
}

/** The plugin's own script files (not its dependencies), nearest first. */
const ownFiles = (root: string, entry: string): ReadonlyArray<string> => {
  const files: Array<string> = []
  const queue = [root]
  while (queue.length > 0 && files.length < MAX_FILES) {
    const dir = queue.shift()!
    let names: Array<import("node:fs").Dirent>
    try {
      names = readdirSync(dir, { withFileTypes: true })
    } catch {
      continue
    }
    for (const item of names) {
      if (item.name.startsWith(".") || item.name === "node_modules") continue
      const full = path.join(dir, item.name)
      if (item.isDirectory()) queue.push(full)
      else if (/\.(m?js)$/.test(item.name) && full !== entry && files.length < MAX_FILES) files.push(full)
    }
  }
  return files
}

const isSyntaxError = (error: unknown): error is SyntaxError =>
  typeof error === "object" && error !== null && (error as { name?: unknown }).name === "SyntaxError"

/** A SyntaxError the plugin's code threw as it ran (`JSON.parse` at import): a frame outside Node's own. */
const thrownByCode = (stack: string): boolean =>
  stack.split("\n").some((line) => /^\s+at /.test(line) && !/\(?node:/.test(line.replace(/^\s+at (async )?/, "")))

/**
 * `syntax error at <file>:<line>:<col>: <message>` when a plugin's import failed because its
 * JavaScript does not parse, or undefined for any other failure (and when the place is not found).
 */
export const syntaxErrorMessage = (error: unknown, root: string, entry: string): string | undefined => {
  if (!isSyntaxError(error)) return undefined
  const stack = String(error.stack ?? "")
  const message = String(error.message).split("\n")[0]
  const where =
    located(stack) ??
    (thrownByCode(stack)
      ? undefined
      : (checkFile(entry) ??
        ownFiles(root, entry).reduce<string | undefined>((found, file) => found ?? checkFile(file), undefined)))
  return where === undefined ? undefined : `syntax error at ${where}: ${message}`
}
