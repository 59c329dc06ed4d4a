// Prompt templates: Markdown files whose text becomes the user's prompt (`/review src/x.ts`), with
// optional front matter (`description`, `argument-hint`) as Claude Code's `.claude/commands/` and
// Codex's prompts are written. A file in a sub-folder is named with `:` (`frontend/test.md` is
// `/frontend:test`).

import * as fs from "node:fs/promises"
import * as path from "node:path"
import { commandNamePattern } from "@alisio/domain/Command"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { entries, isInside, linksOutside, readPrefix, realFile } from "../context/files.js"
import { type FileDiagnostic, firstLine, parseFrontMatter, textField } from "../context/frontMatter.js"

export interface TemplateRoot {
  readonly folder: string
  readonly scope: "user" | "project"
  /** A project's folder: its files must stay in this folder, links resolved (the person's own may link anywhere). */
  readonly within?: string | undefined
}

export interface Template {
  readonly name: string
  readonly description: string
  readonly argumentHint: string | undefined
  readonly file: string
  readonly scope: "user" | "project"
  /** A project's template: read only while it stays in this folder. */
  readonly within?: string | undefined
}

/** Why a project's file that links out of it is not read. */
export const linkedOut = (target: string, within: string) =>
  `it links to ${target}, outside the project (${within}), so it is not read`

/** Sub-folders deeper than this are not looked into (`a/b/c/x.md` is `/a:b:c:x`; `a/b/c/d/` is not read). */
const MAX_DEPTH = 3
/** A template's text is read up to this size. */
const TEMPLATE_BYTES = 256 * 1024
/** Longer descriptions and argument hints are cut: they are one line of a listing or a menu. */
const DESCRIPTION_CHARS = 1024
const HINT_CHARS = 100

/** A front matter field as one line of at most `max` characters. */
const oneLine = (text: string | undefined, max: number): string | undefined => {
  if (text === undefined) return undefined
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** Why a read file cannot be sent as a prompt (NUL bytes, or past the size read), if it cannot. */
const unusable = (read: { readonly size: number; readonly whole: boolean; readonly binary: boolean }) =>
  read.binary
    ? "it holds NUL bytes, so it is not text"
    : read.whole
      ? undefined
      : `it is ${(read.size / 1024).toFixed(0)} KiB, over the ${TEMPLATE_BYTES / 1024} KiB a template may hold (keep long text in a file the template names)`

/**
 * A folder's or file's time is coarse (a clock tick of the kernel): one changed within this of when
 * it was looked at may change again unseen within the same tick, so it is looked into again next time.
 */
const SETTLE_MS = 1_000

/** How a folder or file last changed: `undefined` absent; `NaN` just now, so not settled (equal to none). */
export type Stamp = string | number | undefined

/** When each folder or file last changed, and a file's size, in the order given. */
export const pathStamps = (paths: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Stamp>> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.forEach(paths, (file) =>
      Effect.promise(() =>
        fs.stat(file).then(
          (stat): Stamp => (Math.abs(now - stat.mtimeMs) < SETTLE_MS ? Number.NaN : `${stat.mtimeMs}:${stat.size}`),
          () => undefined
        )
      )
    )
  )

/**
 * The `.md` files of a root, as [name parts, file], sorted. A folder that links back to one it is
 * inside (`loop -> ..`) is not read again: it would only repeat the same files under longer names.
 */
const markdownFiles = (
  root: TemplateRoot,
  folder: string,
  depth: number,
  prefix: ReadonlyArray<string>,
  visited: Array<readonly [string, Stamp]>,
  refused: Array<FileDiagnostic>,
  inside: ReadonlySet<string> = new Set()
): Effect.Effect<ReadonlyArray<readonly [ReadonlyArray<string>, string]>> =>
  Effect.gen(function* () {
    // Stamped before it is read: a file added meanwhile shows as a change next time.
    visited.push([folder, (yield* pathStamps([folder]))[0]])
    const resolved = yield* realFile(folder)
    const real = resolved ?? folder
    if (inside.has(real)) return []
    if (root.within !== undefined && resolved !== undefined && !isInside(resolved, root.within)) {
      refused.push({ file: folder, message: linkedOut(real, root.within) })
      return []
    }
    const within = new Set([...inside, real])
    const found = yield* Effect.forEach(yield* entries(folder), (entry) => {
      if (entry.name.startsWith(".")) return Effect.succeed([])
      const full = path.join(folder, entry.name)
      if (entry.folder) {
        return depth <= MAX_DEPTH
          ? markdownFiles(root, full, depth + 1, [...prefix, entry.name], visited, refused, within)
          : Effect.succeed([])
      }
      return Effect.succeed(
        entry.name.toLowerCase().endsWith(".md") ? [[[...prefix, entry.name.slice(0, -3)], full] as const] : []
      )
    })
    return found.flat()
  })

/** Where a project's template links to, outside its project; `undefined` for the person's own and those inside. */
const outsideOf = (template: { readonly file: string; readonly within?: string | undefined }) =>
  template.within === undefined ? Effect.succeed(undefined) : linksOutside(template.file, template.within)

const readTemplate = (root: TemplateRoot, parts: ReadonlyArray<string>, file: string) =>
  Effect.gen(function* () {
    const diagnostics: Array<FileDiagnostic> = []
    const report = (message: string) => diagnostics.push({ file, message })
    const name = parts.join(":").toLowerCase()
    const outside = yield* outsideOf({ file, within: root.within })
    if (outside !== undefined && root.within !== undefined) {
      report(`${linkedOut(outside, root.within)}; running /${name} fails`)
      const template: Template = {
        name,
        description: `(not read: it links outside the project, to ${outside})`,
        argumentHint: undefined,
        file,
        scope: root.scope,
        within: root.within
      }
      return commandNamePattern.test(name) ? { template, diagnostics } : { template: undefined, diagnostics }
    }
    const read = yield* readPrefix(file, TEMPLATE_BYTES)
    if (read === undefined) return { template: undefined, diagnostics }
    if (!commandNamePattern.test(name)) {
      report(`"${name}" is not a command name (lower-case letters, digits, "-", "_"); the template is skipped`)
      return { template: undefined, diagnostics }
    }
    const problem = unusable(read)
    if (problem !== undefined) report(`${problem}; running it fails`)
    const matter = parseFrontMatter(read.text)
    for (const problem of matter.problems) report(`${problem} (the template is still used)`)
    const description = textField(matter, "description", (m) =>
      report(`${m}; it is ignored (the template is still used)`)
    )
    const argumentHint = textField(matter, "argument-hint", (m) =>
      report(`${m}; it is ignored (the template is still used)`)
    )
    const template: Template = {
      name,
      description: oneLine(description, DESCRIPTION_CHARS) ?? firstLine(matter.body),
      argumentHint: oneLine(argumentHint, HINT_CHARS),
      file,
      scope: root.scope,
      within: root.within
    }
    return { template, diagnostics }
  })

/**
 * Every template of the roots, in root order (a name found again later is for the catalog to
 * shadow), and the folders and files read with when each last changed: a template added, removed or
 * renamed changes its folder's time, one edited its own time or size (`pathStamps`).
 */
export const discoverTemplates = (
  roots: ReadonlyArray<TemplateRoot>
): Effect.Effect<{
  readonly templates: ReadonlyArray<Template>
  readonly diagnostics: ReadonlyArray<FileDiagnostic>
  readonly paths: ReadonlyArray<string>
  readonly stamps: ReadonlyArray<Stamp>
}> =>
  Effect.gen(function* () {
    const visited: Array<readonly [string, Stamp]> = []
    const refused: Array<FileDiagnostic> = []
    // Stamped before it is read: an edit meanwhile shows as a change next time.
    const read = (root: TemplateRoot, parts: ReadonlyArray<string>, file: string) =>
      Effect.flatMap(pathStamps([file]), ([stamp]) => {
        visited.push([file, stamp])
        return readTemplate(root, parts, file)
      })
    const perRoot = yield* Effect.forEach(
      roots,
      (root) =>
        Effect.flatMap(markdownFiles(root, root.folder, 1, [], visited, refused), (files) =>
          Effect.forEach(files, ([parts, file]) => read(root, parts, file), { concurrency: 8 })
        ),
      { concurrency: "unbounded" }
    )
    const results = perRoot.flat()
    return {
      templates: results.flatMap((result) => (result.template === undefined ? [] : [result.template])),
      diagnostics: [...refused, ...results.flatMap((result) => result.diagnostics)],
      paths: visited.map(([file]) => file),
      stamps: visited.map(([, stamp]) => stamp)
    }
  })

/** Splits arguments into words; double or single quotes keep spaces inside one word. */
export const splitArguments = (args: string): ReadonlyArray<string> => {
  const words: Array<string> = []
  for (const match of args.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3]!)
  return words
}

