import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { memoryPlugin } from "@alisio/plugin-memory"
import { openSqlite } from "@alisio/runtime/PluginStorage"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { type PluginSession, startPluginSession, tempDir } from "./support/pluginSession.js"

/** A state folder and two workspaces, all real folders. */
const setting = Effect.gen(function* () {
  const root = yield* tempDir("memory")
  const projectA = join(root, "project-a")
  const projectB = join(root, "project-b")
  mkdirSync(projectA)
  mkdirSync(projectB)
  return { stateDir: join(root, "state"), projectA, projectB }
})

const session = (stateDir: string, config?: unknown) => startPluginSession(memoryPlugin, { stateDir, config })

const call = (memory: PluginSession, name: string, args: unknown, cwd: string) =>
  Effect.map(memory.callTool(name, args, cwd), (outcome) => outcome.text)

const save = (memory: PluginSession, cwd: string, args: Record<string, unknown>) =>
  Effect.map(call(memory, "memory_save", args, cwd), (text) => {
    const id = /#(\d+)/.exec(text)
    assert.isNotNull(id, text)
    return { id: Number(id![1]), text }
  })

/** The ids a search lists, in rank order. */
const searchIds = (memory: PluginSession, cwd: string, args: Record<string, unknown>) =>
  Effect.map(call(memory, "memory_search", args, cwd), (text) =>
    [...text.matchAll(/^#(\d+)/gm)].map((match) => Number(match[1]))
  )

/** Rows of the memory file, read through the port as another opener would. */
const rows = (stateDir: string, sql: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const db = yield* openSqlite({ folder: stateDir, path: "memory.db", pluginId: "inspect" })
      return yield* Effect.flatMap(db.prepare(sql), (statement) => statement.all())
    })
  )

