// The plugin's working parts, imported and made when first needed (issue 17): at setup when the
// memory file exists, otherwise at the first use of a tool, `/memory`, or a context read after
// another process created the file. The file itself is opened when it exists, else on first use.
import * as path from "node:path"
import type { PluginCommand } from "@alisio/domain/Command"
import { type ContextProvider, type PluginApiService, PluginError } from "@alisio/domain/Plugin"
import { type SqlDatabase, SqlDatabaseError } from "@alisio/domain/SqlDatabase"
import type { Tool } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Scope from "effect/Scope"
import type { MemoryConfig } from "./MemoryConfig.js"
import { memoryContext } from "./MemoryContext.js"
import { migrate } from "./MemorySchema.js"
import { lazyMemoryStore, makeMemoryStore, namingFailures } from "./MemoryStore.js"
import type { MemoryCommandSpec, MemoryToolSpecs } from "./MemoryToolSpecs.js"
import { memoryCommand, memoryTools } from "./MemoryTools.js"

/** A message ending with one full stop, whatever it ended with. */
const sentence = (message: string) => message.replace(/[.\s]*$/, ".")

/** What SQLite says of a file that is no database, or one whose pages are broken. */
const damaged = /not a database|malformed|SQLITE_(NOTADB|CORRUPT)/i

export interface MemoryParts {
  /** Whether the memory file is open. */
  readonly opened: () => boolean
  /** The tools by name. */
  readonly tools: ReadonlyMap<string, Tool>
  readonly command: PluginCommand
  readonly context: ContextProvider
}

/**
 * The parts; `openNow` opens (and upgrades) the file before returning, failing as the opening does.
 * `specs` are the tools' and the command's names, descriptions and JSON Schemas (`MemoryToolSpecs.ts`).
 */
export const makeMemoryParts = (
  api: PluginApiService,
  config: MemoryConfig,
  file: string,
  openNow: boolean,
  specs: { readonly tools: MemoryToolSpecs; readonly command: MemoryCommandSpec }
): Effect.Effect<MemoryParts, SqlDatabaseError | PluginError, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const where = path.join(api.paths.state, file)
    const damagedFile = (reason: string) =>
      new PluginError({
        pluginId: api.id,
        message: `The memory file ${where} is damaged (${reason}). Move it aside (or delete it) and a new one is started.`
      })
    // SQLite names only the symptom ("vtable constructor failed: memories_fts"): a failed opening is
    // checked, so that the file and the remedy are named whatever the symptom.
    const explain = (db: SqlDatabase, error: SqlDatabaseError) =>
      damaged.test(error.message)
        ? Effect.fail(damagedFile(error.message))
        : Effect.flatMap(
            Effect.either(Effect.flatMap(db.prepare("PRAGMA quick_check(1)"), (check) => check.get())),
            (checked) => {
              const verdict = Either.isLeft(checked)
                ? checked.left.message
                : String(Object.values((checked.right ?? {}) as Record<string, unknown>)[0] ?? "")
              return Effect.fail(
                verdict === "ok"
                  ? new PluginError({
                      pluginId: api.id,
                      message: `The memory file ${where} could not be opened: ${sentence(error.message)}`
                    })
                  : damagedFile(verdict === error.message ? verdict : `${error.message}; ${verdict}`)
              )
            }
          )
    const open = Effect.gen(function* () {
      const db = yield* api.storage
        .sqlite(file)
        .pipe(
          Effect.mapError((error) =>
            error._tag === "SqlDatabaseError" && damaged.test(error.message) ? damagedFile(error.message) : error
          )
        )
      return yield* Effect.gen(function* () {
        yield* migrate(db)
        return yield* makeMemoryStore(db, { maxContentChars: config.maxContentChars })
      }).pipe(Effect.catchTag("SqlDatabaseError", (error) => explain(db, error)))
    }).pipe(Scope.extend(scope))
    // A page found broken by a query, long after the opening, is named with the file and the remedy too.
    const named = (error: SqlDatabaseError) =>
      error.message.startsWith("The memory file ")
        ? error
        : new SqlDatabaseError({
            message: damaged.test(error.message)
              ? damagedFile(error.message).message
              : `The memory file ${where} failed: ${sentence(error.message)}`
          })
    const store = namingFailures(
      yield* lazyMemoryStore(
        openNow ? yield* open : undefined,
        Effect.catchTag(open, "PluginError", (error) => Effect.fail(new SqlDatabaseError({ message: error.message })))
      ),
      named
    )
    const command = memoryCommand(store, specs.command)
    return {
      opened: store.opened,
      tools: new Map(
        memoryTools(store, { maxContentChars: config.maxContentChars }, specs.tools).map(
          (tool) => [tool.name, tool] as const
        )
      ),
      command: {
        ...command,
        execute: (args, context) =>
          Effect.mapError(
            command.execute(args, context),
            (error) => new PluginError({ pluginId: api.id, message: (error as SqlDatabaseError).message })
          )
      },
      context: memoryContext(store, config.injectBudgetTokens)
    }
  })