/**
 * The text of a template with its arguments: `$ARGUMENTS` is all of them, `$1`…`$9` one word
 * each (empty when missing). A text with neither gets the arguments after it, as
 * `ARGUMENTS: …` (what Claude Code does). With `positional: false` (skills) only `$ARGUMENTS` is
 * replaced: a skill's instructions are written for the model and often hold shell (`awk '{print $1}'`).
 */
export const expandTemplate = (body: string, args: string, options: { readonly positional?: boolean } = {}): string => {
  const text = body.trim()
  const words = splitArguments(args)
  const placeholder = options.positional === false ? /\$ARGUMENTS/g : /\$(ARGUMENTS|[1-9])/g
  if (!placeholder.test(text)) {
    if (args === "") return text
    return text === "" ? args : `${text}\n\nARGUMENTS: ${args}`
  }
  return text.replace(placeholder, (match) =>
    match === "$ARGUMENTS" ? args : (words[Number(match.slice(1)) - 1] ?? "")
  )
}

/**
 * A template's expanded text, read now (it may have changed since it was listed), or why it cannot
 * be sent: unreadable, not text, too long, or nothing to send.
 */
export const templatePrompt = (
  template: Template,
  args: string
): Effect.Effect<{ readonly prompt: string } | { readonly problem: string }> =>
  Effect.gen(function* () {
    const outside = yield* outsideOf(template)
    if (outside !== undefined && template.within !== undefined) {
      return {
        problem: `${template.file} was not sent: ${linkedOut(outside, template.within)}. Copy the file into the project, or keep it in <config>/prompts.`
      }
    }
    const read = yield* readPrefix(template.file, TEMPLATE_BYTES)
    if (read === undefined) return { problem: `${template.file} could not be read.` }
    const problem = unusable(read)
    if (problem !== undefined) return { problem: `${template.file} was not sent: ${problem}.` }
    const prompt = expandTemplate(parseFrontMatter(read.text).body, args)
    return prompt.trim() === ""
      ? {
          problem: `${template.file} has no text to send after its front matter; write the prompt in it, or give /${template.name} arguments.`
        }
      : { prompt }
  })
