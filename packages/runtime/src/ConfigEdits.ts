import { readFile, readlink, realpath, stat } from "node:fs/promises"
import { ConfigError } from "@alisio/domain/Errors"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as YAML from "yaml"
import { MAX_FILE_BYTES, parse } from "./Config.js"
import { writeFileAtomic } from "./internal/atomicFile.js"
import { lockForEdit, writeFailure } from "./internal/configLock.js"
import { errorDetail } from "./internal/errno.js"
import { yaml } from "./internal/yaml.js"
import { sourceOf, spliced } from "./internal/yamlSplice.js"

/**
 * The text of the file an edit is about to replace (`target`, the real path of `file`): none yet
 * when nothing is there. Refused: a link that leads nowhere (the edit would replace the link), a
 * device, pipe or folder (a `config.yaml -> /dev/null` would be replaced, as root, by a file) and a
 * file too large to be a configuration; none of them is changed.
 */
const readText = (file: string, target: string) =>
  Effect.gen(function* () {
    const fail = (message: string) => new ConfigError({ message, file })
    const info = yield* Effect.tryPromise({
      try: () =>
        stat(target).catch((error: NodeJS.ErrnoException) => {
          // No file (or no folder) yet: the edit creates it.
          if (error.code === "ENOENT" || error.code === "ENOTDIR") return undefined
          throw error
        }),
      catch: (error) => fail(`${file}: cannot be read (${errorDetail(error)})`)
    })
    if (info === undefined) {
      const link = yield* Effect.promise(() => readlink(file).catch(() => undefined))
      if (link !== undefined) {
        return yield* fail(
          `${file} is a symbolic link to ${link}, which does not exist; create that file, or remove the link, then try again`
        )
      }
      return ""
    }
    if (!info.isFile()) {
      const leads = target === file ? "" : ` (it leads to ${target})`
      return yield* fail(
        `${file} is not a regular file${leads}; a configuration file must be one, so it is left as it is`
      )
    }
    if (info.size > MAX_FILE_BYTES) {
      return yield* fail(
        `${file}: ${(info.size / 1024 / 1024).toFixed(1)} MiB is too large for a configuration file (at most 1 MiB); is it the right file?`
      )
    }
    return yield* Effect.tryPromise({
      try: () => readFile(target, "utf8"),
      catch: (error) => fail(`${file}: cannot be read (${errorDetail(error)})`)
    })
  })

/** No settings: an empty file, comments only, or a mapping whose last key an edit removed. */
const isEmpty = (node: unknown): boolean => node === null || (yaml().isMap(node) && node.items.length === 0)

