// What the plugin adds to the system context when a run starts: the most relevant memories of the
// workspace, within a budget.
import type { ContextProvider } from "@alisio/domain/Plugin"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { age, excerpt, headline } from "./internal/format.js"
import { projectOf } from "./internal/project.js"
import type { MemoryRecord, MemoryStore } from "./MemoryStore.js"

/** The budget is given in tokens; about four characters make a token. */
export const CHARS_PER_TOKEN = 4

const HEADER =
  "Memories saved in earlier sessions (memory plugin; memory_search finds more, memory_get reads one in full):"
const CANDIDATES = 20
const ENTRY_CHARS = 400

const entry = (record: MemoryRecord, now: number): string =>
  `- #${record.id} ${headline(record)} [${record.type}, ${age(now, record.updatedAt)}]: ${excerpt(record.content, ENTRY_CHARS)}`

/**
 * The memories that match the prompt first (any of its words, ranked), then the most recent ones,
 * each on one line, as many as fit in `budgetTokens × 4` characters with the header. Nothing when
 * none fits; a failing file adds nothing rather than failing the run.
 */
export const memoryContext =
  (store: MemoryStore, budgetTokens: number): ContextProvider =>
  (input) =>
    Effect.gen(function* () {
      const budget = budgetTokens * CHARS_PER_TOKEN
      if (budget <= HEADER.length) return undefined
      const project = yield* projectOf(input.cwd)
      const relevant = yield* store.search({
        project,
        query: input.prompt,
        limit: CANDIDATES,
        match: "any",
        allProjects: false,
        snippets: false
      })
      const recent = yield* store.recent(project, CANDIDATES)
      const seen = new Set<number>()
      const now = yield* Clock.currentTimeMillis
      let text = HEADER
      for (const record of [...(relevant ?? []).map((hit) => hit.record), ...recent]) {
        if (seen.has(record.id)) continue
        seen.add(record.id)
        const line = `\n${entry(record, now)}`
        if (text.length + line.length <= budget) text += line
      }
      return text === HEADER ? undefined : text
    }).pipe(Effect.catchAll(() => Effect.succeed(undefined)))
