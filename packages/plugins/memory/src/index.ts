// The memory plugin (PL-5): persistent memory across sessions with full-text search, written only
// against the plugin API and the SqlDatabase port. What every run needs is here: the tools as the
// model sees them and `/memory` as the catalog lists it; the store, the tools' handlers and the
// context (`MemoryParts.ts`) are imported when there is a memory file or on first use (issue 17).
import * as fs from "node:fs"
import * as path from "node:path"
import { deferredTools, onFirstUse } from "@alisio/domain/OnFirstUse"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import { readSettings } from "./internal/settings.js"
import type { MemoryParts } from "./MemoryParts.js"
import { memoryCommandSpec, memoryToolSpecs } from "./MemoryToolSpecs.js"

/** The file under the plugin's state folder. */
export const MEMORY_FILE = "memory.db"

export const memoryPlugin = definePlugin({
  id: "memory",
  version: "0.1.0",
  description: "Persistent memory across sessions, with full-text search.",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    const { config, warnings } = yield* readSettings(api.id, api.config, api.configSource)
    for (const warning of warnings) yield* api.ui.notify(warning, { level: "warning" })
    // A file that exists is opened (and upgraded) at once; otherwise it is created when first
    // needed: a run that finds no memory file and saves nothing never opens one (issue 17).
    const file = path.join(api.paths.state, MEMORY_FILE)
    const exists = fs.existsSync(file)
    let made: MemoryParts | undefined
    const parts = yield* onFirstUse(
      Effect.flatMap(
        Effect.promise(() => import("./MemoryParts.js")),
        (module) =>
          Effect.tap(
            module.makeMemoryParts(api, config, MEMORY_FILE, exists, {
              tools: memoryToolSpecs,
              command: memoryCommandSpec
            }),
            (parts) => {
              made = parts
            }
          )
      ),
      yield* Effect.scope
    )
    if (exists) yield* parts
    for (const tool of deferredTools(Object.values(memoryToolSpecs), parts)) yield* api.tools.register(tool)
    yield* api.commands.register({
      ...memoryCommandSpec,
      execute: (args, context) => Effect.flatMap(parts, (ready) => ready.command.execute(args, context))
    })
    // No file (yet): no memories to add. Another process may have created one since the start.
    yield* api.context.provide((input) =>
      made?.opened() === true || fs.existsSync(file)
        ? Effect.flatMap(parts, (ready) => ready.context(input)).pipe(Effect.orElseSucceed(() => undefined))
        : Effect.succeed(undefined)
    )
  })
})

export default memoryPlugin
