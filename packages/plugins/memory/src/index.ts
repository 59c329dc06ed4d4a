// The memory plugin (PL-5): persistent memory across sessions with full-text search, written only
// against the plugin API and the SqlDatabase port.
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import { readConfig } from "./MemoryConfig.js"
import { memoryContext } from "./MemoryContext.js"
import { migrate } from "./MemorySchema.js"
import { makeMemoryStore } from "./MemoryStore.js"
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
    const db = yield* api.storage.sqlite(MEMORY_FILE)
    yield* migrate(db)
    const store = yield* makeMemoryStore(db, { maxContentChars: config.maxContentChars })
    for (const tool of memoryTools(store, { maxContentChars: config.maxContentChars })) {
      yield* api.tools.register(tool)
    }
    yield* api.commands.register(memoryCommand(store))
    yield* api.context.provide(memoryContext(store, config.injectBudgetTokens))
  })
})

export default memoryPlugin
