// The memories themselves: saving, ranked search, reading and forgetting, over the SqlDatabase port.
import type { SqlDatabase, SqlDatabaseError, SqlValue } from "@alisio/domain/SqlDatabase"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Project } from "./internal/project.js"
import { cap, ftsQuery, queryTerms, redactPrivate, snippetOf } from "./internal/text.js"

export type MemoryScope = "project" | "personal"

export interface MemoryRecord {
  readonly id: number
  /** The project's id; `""` for a personal memory. */
  readonly project: string
  readonly title: string
  readonly content: string
  readonly type: string
  readonly scope: MemoryScope
  readonly topicKey: string | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly deletedAt: number | null
}

export interface SaveInput {
  readonly project: Project
  readonly content: string
  readonly title?: string | undefined
  readonly type?: string | undefined
  readonly scope?: MemoryScope | undefined
  readonly topicKey?: string | undefined
}

export interface SaveOutcome {
  readonly id: number
  readonly updated: boolean
  /** The content's length before it was cut to the cap, when it was. */
  readonly cutFrom: number | undefined
  readonly redacted: boolean
}

export interface SearchInput {
  readonly project: Project
  readonly query: string
  readonly limit: number
  readonly match: "all" | "any"
  readonly allProjects: boolean
  /** Whether hits carry a snippet around the matched words (default true). */
  readonly snippets?: boolean | undefined
}

export interface SearchHit {
  readonly record: MemoryRecord
  /** The blended score: higher is better. */
  readonly score: number
  /** The content around the matched words, `[marked]`; the whole content when snippets are off. */
  readonly snippet: string
}

export interface MemoryStore {
  readonly save: (input: SaveInput) => Effect.Effect<SaveOutcome, SqlDatabaseError>
  /** Ranked hits; `undefined` when the query holds no word to search for. */
  readonly search: (input: SearchInput) => Effect.Effect<ReadonlyArray<SearchHit> | undefined, SqlDatabaseError>
  /** A record visible from `project` (its own or personal), soft-deleted ones included. */
  readonly get: (project: Project, id: number) => Effect.Effect<MemoryRecord | undefined, SqlDatabaseError>
  /** A record of any project that is not forgotten: what a search of all projects may list. */
  readonly getAnyProject: (id: number) => Effect.Effect<MemoryRecord | undefined, SqlDatabaseError>
  /** Whether a visible, not yet forgotten record was forgotten. */
  readonly forget: (project: Project, id: number, hard: boolean) => Effect.Effect<boolean, SqlDatabaseError>
  readonly recent: (project: Project, limit: number) => Effect.Effect<ReadonlyArray<MemoryRecord>, SqlDatabaseError>
}

export const MAX_TITLE_CHARS = 200
export const MAX_TYPE_CHARS = 32
export const MAX_TOPIC_CHARS = 200
export const DEFAULT_TYPE = "note"

/**
 * Ranking: `score = relevance × (1 + RECENCY_BOOST × 2^(−age_days / RECENCY_HALF_LIFE_DAYS))`, where
 * `relevance = −bm25` (FTS5's BM25, title weighted 4, topic 2, content 1, type 0.5). A memory
 * updated now gets ×1.5, one a month old ×1.25, an old one ×1: relevance leads, and recency
 * orders memories that are about equally relevant. It is applied to the best
 * `max(4 × limit, 40)` matches by BM25.
 */
export const RECENCY_BOOST = 0.5
export const RECENCY_HALF_LIFE_DAYS = 30
const DAY_MS = 86_400_000

export const blendedScore = (bm25: number, ageMs: number): number =>
  -bm25 * (1 + RECENCY_BOOST * 2 ** (-Math.max(0, ageMs) / DAY_MS / RECENCY_HALF_LIFE_DAYS))

interface Row {
  readonly id: number
  readonly project: string
  readonly title: string
  readonly content: string
  readonly type: string
  readonly scope: string
  readonly topic_key: string | null
  readonly created_at: number
  readonly updated_at: number
  readonly deleted_at: number | null
}

const toRecord = (row: Row): MemoryRecord => ({
  id: row.id,
  project: row.project,
  title: row.title,
  content: row.content,
  type: row.type,
  scope: row.scope === "personal" ? "personal" : "project",
  topicKey: row.topic_key,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  deletedAt: row.deleted_at
})

const COLUMNS =
  "m.id, m.project, m.title, m.content, m.type, m.scope, m.topic_key, m.created_at, m.updated_at, m.deleted_at"
