// The memory plugin (PL-5): persistent memory across sessions with full-text search, written only
// against the plugin API and the SqlDatabase port.
import * as fs from "node:fs"
import * as path from "node:path"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import { SqlDatabaseError } from "@alisio/domain/SqlDatabase"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import { readConfig } from "./MemoryConfig.js"
import { memoryContext } from "./MemoryContext.js"
import { migrate } from "./MemorySchema.js"
import { lazyMemoryStore, makeMemoryStore } from "./MemoryStore.js"
import { memoryCommand, memoryTools } from "./MemoryTools.js"

/** The file under the plugin's state folder. */
export const MEMORY_FILE = "memory.db"

export const memoryPlugin = definePlugin({
  id: "memory",
  version: "0.1.0",
  description: "Persistent memory across sessions, with full-text search.",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    const config = yield* readConfig(api.id, api.config)
    // A file that exists is opened (and upgraded) at once; otherwise it is created when first
    // needed: a run that finds no memory file and saves nothing never opens one (issue 17).
    const scope = yield* Effect.scope
    const file = path.join(api.paths.state, MEMORY_FILE)
    const open = Effect.gen(function* () {
      const db = yield* api.storage.sqlite(MEMORY_FILE)
      yield* migrate(db)
      return yield* makeMemoryStore(db, { maxContentChars: config.maxContentChars })
    }).pipe(Scope.extend(scope))
    const store = yield* lazyMemoryStore(
      fs.existsSync(file) ? yield* open : undefined,
      Effect.catchTag(open, "PluginError", (error) => Effect.fail(new SqlDatabaseError({ message: error.message })))
    )
    const context = memoryContext(store, config.injectBudgetTokens)
    for (const tool of memoryTools(store, { maxContentChars: config.maxContentChars })) {
      yield* api.tools.register(tool)
    }
    yield* api.commands.register(memoryCommand(store))
    // No file (yet): no memories to add. Another process may have created one since the start.
    yield* api.context.provide((input) =>
      store.opened() || fs.existsSync(file) ? context(input) : Effect.succeed(undefined)
    )
  })
})

export default memoryPlugin
