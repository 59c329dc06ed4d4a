import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { memoryPlugin } from "@alisio/plugin-memory"
import { projectIdOf } from "@alisio/plugin-memory/internal/project"
import { migrate, SCHEMA_VERSION } from "@alisio/plugin-memory/MemorySchema"
import { openSqlite } from "@alisio/runtime/PluginStorage"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { startPluginSession, tempDir } from "./support/pluginSession.js"

const openFile = (stateDir: string) => openSqlite({ folder: stateDir, path: "memory.db", pluginId: "memory" })

const userVersion = (stateDir: string) =>
  Effect.scoped(
    Effect.flatMap(openFile(stateDir), (db) =>
      Effect.flatMap(db.prepare("PRAGMA user_version"), (statement) => statement.get())
    )
  )

describe("memory plugin schema", () => {
  it.scoped("PL-5 a version 1 file is upgraded in place: its memories stay, searchable with the new index", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("memory-schema")
      const stateDir = join(root, "state")
      const project = join(root, "project")
      mkdirSync(project)
      const projectId = yield* projectIdOf(project)

      // A file as version 1 of the plugin left it.
      yield* Effect.scoped(
        Effect.gen(function* () {
          const db = yield* openFile(stateDir)
          assert.strictEqual(yield* migrate(db, { upTo: 1 }), 1)
          const insert = yield* db.prepare(
            "INSERT INTO memories (project, title, content, type, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
          )
          yield* insert.run(projectId, "Migrations", "Every migration only adds columns.", "convention", 0, 0)
          yield* insert.run("another-project", "Elsewhere", "Another project's migration notes.", "note", 0, 0)
        })
      )
      assert.deepStrictEqual(yield* userVersion(stateDir), { user_version: 1 })

      const memory = yield* startPluginSession(memoryPlugin, { stateDir })
      assert.deepStrictEqual(yield* userVersion(stateDir), { user_version: SCHEMA_VERSION })
      // Version 2 stems words: "migrations" now finds "migration".
      const found = yield* memory.callTool("memory_search", { query: "migrations" }, project)
      assert.match(found.text, /^#1 Migrations \[convention\]/)
      assert.notInclude(found.text, "Elsewhere")
      const full = yield* memory.callTool("memory_get", { id: 1 }, project)
      assert.include(full.text, "scope: project")
      // And the new columns work on old rows.
      const keyed = yield* memory.callTool("memory_save", { content: "Keyed", topic_key: "k" }, project)
      assert.match(keyed.text, /^Saved memory #3/)
      assert.match((yield* memory.callTool("memory_forget", { id: 1 }, project)).text, /^Forgot memory #1/)
    })
  )

  it.scoped("PL-5 opening an up-to-date file again changes nothing", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("memory-schema")
      const stateDir = join(root, "state")
      yield* Effect.scoped(
        Effect.flatMap(startPluginSession(memoryPlugin, { stateDir }), (memory) =>
          memory.callTool("memory_save", { content: "Kept" }, root)
        )
      )
      yield* Effect.scoped(startPluginSession(memoryPlugin, { stateDir }))
      assert.deepStrictEqual(yield* userVersion(stateDir), { user_version: SCHEMA_VERSION })
    })
  )

  it.scoped("PL-5 a session that reads and saves no memory creates no file; the first save creates it", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("memory-schema")
      const stateDir = join(root, "state")
      const memory = yield* startPluginSession(memoryPlugin, { stateDir })
      assert.strictEqual(yield* memory.contextFor(root, "anything"), "")
      assert.isFalse(existsSync(join(stateDir, "memory.db")))
      const saved = yield* memory.callTool("memory_save", { content: "First" }, root)
      assert.match(saved.text, /^Saved memory #1/)
      assert.isTrue(existsSync(join(stateDir, "memory.db")))
      assert.deepStrictEqual(yield* userVersion(stateDir), { user_version: SCHEMA_VERSION })
    })
  )

  it.scoped("PL-5 a file from a newer plugin is refused with the remedy, and left as it was", () =>
    Effect.gen(function* () {
      const stateDir = join(yield* tempDir("memory-schema"), "state")
      yield* Effect.scoped(Effect.flatMap(openFile(stateDir), (db) => db.exec("PRAGMA user_version = 99")))
      const error = yield* Effect.flip(startPluginSession(memoryPlugin, { stateDir }))
      assert.strictEqual((error as { _tag: string })._tag, "PluginError")
      assert.include((error as { message: string }).message, "schema version 99, newer than this plugin's")
      assert.deepStrictEqual(yield* userVersion(stateDir), { user_version: 99 })
    })
  )
  it.scoped(
    "PL-6 a damaged memory file fails the setup with one line naming the file and the remedy, left as it was",
    () =>
      Effect.gen(function* () {
        const stateDir = join(yield* tempDir("memory-schema"), "state")
        mkdirSync(stateDir, { recursive: true })
        const file = join(stateDir, "memory.db")
        const garbage = Buffer.alloc(4096, 0x5a)
        writeFileSync(file, garbage)
        const error = yield* Effect.flip(startPluginSession(memoryPlugin, { stateDir }))
        assert.strictEqual((error as { _tag: string })._tag, "PluginError")
        const message = (error as { message: string }).message
        assert.include(message, `The memory file ${file} is damaged (`)
        assert.include(message, "Move it aside (or delete it) and a new one is started.")
        assert.notInclude(message, "\n")
        assert.deepStrictEqual(readFileSync(file), garbage)
      })
  )

  it.scoped(
    "PL-6 a memory file with broken pages past its header fails the setup naming the file and the remedy, not the symptom alone",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir("memory-schema")
        const stateDir = join(root, "state")
        const project = join(root, "project")
        mkdirSync(project)
        yield* Effect.scoped(
          Effect.flatMap(startPluginSession(memoryPlugin, { stateDir }), (memory) =>
            memory.callTool("memory_save", { content: "Releases are cut on Fridays." }, project)
          )
        )
        const file = join(stateDir, "memory.db")
        const bytes = readFileSync(file)
        // The header page stays; every page after it is overwritten.
        bytes.fill(0xa5, 4096)
        writeFileSync(file, bytes)
        const error = yield* Effect.flip(startPluginSession(memoryPlugin, { stateDir }))
        assert.strictEqual((error as { _tag: string })._tag, "PluginError")
        const message = (error as { message: string }).message
        assert.include(message, `The memory file ${file} is damaged (`)
        assert.include(message, "Move it aside (or delete it) and a new one is started.")
        assert.notInclude(message, "\n")
        assert.deepStrictEqual(readFileSync(file), bytes)
      })
  )

  it.scoped(
    "PL-6 a page found broken by a later query is named with the file and the remedy, to the model and to /memory",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir("memory-schema")
        const stateDir = join(root, "state")
        const project = join(root, "project")
        mkdirSync(project)
        yield* Effect.scoped(
          Effect.flatMap(startPluginSession(memoryPlugin, { stateDir }), (memory) =>
            memory.callTool("memory_save", { content: "Releases are cut on Fridays." }, project)
          )
        )
        const rootPage = yield* Effect.scoped(
          Effect.flatMap(openFile(stateDir), (db) =>
            Effect.flatMap(db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'memories'"), (s) => s.get())
          )
        )
        const file = join(stateDir, "memory.db")
        const bytes = readFileSync(file)
        // The table's page breaks; the schema and the header, read when the file opens, stay.
        const page = (rootPage as { rootpage: number }).rootpage - 1
        bytes.fill(0xa5, page * 4096, (page + 1) * 4096)
        writeFileSync(file, bytes)
        const memory = yield* startPluginSession(memoryPlugin, { stateDir })
        const remedy = `The memory file ${file} is damaged (database disk image is malformed). Move it aside (or delete it) and a new one is started.`
        const saved = yield* Effect.flip(memory.callTool("memory_save", { content: "Another fact." }, project))
        assert.strictEqual(saved.message, remedy)
        const searched = yield* Effect.flip(memory.runCommand("memory", "releases", project))
        assert.strictEqual((searched as { message: string }).message, remedy)
        assert.strictEqual((searched as { _tag: string })._tag, "PluginError")
      })
  )

  it.scoped("PL-6 a memory file that is a link leading nowhere is named once, as one sentence, when first used", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("memory-schema")
      const stateDir = join(root, "state")
      const project = join(root, "project")
      mkdirSync(project)
      mkdirSync(stateDir, { recursive: true })
      const file = join(stateDir, "memory.db")
      symlinkSync(join(root, "gone.db"), file)
      const memory = yield* startPluginSession(memoryPlugin, { stateDir })
      const failed = yield* Effect.flip(memory.runCommand("memory", "releases", project))
      const message = (failed as { message: string }).message
      assert.match(message, new RegExp(`^The memory file ${file} failed: .*symbolic link.*[^.]\\.$`))
      assert.isFalse(existsSync(join(root, "gone.db")))
    })
  )
})
