// The memory tools the model calls, and the `/memory` command people type.

import type { PluginCommand } from "@alisio/domain/Command"
import { ToolError } from "@alisio/domain/Errors"
import type { SqlDatabaseError } from "@alisio/domain/SqlDatabase"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { hitLine, recordLine, recordText } from "./internal/format.js"
import { projectOf } from "./internal/project.js"
import { MAX_TOPIC_CHARS, type MemoryStore } from "./MemoryStore.js"
import type { MemoryCommandSpec, MemoryToolSpecs } from "./MemoryToolSpecs.js"

export const DEFAULT_SEARCH_LIMIT = 10
export const MAX_SEARCH_LIMIT = 50

const toolError = (error: SqlDatabaseError) =>
  new ToolError({
    message: error.message.startsWith("The memory file ") ? error.message : `The memory file failed: ${error.message}`
  })

const MemoryId = Schema.Int.pipe(Schema.positive()).annotations({ description: "A memory's id, as in #12." })

/** The Schemas the tools decode their arguments with, by tool name (`MemoryToolSpecs.ts` holds their JSON Schemas). */
export const memoryToolInputs = (options: { readonly maxContentChars: number }) => ({
  memory_save: Schema.Struct({
    title: Schema.optional(Schema.String).annotations({ description: "A short title." }),
    content: Schema.String.pipe(Schema.filter((text) => text.trim() !== "" || "is empty")).annotations({
      description: `What to remember (at most ${options.maxContentChars} characters are kept).`
    }),
    type: Schema.optional(Schema.String).annotations({
      description: "A kind such as decision, convention, bug, preference; note by default."
    }),
    scope: Schema.optional(Schema.Literal("project", "personal")).annotations({
      description: "project (default): only this workspace sees it; personal: every workspace does."
    }),
    topic_key: Schema.optional(Schema.String).annotations({
      description: "A stable key such as auth/session-format; a later save with the same key replaces this memory."
    })
  }),
  memory_search: Schema.Struct({
    query: Schema.String.annotations({ description: "Words to look for." }),
    limit: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_SEARCH_LIMIT))).annotations({
      description: `At most this many results (${DEFAULT_SEARCH_LIMIT} by default).`
    }),
    match: Schema.optional(Schema.Literal("all", "any")).annotations({
      description: "all (default): every word must appear; any: at least one."
    }),
    all_projects: Schema.optional(Schema.Boolean).annotations({
      description: "Also search other workspaces' memories (listed as another workspace; memory_get reads them)."
    })
  }),
  memory_get: Schema.Struct({ id: MemoryId }),
  memory_forget: Schema.Struct({
    id: MemoryId,
    hard: Schema.optional(Schema.Boolean).annotations({ description: "Delete for good (default: hide it)." })
  })
})