// Personal records belong to no project: they are stored with an empty one. A project is seen
// under its id and its workspace's own id (`Project.ownId`), the same one outside linked worktrees.
const VISIBLE = "(m.scope = 'personal' OR m.project IN (?, ?))"
// Ranking reads only what BM25 and recency need; the few rows shown are read afterwards (SQLite
// computes result columns for every match before sorting).
const RANK = (visible: string) =>
  `SELECT m.id AS id, m.updated_at AS updated_at, bm25(memories_fts, 4.0, 1.0, 2.0, 0.5) AS bm25
   FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
   WHERE memories_fts MATCH ? AND m.deleted_at IS NULL ${visible}
   ORDER BY bm25 LIMIT ?`

const clean = (value: string | undefined, max: number): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === "" ? undefined : trimmed.slice(0, max)
}

/** Prepares the statements once; `maxContentChars` caps what `save` keeps. */
export const makeMemoryStore = (
  db: SqlDatabase,
  options: { readonly maxContentChars: number }
): Effect.Effect<MemoryStore, SqlDatabaseError> =>
  Effect.gen(function* () {
    const insert = yield* db.prepare(
      `INSERT INTO memories (project, title, content, type, scope, topic_key, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
    )
    // A project's topic may be under either of its ids (saved in a worktree before it was mapped):
    // the row under its id first.
    const findTopic = yield* db.prepare(
      `SELECT id FROM memories WHERE scope = ? AND project IN (SELECT value FROM json_each(?)) AND topic_key = ?
       AND deleted_at IS NULL ORDER BY project = ? DESC, updated_at DESC`
    )
    const update = yield* db.prepare(
      "UPDATE memories SET title = ?, content = ?, type = ?, updated_at = ?, project = ? WHERE id = ?"
    )
    const supersede = yield* db.prepare("UPDATE memories SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL")
    const byId = yield* db.prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.id = ? AND ${VISIBLE}`)
    const byIdAnywhere = yield* db.prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.id = ?`)
    const liveByIdAnywhere = yield* db.prepare(
      `SELECT ${COLUMNS} FROM memories m WHERE m.id = ? AND m.deleted_at IS NULL`
    )
    const softDelete = yield* db.prepare(
      `UPDATE memories AS m SET deleted_at = ? WHERE m.id = ? AND m.deleted_at IS NULL AND ${VISIBLE}`
    )
    const hardDelete = yield* db.prepare(`DELETE FROM memories AS m WHERE m.id = ? AND ${VISIBLE}`)
    const rankVisible = yield* db.prepare(RANK(`AND ${VISIBLE}`))
    const rankAll = yield* db.prepare(RANK(""))
    // Walks of the (project, updated_at) index, merged: with the OR of VISIBLE, SQLite would read
    // and sort every memory. UNION, not UNION ALL: a project's two ids are usually one.
    const latestOf = (project: string) =>
      `SELECT * FROM (SELECT ${COLUMNS} FROM memories m WHERE m.deleted_at IS NULL AND m.project = ${project}
         ORDER BY m.updated_at DESC, m.id DESC LIMIT ?)`
    const recentVisible = yield* db.prepare(
      `${latestOf("?")} UNION ${latestOf("?")} UNION ${latestOf("''")} ORDER BY updated_at DESC, id DESC LIMIT ?`
    )

    const save: MemoryStore["save"] = (input) =>
      Effect.gen(function* () {
        const scope: MemoryScope = input.scope ?? "project"
        const project = scope === "personal" ? "" : input.project.id
        const privateContent = redactPrivate(input.content)
        const privateTitle = redactPrivate(input.title ?? "")
        const content = cap(privateContent.text, options.maxContentChars)
        const title = clean(privateTitle.text, MAX_TITLE_CHARS) ?? ""
        const type = clean(input.type?.toLowerCase(), MAX_TYPE_CHARS) ?? DEFAULT_TYPE
        const topicKey = clean(input.topicKey, MAX_TOPIC_CHARS)
        const now = yield* Clock.currentTimeMillis
        const outcome = (id: number, updated: boolean): SaveOutcome => ({
          id,
          updated,
          cutFrom: content.cut ? privateContent.text.length : undefined,
          redacted: privateContent.redacted || privateTitle.redacted
        })
        return yield* db.transaction(
          Effect.gen(function* () {
            if (topicKey !== undefined) {
              const projects =
                scope === "personal" ? [""] : [project, input.project.ownId, ...(input.project.linkedIds ?? [])]
              const [existing, ...older] = (yield* findTopic.all(
                scope,
                JSON.stringify(projects),
                topicKey,
                project
              )) as ReadonlyArray<{ readonly id: number }>
              if (existing !== undefined) {
                yield* update.run(title, content.text, type, now, project, existing.id)
                for (const stale of older) yield* supersede.run(now, stale.id)
                return outcome(existing.id, true)
              }
            }
            const inserted = yield* insert.run(project, title, content.text, type, scope, topicKey ?? null, now, now)
            return outcome(Number(inserted.lastInsertRowid), false)
          })
        )
      })

    const search: MemoryStore["search"] = (input) =>
      Effect.gen(function* () {
        const match = ftsQuery(input.query, input.match)
        if (match === undefined) return undefined
        const candidates = Math.max(4 * input.limit, 40)
        const params: ReadonlyArray<SqlValue> = input.allProjects
          ? [match, candidates]
          : [match, input.project.id, input.project.ownId, candidates]
        const ranked = (yield* (input.allProjects ? rankAll : rankVisible).all(...params)) as ReadonlyArray<{
          readonly id: number
          readonly updated_at: number
          readonly bm25: number
        }>
        const now = yield* Clock.currentTimeMillis
        const best = ranked
          .map((row) => ({ ...row, score: blendedScore(row.bm25, now - row.updated_at) }))
          .sort((a, b) => b.score - a.score || b.updated_at - a.updated_at || b.id - a.id)
          .slice(0, input.limit)
        const terms = input.snippets === false ? undefined : queryTerms(input.query)
        return yield* Effect.forEach(best, ({ id, score }) =>
          Effect.map(byIdAnywhere.get(id), (row) => {
            const record = toRecord(row as Row)
            return { record, score, snippet: terms === undefined ? record.content : snippetOf(record.content, terms) }
          })
        )
      })

    const get: MemoryStore["get"] = (project, id) =>
      Effect.map(byId.get(id, project.id, project.ownId), (row) =>
        row === undefined ? undefined : toRecord(row as Row)
      )

    const getAnyProject: MemoryStore["getAnyProject"] = (id) =>
      Effect.map(liveByIdAnywhere.get(id), (row) => (row === undefined ? undefined : toRecord(row as Row)))

    const forget: MemoryStore["forget"] = (project, id, hard) =>
      Effect.gen(function* () {
        const result = hard
          ? yield* hardDelete.run(id, project.id, project.ownId)
          : yield* softDelete.run(yield* Clock.currentTimeMillis, id, project.id, project.ownId)
        return result.changes > 0
      })

    const recent: MemoryStore["recent"] = (project, limit) =>
      Effect.map(recentVisible.all(project.id, limit, project.ownId, limit, limit, limit), (rows) =>
        (rows as ReadonlyArray<Row>).map(toRecord)
      )

    return { save, search, get, getAnyProject, forget, recent }
  })

/**
 * `initial`, else a store that opens its file on first use, once (a failed opening is tried again
 * on the next use). `opened` tells whether it is open.
 */
export const lazyMemoryStore = (
  initial: MemoryStore | undefined,
  open: Effect.Effect<MemoryStore, SqlDatabaseError>
): Effect.Effect<MemoryStore & { readonly opened: () => boolean }> =>
  Effect.map(Effect.makeSemaphore(1), (lock) => {
    let store = initial
    const ready = Effect.suspend(() =>
      store !== undefined
        ? Effect.succeed(store)
        : lock.withPermits(1)(
            Effect.suspend(() =>
              store !== undefined
                ? Effect.succeed(store)
                : Effect.tap(open, (made) => {
                    store = made
                  })
            )
          )
    )
    return {
      opened: () => store !== undefined,
      save: (input) => Effect.flatMap(ready, (s) => s.save(input)),
      search: (input) => Effect.flatMap(ready, (s) => s.search(input)),
      get: (project, id) => Effect.flatMap(ready, (s) => s.get(project, id)),
      getAnyProject: (id) => Effect.flatMap(ready, (s) => s.getAnyProject(id)),
      forget: (project, id, hard) => Effect.flatMap(ready, (s) => s.forget(project, id, hard)),
      recent: (project, limit) => Effect.flatMap(ready, (s) => s.recent(project, limit))
    }
  })

/** `store` with every failure told as `name` tells it (the file and the remedy). */
export const namingFailures = <S extends MemoryStore>(
  store: S,
  name: (error: SqlDatabaseError) => SqlDatabaseError
): S => ({
  ...store,
  save: (input) => Effect.mapError(store.save(input), name),
  search: (input) => Effect.mapError(store.search(input), name),
  get: (project, id) => Effect.mapError(store.get(project, id), name),
  getAnyProject: (id) => Effect.mapError(store.getAnyProject(id), name),
  forget: (project, id, hard) => Effect.mapError(store.forget(project, id, hard), name),
  recent: (project, limit) => Effect.mapError(store.recent(project, limit), name)
})