/** The file's own comments alone: what is left of it once its last setting is removed (not `{}`). */
const commentsOf = (doc: YAML.Document): string =>
  [doc.commentBefore, doc.comment]
    .filter((comment) => typeof comment === "string" && comment !== "")
    .map(
      (comment) =>
        `${comment!
          .split("\n")
          .map((line) => `#${line}`)
          .join("\n")}\n`
    )
    .join("\n")

/** The edited text with the original's byte-order mark and CRLF line ends, which the YAML library drops. */
const keepEncoding = (original: string, updated: string): string => {
  const lines = original.includes("\r\n") ? updated.replace(/\r?\n/g, "\r\n") : updated
  return original.startsWith("\uFEFF") && !lines.startsWith("\uFEFF") ? `\uFEFF${lines}` : lines
}

export interface EditOptions {
  /** The edit writes a secret (an API key, a token): the file is made private (0600) even if it was not. */
  readonly secret?: boolean
}

/**
 * Edits a configuration file through its YAML document, keeping the rest of it (comments, order,
 * layout, flow style) as written: the settings the edit did not change keep their bytes. A file that does not parse is left alone: the error names it. A symbolic
 * link is followed, so a config kept in a dotfiles repository stays there. A read-only file is
 * refused. The file is replaced atomically under `<file>.lock`, so concurrent edits all land; a
 * byte-order mark and CRLF line ends are kept. An existing file keeps its mode (CFG-1: a 0644 file
 * a person chose stays 0644), unless the edit writes a `secret` (a key, a token): then, as a new
 * file always, it is private (0600).
 */
export const editDocument = <A>(
  file: string,
  edit: (doc: YAML.Document) => A,
  options: EditOptions = {}
): Effect.Effect<A, ConfigError> =>
  Effect.gen(function* () {
    const target = yield* Effect.promise(() => realpath(file).catch(() => file))
    // What is there is checked before the lock is made beside it (not beside /dev/null).
    yield* readText(file, target)
    const mode = yield* Effect.promise(() =>
      stat(target).then(
        (found) => found.mode & 0o777,
        () => undefined
      )
    )
    if (mode !== undefined && (mode & 0o200) === 0) {
      return yield* new ConfigError({
        message: `${file} is read-only (mode 0${mode.toString(8)}); it is left as it is: make it writable first (chmod u+w ${file}) if it is meant to change`,
        file
      })
    }
    // From the read to the rename, so a concurrent edit (another shell, the UI) is not lost.
    yield* lockForEdit(target, file)
    const text = yield* readText(file, target)
    const current = parse(text, file)
    if (Either.isLeft(current)) {
      return yield* new ConfigError({
        message: `${current.left.message} (fix it, then try again)`,
        file
      })
    }
    const doc = yaml().parseDocument(text)
    const source = sourceOf(text, doc)
    const result = edit(doc)
    const written = isEmpty(doc.contents)
      ? commentsOf(doc)
      : ((source === undefined ? undefined : spliced(source, doc)) ?? doc.toString())
    const updated = keepEncoding(text, written)
    if (updated === text) return result
    // An edit that would make the file invalid (a value of the wrong kind) is refused, the file untouched.
    const check = parse(updated, file)
    if (Either.isLeft(check)) {
      // Its positions are those of the edited text, which is not written: the problems alone.
      const problems = check.left.message.split("\n").map((line) => line.replace(/^.*?:\d+:\d+: /, ""))
      return yield* new ConfigError({ message: `${problems.join("; ")} (${file} is unchanged)`, file })
    }
    const kind = mode === undefined || options.secret === true ? "private" : "workspace"
    yield* writeFileAtomic(target, updated, kind).pipe(Effect.mapError(({ cause }) => writeFailure(file, cause)))
    return result
  }).pipe(Effect.scoped)

/** Sets one top-level key of a configuration file (see `editDocument`). */
export const setKey = (
  file: string,
  key: string,
  value: unknown,
  options: EditOptions = {}
): Effect.Effect<void, ConfigError> => editDocument(file, (doc) => doc.set(key, value), options)

/** Sets a nested key (`["mcpServers", "github"]`), creating the mappings on the way. */
export const setIn = (
  file: string,
  path: ReadonlyArray<string>,
  value: unknown,
  options: EditOptions = {}
): Effect.Effect<void, ConfigError> => editDocument(file, (doc) => doc.setIn(path, doc.createNode(value)), options)

/** Removes a nested key, and a mapping it leaves empty; whether the key was there. */
export const deleteIn = (file: string, path: ReadonlyArray<string>): Effect.Effect<boolean, ConfigError> =>
  editDocument(file, (doc) => {
    if (!doc.hasIn(path)) return false
    doc.deleteIn(path)
    for (let depth = path.length - 1; depth > 0; depth--) {
      const parent = doc.getIn(path.slice(0, depth), true)
      if (yaml().isMap(parent) && parent.items.length === 0) doc.deleteIn(path.slice(0, depth))
    }
    return true
  })

/**
 * A value typed on a command line, as YAML reads it (`5` a number, `true` a boolean, `[a, b]` a
 * list, `"5"` a string); text YAML cannot read, or reads with a warning, is taken as it is.
 */
export const valueFromText = (text: string): unknown => {
  try {
    const doc = yaml().parseDocument(text)
    return doc.errors.length > 0 || doc.warnings.length > 0 ? text : doc.toJS()
  } catch {
    return text
  }
}

/** Makes `model` ("provider/model") the default of later runs: `defaultModel` in `file`. */
export const setDefaultModel = (file: string, model: string): Effect.Effect<void, ConfigError> =>
  setKey(file, "defaultModel", model)

/** The source an entry of `plugins` names: the entry itself, or its `source`. */
const entrySource = (item: unknown): unknown => {
  const value = yaml().isNode(item) ? item.toJSON() : item
  return typeof value === "object" && value !== null ? (value as { readonly source?: unknown }).source : value
}

/** Deletes a top-level key; the comment above it stays, above what follows it (or at the end). */
const deleteKeepingComment = (doc: YAML.Document, key: string) => {
  const map = doc.contents
  if (yaml().isMap(map)) {
    const index = map.items.findIndex((pair) => yaml().isScalar(pair.key) && pair.key.value === key)
    const above = index < 0 ? undefined : (map.items[index]!.key as { commentBefore?: string | null }).commentBefore
    if (typeof above === "string" && above !== "") {
      const next = map.items[index + 1]?.key as { commentBefore?: string | null } | undefined
      const join = (first: string, second: string | null | undefined) =>
        second === undefined || second === null || second === "" ? first : `${first}\n${second}`
      if (next !== undefined && yaml().isNode(next)) next.commentBefore = join(above, next.commentBefore)
      else doc.comment = join(doc.comment ?? "", above).replace(/^\n/, "")
    }
  }
  doc.delete(key)
}

/** Adds `source` to the `plugins` list (creating it); false when an entry already names it. */
export const addPlugin = (file: string, source: string): Effect.Effect<boolean, ConfigError> =>
  editDocument(file, (doc) => {
    const list = doc.get("plugins", true)
    if (yaml().isSeq(list)) {
      if (list.items.some((item) => entrySource(item) === source)) return false
      list.add(doc.createNode(source))
    } else {
      // Absent or empty: any other value fails the check of the file before the edit runs.
      doc.set("plugins", doc.createNode([source]))
    }
    return true
  })

/**
 * Removes every entry of the `plugins` list naming `source` (or whose source `source` accepts), and
 * a list left empty; whether there was one.
 */
export const removePlugin = (
  file: string,
  source: string | ((entry: string) => boolean)
): Effect.Effect<boolean, ConfigError> =>
  editDocument(file, (doc) => {
    const list = doc.get("plugins", true)
    if (!yaml().isSeq(list)) return false
    const names = typeof source === "string" ? (entry: string) => entry === source : source
    const kept = list.items.filter((item) => {
      const entry = entrySource(item)
      return typeof entry !== "string" || !names(entry)
    })
    if (kept.length === list.items.length) return false
    if (kept.length === 0) deleteKeepingComment(doc, "plugins")
    else list.items = kept
    return true
  })

/** Fails as an edit of `file` would (it does not load, or cannot be read), and changes nothing. */
export const checkEditable = (file: string): Effect.Effect<void, ConfigError> => editDocument(file, () => undefined)