/** The tools; `specs` (`MemoryToolSpecs.ts`) are their names, descriptions and JSON Schemas. */
export const memoryTools = (
  store: MemoryStore,
  options: { readonly maxContentChars: number },
  specs: MemoryToolSpecs
): ReadonlyArray<Tool> => {
  const inputs = memoryToolInputs(options)
  return [
    defineTool({
      ...specs.memory_save,
      effect: "internal",
      input: inputs.memory_save,
      run: (input, context) =>
        Effect.gen(function* () {
          // A key cut to fit would make two keys one, and the later save would replace the other memory.
          const topicKey = input.topic_key?.trim() ?? ""
          if (topicKey.length > MAX_TOPIC_CHARS) {
            return textResult(
              `Nothing was saved: the topic_key is ${topicKey.length} characters, over the ${MAX_TOPIC_CHARS} a key may have. Save again with a shorter topic_key.`,
              { isError: true }
            )
          }
          const outcome = yield* store.save({
            project: yield* projectOf(context.cwd),
            content: input.content,
            title: input.title,
            type: input.type,
            scope: input.scope,
            topicKey: input.topic_key
          })
          const scope = input.scope ?? "project"
          return textResult(
            [
              outcome.updated
                ? `Updated memory #${outcome.id} (${scope}, topic_key ${JSON.stringify(input.topic_key?.trim())}).`
                : `Saved memory #${outcome.id} (${scope}).`,
              ...(outcome.cutFrom === undefined
                ? []
                : [
                    `The content was cut to ${options.maxContentChars} of its ${outcome.cutFrom} characters; save the rest as another memory if it matters.`
                  ]),
              ...(outcome.redacted ? ["Private spans were stored as [private]."] : [])
            ].join(" ")
          )
        }).pipe(Effect.mapError(toolError))
    }),
    defineTool({
      ...specs.memory_search,
      effect: "internal",
      input: inputs.memory_search,
      run: (input, context) =>
        Effect.gen(function* () {
          const match = input.match ?? "all"
          const project = yield* projectOf(context.cwd)
          const hits = yield* store.search({
            project,
            query: input.query,
            limit: input.limit ?? DEFAULT_SEARCH_LIMIT,
            match,
            allProjects: input.all_projects ?? false
          })
          if (hits === undefined) return textResult("The query holds no word to search for.")
          if (hits.length === 0) {
            return textResult(
              match === "all"
                ? "No memory matches all of these words. Try fewer words, or match: any."
                : "No memory matches these words."
            )
          }
          const now = yield* Clock.currentTimeMillis
          return textResult(hits.map((hit) => hitLine(hit, now, project)).join("\n"))
        }).pipe(Effect.mapError(toolError))
    }),
    defineTool({
      ...specs.memory_get,
      effect: "internal",
      input: inputs.memory_get,
      run: (input, context) =>
        Effect.gen(function* () {
          const project = yield* projectOf(context.cwd)
          // Another workspace's memory is what a search of all projects lists: it may be read.
          const record = (yield* store.get(project, input.id)) ?? (yield* store.getAnyProject(input.id))
          if (record === undefined) return textResult(`No memory #${input.id}.`, { isError: true })
          return textResult(recordText(record, yield* Clock.currentTimeMillis, project))
        }).pipe(Effect.mapError(toolError))
    }),
    defineTool({
      ...specs.memory_forget,
      effect: "internal",
      input: inputs.memory_forget,
      run: (input, context) =>
        Effect.gen(function* () {
          const hard = input.hard ?? false
          const done = yield* store.forget(yield* projectOf(context.cwd), input.id, hard)
          if (!done) return textResult(`No memory #${input.id} to forget in this workspace.`, { isError: true })
          return textResult(hard ? `Deleted memory #${input.id} for good.` : `Forgot memory #${input.id}.`)
        }).pipe(Effect.mapError(toolError))
    })
  ]
}

const USAGE = "Usage: /memory <words> searches memories; /memory forget <id> forgets one."

/** `/memory <query>`, `/memory forget <id>`; without arguments, the usage and the latest memories. `spec`: its name and description. */
export const memoryCommand = (store: MemoryStore, spec: MemoryCommandSpec): PluginCommand => ({
  ...spec,
  execute: (args, context) =>
    Effect.gen(function* () {
      const project = yield* projectOf(context.cwd ?? process.cwd())
      const now = yield* Clock.currentTimeMillis
      const text = args.trim()
      const forget = /^forget(?:\s+(.*))?$/i.exec(text)
      if (forget !== null) {
        const idText = (forget[1] ?? "").trim().replace(/^#/, "")
        if (!/^\d+$/.test(idText)) return `Give the id of the memory to forget, e.g. /memory forget 12. ${USAGE}`
        const id = Number(idText)
        // An id past the integers SQLite and JavaScript share names no memory (and prints as 1e+21).
        return Number.isSafeInteger(id) && (yield* store.forget(project, id, false))
          ? `Forgot memory #${id}.`
          : `No memory #${idText} to forget in this workspace.`
      }
      if (text === "") {
        const latest = yield* store.recent(project, DEFAULT_SEARCH_LIMIT)
        return [
          USAGE,
          ...(latest.length === 0 ? ["No memories yet."] : latest.map((record) => recordLine(record, now)))
        ].join("\n")
      }
      const hits = yield* store.search({
        project,
        query: text,
        limit: DEFAULT_SEARCH_LIMIT,
        match: "all",
        allProjects: false
      })
      if (hits === undefined) return `Nothing to search for in ${JSON.stringify(text)}. ${USAGE}`
      if (hits.length === 0) return `No memory matches ${JSON.stringify(text)}.`
      return hits.map((hit) => hitLine(hit, now)).join("\n")
    })
})
