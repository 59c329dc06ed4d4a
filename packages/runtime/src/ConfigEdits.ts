import { readFile, realpath } from "node:fs/promises"
import { ConfigError } from "@alisio/domain/Errors"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as YAML from "yaml"
import { parse } from "./Config.js"
import { writeFileAtomic } from "./internal/atomicFile.js"
import { errorDetail } from "./internal/errno.js"
import { yaml } from "./internal/yaml.js"

const readText = (file: string) =>
  Effect.tryPromise({
    try: () => readFile(file, "utf8"),
    catch: (error) => error as NodeJS.ErrnoException
  }).pipe(
    // No file (or no folder) yet: the edit creates it.
    Effect.catchIf(
      (error) => error.code === "ENOENT" || error.code === "ENOTDIR",
      () => Effect.succeed("")
    ),
    Effect.mapError((error) => new ConfigError({ message: `${file}: cannot be read (${errorDetail(error)})`, file }))
  )

/**
 * Edits a configuration file through its YAML document, keeping the rest of it (comments, order,
 * layout) as written. A file that does not parse is left alone: the error names it. A symbolic
 * link is followed, so a config kept in a dotfiles repository stays there. The file is replaced
 * atomically, private (0600).
 */
export const editDocument = (file: string, edit: (doc: YAML.Document) => void): Effect.Effect<void, ConfigError> =>
  Effect.gen(function* () {
    const target = yield* Effect.promise(() => realpath(file).catch(() => file))
    const text = yield* readText(target)
    const current = parse(text, file)
    if (Either.isLeft(current)) {
      return yield* new ConfigError({
        message: `${current.left.message} (fix it, then try again)`,
        file
      })
    }
    const doc = yaml().parseDocument(text)
    edit(doc)
    const updated = doc.toString()
    const check = parse(updated, file)
    if (Either.isLeft(check)) return yield* Effect.die(check.left)
    yield* writeFileAtomic(target, updated).pipe(
      Effect.mapError(
        ({ cause }) => new ConfigError({ message: `Could not write ${file}: ${errorDetail(cause)}`, file })
      )
    )
  })

/** Sets one top-level key of a configuration file (see `editDocument`). */
export const setKey = (file: string, key: string, value: unknown): Effect.Effect<void, ConfigError> =>
  editDocument(file, (doc) => doc.set(key, value))

/** Sets a nested key (`["mcpServers", "github"]`), creating the mappings on the way. */
export const setIn = (file: string, path: ReadonlyArray<string>, value: unknown): Effect.Effect<void, ConfigError> =>
  editDocument(file, (doc) => doc.setIn(path, doc.createNode(value)))

/** Removes a nested key; a mapping it leaves empty goes too. */
export const deleteIn = (file: string, path: ReadonlyArray<string>): Effect.Effect<void, ConfigError> =>
  editDocument(file, (doc) => {
    doc.deleteIn(path)
    for (let depth = path.length - 1; depth > 0; depth--) {
      const parent = doc.getIn(path.slice(0, depth), true)
      if (yaml().isMap(parent) && parent.items.length === 0) doc.deleteIn(path.slice(0, depth))
    }
  })

/** Makes `model` ("provider/model") the default of later runs: `defaultModel` in `file`. */
export const setDefaultModel = (file: string, model: string): Effect.Effect<void, ConfigError> =>
  setKey(file, "defaultModel", model)
