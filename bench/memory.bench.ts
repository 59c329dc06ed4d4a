// Memory plugin (PL-5): search over 10 000 memories (goal < 5 ms a search), next to a floor
// measured in the same run: the bare FTS5 query (BM25 order, same candidates) with better-sqlite3
// on the same file.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { memoryPlugin } from "@alisio/plugin-memory"
import { projectOf } from "@alisio/plugin-memory/internal/project"
import { ftsQuery } from "@alisio/plugin-memory/internal/text"
import { migrate } from "@alisio/plugin-memory/MemorySchema"
import { makeMemoryStore } from "@alisio/plugin-memory/MemoryStore"
import { openSqlite } from "@alisio/runtime/PluginStorage"
import * as Effect from "effect/Effect"
import { startPluginSession } from "../packages/plugins/memory/test/support/pluginSession.js"
import { median, row } from "./measure.js"

interface BareStatement {
  all(...params: ReadonlyArray<unknown>): Array<unknown>
}
interface BareDatabase {
  prepare(source: string): BareStatement
  close(): void
}
const Sqlite = createRequire(import.meta.url)("better-sqlite3") as new (filename: string) => BareDatabase

const RECORDS = 10_000
const PROJECTS = 5
const VOCABULARY = 3000
const SEARCHES = 300
const LIMIT = 10

// A deterministic word soup with a Zipf-like spread: a few common words, many rare ones.
let seed = 42
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
  return seed / 2 ** 31
}
const words = Array.from({ length: VOCABULARY }, (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`)
const word = () => words[Math.floor(VOCABULARY * random() ** 2.5)]!
const sentence = (length: number) => Array.from({ length }, word).join(" ")

const percentile = (values: ReadonlyArray<number>, p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!

const bench = Effect.gen(function* () {
  const dir = mkdtempSync(join(tmpdir(), "alisio-bench-memory-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
  const workspaces = Array.from({ length: PROJECTS }, (_, i) => join(dir, `project-${i}`))
  for (const workspace of workspaces) mkdirSync(workspace)
  const stateDir = join(dir, "state")

  const db = yield* Effect.orDie(openSqlite({ folder: stateDir, path: "memory.db", pluginId: "memory" }))
  yield* Effect.orDie(migrate(db))
  const store = yield* Effect.orDie(makeMemoryStore(db, { maxContentChars: 4000 }))
  const memory = yield* Effect.orDie(startPluginSession(memoryPlugin, { stateDir }))
  const projects = yield* Effect.forEach(workspaces, projectOf)

  let start = performance.now()
  yield* Effect.orDie(
    db.transaction(
      Effect.forEach(
        Array.from({ length: RECORDS }, (_, i) => i),
        (i) =>
          store.save({
            project: projects[i % PROJECTS]!,
            title: sentence(4),
            content: sentence(40 + (i % 60)),
            type: i % 3 === 0 ? "decision" : "note",
            scope: i % 50 === 0 ? "personal" : "project"
          }),
        { discard: true }
      )
    )
  )
  row(`save ×${RECORDS / 1000}k in one transaction, per record`, ((performance.now() - start) * 1000) / RECORDS, "µs")
  // As the file is after any ordinary session: the WAL folded into the database.
  yield* Effect.orDie(db.exec("PRAGMA wal_checkpoint(TRUNCATE)"))

  const queries = Array.from({ length: SEARCHES }, (_, i) => sentence(1 + (i % 3)))
  const bare = new Sqlite(join(stateDir, "memory.db"))
  yield* Effect.addFinalizer(() => Effect.sync(() => bare.close()))
  const floorQuery = bare.prepare(
    "SELECT rowid, bm25(memories_fts, 4.0, 1.0, 2.0, 0.5) AS rank FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?"
  )

  for (const match of ["all", "any"] as const) {
    const floor: Array<number> = []
    const searches: Array<number> = []
    let hits = 0
    // Interleaved, so that drift (page cache, JIT) hits both alike.
    for (const [i, query] of queries.entries()) {
      start = performance.now()
      floorQuery.all(ftsQuery(query, match), Math.max(4 * LIMIT, 40))
      floor.push(performance.now() - start)
      start = performance.now()
      const found = yield* Effect.orDie(
        store.search({ project: projects[i % PROJECTS]!, query, limit: LIMIT, match, allProjects: false })
      )
      searches.push(performance.now() - start)
      hits += found?.length ?? 0
    }
    const floorMs = median(floor)
    row(`bare FTS5 query, match ${match} (floor), median`, floorMs * 1000, "µs")
    row(`MemoryStore.search, match ${match}, median`, median(searches) * 1000, "µs", floorMs * 1000)
    row(
      `MemoryStore.search, match ${match}, p95`,
      percentile(searches, 0.95) * 1000,
      "µs",
      percentile(floor, 0.95) * 1000
    )
    row(`  (results per search, match ${match})`, hits / SEARCHES, "hits")
  }

  // The whole tool call the model makes: argument decoding, the workspace's id, ranking, text.
  const toolTimes: Array<number> = []
  for (const [i, query] of queries.entries()) {
    start = performance.now()
    yield* Effect.orDie(memory.callTool("memory_search", { query }, workspaces[i % PROJECTS]!))
    toolTimes.push(performance.now() - start)
  }
  row("memory_search tool call, median", median(toolTimes) * 1000, "µs")

  const contextTimes: Array<number> = []
  for (const [i, query] of queries.slice(0, 100).entries()) {
    start = performance.now()
    yield* memory.contextFor(workspaces[i % PROJECTS]!, `please look at ${query}`)
    contextTimes.push(performance.now() - start)
  }
  row("context at session start (800 tokens), median", median(contextTimes) * 1000, "µs")
})

export const run = (): Promise<void> => Effect.runPromise(Effect.scoped(bench))