describe("memory plugin", () => {
  it.scoped("PL-5 registers its tools (internal), the /memory command and a context provider", () =>
    Effect.gen(function* () {
      const { stateDir } = yield* setting
      const memory = yield* session(stateDir)
      assert.deepStrictEqual(
        [...memory.tools.values()].map((tool) => [tool.name, tool.effect]),
        [
          ["memory_save", "internal"],
          ["memory_search", "internal"],
          ["memory_get", "internal"],
          ["memory_forget", "internal"]
        ]
      )
      assert.deepStrictEqual([...memory.commands.keys()], ["memory"])
      assert.strictEqual(memory.contextProviders.length, 1)
    })
  )

  it.scoped("PL-5 a memory saved in one session is found by a later one over the same file", () =>
    Effect.gen(function* () {
      const { stateDir, projectA } = yield* setting
      const saved = yield* Effect.scoped(
        Effect.flatMap(session(stateDir), (first) =>
          save(first, projectA, {
            title: "Test database",
            content: "The integration tests run against SQLite in a temp folder, never a shared server.",
            type: "Convention"
          })
        )
      )
      assert.match(saved.text, /^Saved memory #1 \(project\)\.$/)

      const second = yield* session(stateDir)
      const found = yield* call(second, "memory_search", { query: "integration tests sqlite" }, projectA)
      assert.match(found, /^#1 Test database \[convention\] just now: .*\[SQLite\]/)
      const full = yield* call(second, "memory_get", { id: 1 }, projectA)
      assert.include(full, "The integration tests run against SQLite in a temp folder")
      assert.include(full, "type: convention · scope: project")
    })
  )

  it.scoped("PL-5 ranking: a clearly better match wins over a newer weak one; recency orders equal matches", () =>
    Effect.gen(function* () {
      const { stateDir, projectA } = yield* setting
      const memory = yield* session(stateDir)
      const strong = yield* save(memory, projectA, {
        title: "Deploy checklist",
        content: "Deploy: tag the release, deploy to staging, then deploy to production."
      })
      const oldTwin = yield* save(memory, projectA, { content: "The cache key includes the locale." })
      yield* TestClock.adjust("60 days")
      const newTwin = yield* save(memory, projectA, { content: "The cache key includes the locale." })
      const weak = yield* save(memory, projectA, {
        title: "Fonts",
        content:
          "The fonts are loaded from the asset folder before the first paint; a later deploy may change them, and the fallback stack covers older browsers."
      })

      assert.deepStrictEqual(yield* searchIds(memory, projectA, { query: "deploy" }), [strong.id, weak.id])
      assert.deepStrictEqual(yield* searchIds(memory, projectA, { query: "cache locale" }), [newTwin.id, oldTwin.id])
      assert.deepStrictEqual(yield* searchIds(memory, projectA, { query: "cache locale", limit: 1 }), [newTwin.id])
      assert.deepStrictEqual(yield* searchIds(memory, projectA, { query: "deploy locale" }), [])
      assert.sameMembers(yield* searchIds(memory, projectA, { query: "deploy locale", match: "any" }), [
        strong.id,
        weak.id,
        oldTwin.id,
        newTwin.id
      ])
    })
  )

  it.scoped("PL-5 records are scoped to their project; personal ones are seen from every project", () =>
    Effect.gen(function* () {
      const { stateDir, projectA, projectB } = yield* setting
      const memory = yield* session(stateDir)
      const secretA = yield* save(memory, projectA, { content: "Project A builds with make." })
      const personal = yield* save(memory, projectA, {
        content: "I prefer small commits with make-believe names.",
        scope: "personal"
      })
      assert.include(personal.text, "(personal)")

      assert.deepStrictEqual(yield* searchIds(memory, projectA, { query: "make" }), [secretA.id, personal.id])
      assert.deepStrictEqual(yield* searchIds(memory, projectB, { query: "make" }), [personal.id])
      assert.deepStrictEqual(yield* searchIds(memory, projectB, { query: "make", all_projects: true }), [
        secretA.id,
        personal.id
      ])
      assert.isTrue((yield* memory.callTool("memory_forget", { id: secretA.id }, projectB)).isError)
      assert.include(yield* call(memory, "memory_get", { id: personal.id }, projectB), "scope: personal")
      // The project is the workspace's real path: a symbolic link to it is the same project.
      const linked = join(stateDir, "..", "link-to-a")
      yield* Effect.promise(() => import("node:fs/promises").then((fs) => fs.symlink(projectA, linked)))
      assert.deepStrictEqual(yield* searchIds(memory, linked, { query: "builds" }), [secretA.id])
    })
  )

  it.scoped("PL-5 memory_get reads another workspace's memory that a search of all projects listed, read-only", () =>
    Effect.gen(function* () {
      const { stateDir, projectA, projectB } = yield* setting
      const memory = yield* session(stateDir)
      const secretA = yield* save(memory, projectA, { title: "Build", content: "Project A builds with make." })
      const ownB = yield* save(memory, projectB, { content: "Project B builds with make too." })

      const listed = yield* call(memory, "memory_search", { query: "builds make", all_projects: true }, projectB)
      assert.match(listed, new RegExp(`^#${secretA.id} Build \\[note, another workspace\\]`, "m"))
      assert.match(listed, new RegExp(`^#${ownB.id} .*\\[note\\]`, "m"))

      const foreign = yield* memory.callTool("memory_get", { id: secretA.id }, projectB)
      assert.isFalse(foreign.isError, foreign.text)
      assert.include(foreign.text, "Project A builds with make.")
      assert.include(foreign.text, "scope: project (another workspace; it can be forgotten only there)")
      assert.include(yield* call(memory, "memory_get", { id: secretA.id }, projectA), "scope: project ·")

      assert.isTrue((yield* memory.callTool("memory_forget", { id: secretA.id }, projectB)).isError)
      yield* call(memory, "memory_forget", { id: secretA.id }, projectA)
      assert.deepStrictEqual(yield* memory.callTool("memory_get", { id: secretA.id }, projectB), {
        text: `No memory #${secretA.id}.`,
        isError: true
      })
      assert.deepStrictEqual(yield* memory.callTool("memory_get", { id: 999 }, projectB), {
        text: "No memory #999.",
        isError: true
      })
    })
  )

  it.scoped("PL-5 <private> spans are stored redacted, in the title too, and never indexed", () =>
    Effect.gen(function* () {
      const { stateDir, projectA } = yield* setting
      const memory = yield* session(stateDir)
      const saved = yield* save(memory, projectA, {
        title: "Staging <PRIVATE>hunter2</PRIVATE> login",
        content:
          "Log in with <private>token sk-live-4242\nsecond line</private> then run the seed; <private>unclosed tail"
      })
      assert.include(saved.text, "Private spans were stored as [private].")
      const full = yield* call(memory, "memory_get", { id: saved.id }, projectA)
      assert.include(full, "Staging [private] login")
      assert.include(full, "Log in with [private] then run the seed; [private]")
      for (const secret of ["hunter2", "sk-live-4242", "second line", "unclosed tail"]) {
        assert.notInclude(full, secret)
        assert.deepStrictEqual(yield* searchIds(memory, projectA, { query: secret }), [])
      }
      const stored = JSON.stringify(yield* rows(stateDir, "SELECT title, content FROM memories"))
      assert.notInclude(stored, "sk-live")
      assert.notInclude(stored, "hunter2")
    })
  )

  it.scoped("PL-5 content is capped, and the tool result says so", () =>
    Effect.gen(function* () {
      const { stateDir, projectA } = yield* setting
      const memory = yield* session(stateDir, { maxContentChars: 100 })
      const saved = yield* save(memory, projectA, { content: "x".repeat(250) })
      assert.include(saved.text, "The content was cut to 100 of its 250 characters")
      const stored = (yield* rows(stateDir, "SELECT length(content) AS length FROM memories")) as ReadonlyArray<{
        length: number
      }>
      assert.deepStrictEqual(stored, [{ length: 100 }])
      const short = yield* save(memory, projectA, { content: "short" })
      assert.notInclude(short.text, "cut")
    })
  )

  it.scoped("PL-5 a topic_key already saved updates that record (per scope and project)", () =>
    Effect.gen(function* () {
      const { stateDir, projectA, projectB } = yield* setting
      const memory = yield* session(stateDir)
      const first = yield* save(memory, projectA, { topic_key: "db/engine", content: "We use postgres." })
      yield* TestClock.adjust("1 hour")
      const again = yield* save(memory, projectA, { topic_key: " db/engine ", content: "We moved to sqlite." })
      assert.strictEqual(again.id, first.id)
      assert.match(again.text, /^Updated memory #1 \(project, topic_key "db\/engine"\)\.$/)
      assert.deepStrictEqual(yield* searchIds(memory, projectA, { query: "postgres" }), [])
      assert.deepStrictEqual(yield* searchIds(memory, projectA, { query: "sqlite" }), [first.id])
      assert.include(
        yield* call(memory, "memory_get", { id: first.id }, projectA),
        "saved 1 hour ago · updated just now"
      )

      const otherProject = yield* save(memory, projectB, { topic_key: "db/engine", content: "Mongo here." })
      const personal = yield* save(memory, projectA, {
        topic_key: "db/engine",
        content: "I like sqlite.",
        scope: "personal"
      })
      assert.strictEqual(new Set([first.id, otherProject.id, personal.id]).size, 3)
      yield* memory.callTool("memory_forget", { id: first.id }, projectA)
      const afterForget = yield* save(memory, projectA, { topic_key: "db/engine", content: "Back to postgres." })
      assert.notStrictEqual(afterForget.id, first.id)
    })
  )

  it.scoped(
    "PL-5 a topic_key too long to keep whole is refused, so two long keys never replace each other's memory",
    () =>
      Effect.gen(function* () {
        const { stateDir, projectA } = yield* setting
        const memory = yield* session(stateDir)
        const stem = "k".repeat(200)
        const first = yield* save(memory, projectA, { topic_key: "short", content: "Kept." })
        const refused = yield* memory.callTool("memory_save", { topic_key: `${stem}-a`, content: "First." }, projectA)
        assert.deepStrictEqual(refused, {
          text: "Nothing was saved: the topic_key is 202 characters, over the 200 a key may have. Save again with a shorter topic_key.",
          isError: true
        })
        const second = yield* save(memory, projectA, { topic_key: stem, content: "Exactly 200." })
        assert.notStrictEqual(second.id, first.id)
        assert.isTrue(
          (yield* memory.callTool("memory_save", { topic_key: `${stem}-b`, content: "Second." }, projectA)).isError
        )
        assert.include(yield* call(memory, "memory_get", { id: second.id }, projectA), "Exactly 200.")
      })
  )

  it.scoped("PL-5 forget hides a memory (kept in the file); hard deletes it and its index entries", () =>
    Effect.gen(function* () {
      const { stateDir, projectA } = yield* setting
      const memory = yield* session(stateDir)
      const soft = yield* save(memory, projectA, { content: "Soft target: the lighthouse." })
      const hard = yield* save(memory, projectA, { content: "Hard target: the lighthouse keeper." })

      assert.strictEqual(yield* call(memory, "memory_forget", { id: soft.id }, projectA), `Forgot memory #${soft.id}.`)
      assert.deepStrictEqual(yield* searchIds(memory, projectA, { query: "lighthouse" }), [hard.id])
      assert.include(yield* call(memory, "memory_get", { id: soft.id }, projectA), "forgotten just now")
      assert.isTrue((yield* memory.callTool("memory_forget", { id: soft.id }, projectA)).isError)

      assert.strictEqual(
        yield* call(memory, "memory_forget", { id: hard.id, hard: true }, projectA),
        `Deleted memory #${hard.id} for good.`
      )
      assert.deepStrictEqual(yield* searchIds(memory, projectA, { query: "lighthouse" }), [])
      assert.isTrue((yield* memory.callTool("memory_get", { id: hard.id }, projectA)).isError)
      assert.deepStrictEqual(yield* rows(stateDir, "SELECT id FROM memories ORDER BY id"), [{ id: soft.id }])
      assert.deepStrictEqual(
        yield* rows(stateDir, "SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'keeper'"),
        []
      )
    })
  )

  it.scoped("PL-5 search text is never an FTS syntax error", () =>
    Effect.gen(function* () {
      const { stateDir, projectA } = yield* setting
      const memory = yield* session(stateDir)
      yield* save(memory, projectA, { content: 'Quotes "and" stars * and NEAR(things) col:value -minus ^caret' })
      const hostile = [
        '"unbalanced',
        "AND OR NOT",
        "col:value",
        "*",
        "(",
        "NEAR(",
        "-minus",
        "^caret",
        '""',
        "🙂",
        "'; DROP TABLE memories; --"
      ]
      for (const query of hostile) {
        for (const match of ["all", "any"]) {
          const outcome = yield* memory.callTool("memory_search", { query, match }, projectA)
          assert.isFalse(outcome.isError, `${query}: ${outcome.text}`)
        }
      }
      assert.strictEqual(
        yield* call(memory, "memory_search", { query: "*" }, projectA),
        "The query holds no word to search for."
      )
      assert.lengthOf(yield* searchIds(memory, projectA, { query: "col:value" }), 1)
      assert.lengthOf(yield* searchIds(memory, projectA, { query: "NEAR(things)" }), 1)
    })
  )

  it.scoped("PL-5 bad tool arguments are a ToolError the model reads", () =>
    Effect.gen(function* () {
      const { stateDir, projectA } = yield* setting
      const memory = yield* session(stateDir)
      const error = yield* Effect.flip(memory.callTool("memory_save", { content: "  " }, projectA))
      assert.strictEqual(
        error.message,
        "Invalid arguments for memory_save: content is empty. Call it again with arguments that match its input schema."
      )
      const badScope = yield* Effect.flip(memory.callTool("memory_save", { content: "x", scope: "team" }, projectA))
      assert.include(badScope.message, "scope")
    })
  )

  it.scoped("PL-5 /memory <words> searches, /memory forget <id> forgets, /memory alone lists the latest", () =>
    Effect.gen(function* () {
      const { stateDir, projectA } = yield* setting
      const memory = yield* session(stateDir)
      const saved = yield* save(memory, projectA, { title: "Release train", content: "Releases leave on Tuesdays." })
      assert.match(yield* memory.runCommand("memory", "releases tuesdays", projectA), /^#1 Release train \[note\]/)
      assert.match(yield* memory.runCommand("memory", "", projectA), /^Usage: .*\n#1 Release train/)
      assert.include(yield* memory.runCommand("memory", "forget abc", projectA), "Give the id of the memory to forget")
      assert.strictEqual(
        yield* memory.runCommand("memory", "forget 999999999999999999999", projectA),
        "No memory #999999999999999999999 to forget in this workspace."
      )
      assert.strictEqual(
        yield* memory.runCommand("memory", `forget #${saved.id}`, projectA),
        `Forgot memory #${saved.id}.`
      )
      assert.strictEqual(yield* memory.runCommand("memory", "releases", projectA), 'No memory matches "releases".')
    })
  )

  it.scoped("PL-5 a bad setting fails the setup with a one-line error naming the key", () =>
    Effect.gen(function* () {
      const { stateDir } = yield* setting
      const error = yield* Effect.flip(session(stateDir, { injectBudgetTokens: -5 }))
      assert.strictEqual((error as { _tag: string })._tag, "PluginError")
      assert.match(
        (error as { message: string }).message,
        /^builtinPlugins\.memory\.injectBudgetTokens: expected a whole number from 0 to 100000, got -5 \(in config\.yaml, global or project\)$/
      )
    })
  )
})
