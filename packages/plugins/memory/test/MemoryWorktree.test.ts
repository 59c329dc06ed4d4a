import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { memoryPlugin } from "@alisio/plugin-memory"
import { addWorktree, repositoryOf } from "@alisio/plugin-subagents/Worktrees"
import { openSqlite } from "@alisio/runtime/PluginStorage"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type PluginSession, startPluginSession, tempDir } from "./support/pluginSession.js"

const git = (cwd: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } })

/** A repository with one commit holding `pkg/notes.txt`, and a subagent's worktree of it, made as the subagents plugin makes one. */
const repositoryWithWorktree = Effect.gen(function* () {
  const root = yield* tempDir("memory-worktree")
  const repo = join(root, "repo")
  mkdirSync(join(repo, "pkg"), { recursive: true })
  git(repo, "init", "-q", "-b", "main")
  git(repo, "config", "user.email", "person@example.com")
  git(repo, "config", "user.name", "A Person")
  writeFileSync(join(repo, "pkg", "notes.txt"), "original\n")
  git(repo, "add", "-A")
  git(repo, "commit", "-q", "-m", "first")
  const repository = yield* repositoryOf(repo)
  assert.strictEqual(repository._tag, "Repository")
  const worktree = join(root, "subagents-state", "worktrees", "task-1")
  if (repository._tag === "Repository") {
    yield* Effect.orDie(addWorktree(repository.root, worktree, "alisio/task-1", repository.head))
  }
  const other = join(root, "other")
  mkdirSync(other)
  return { root, repo, worktree, other, stateDir: join(root, "memory-state") }
})

const text = (memory: PluginSession, name: string, args: unknown, cwd: string) =>
  Effect.map(memory.callTool(name, args, cwd), (outcome) => outcome.text)

const ids = (memory: PluginSession, cwd: string, query: string) =>
  Effect.map(text(memory, "memory_search", { query }, cwd), (found) =>
    [...found.matchAll(/^#(\d+)/gm)].map((match) => Number(match[1]))
  )

const savedId = (memory: PluginSession, cwd: string, content: string) =>
  Effect.map(text(memory, "memory_save", { content }, cwd), (said) => Number(/#(\d+)/.exec(said)![1]))

/** The project id the plugin gave a folder before worktrees were mapped: its own real path's. */
const ownPathId = (folder: string) => createHash("sha256").update(realpathSync(folder)).digest("hex").slice(0, 16)

describe("memory plugin in git worktrees", () => {
  it.scoped("PL-5 a subagent's worktree is the main workspace's project, both ways, subfolders included", () =>
    Effect.gen(function* () {
      const { repo, worktree, other, stateDir } = yield* repositoryWithWorktree
      const memory = yield* startPluginSession(memoryPlugin, { stateDir })

      const fromWorktree = yield* savedId(memory, worktree, "The subagent found that the parser drops trailing commas.")
      assert.deepStrictEqual(yield* ids(memory, repo, "parser commas"), [fromWorktree])
      const fromRepo = yield* savedId(memory, repo, "Releases are tagged by the lighthouse script.")
      assert.deepStrictEqual(yield* ids(memory, worktree, "lighthouse"), [fromRepo])
      assert.include(yield* text(memory, "memory_get", { id: fromRepo }, worktree), "scope: project ·")
      assert.include(yield* memory.contextFor(worktree, "release"), "lighthouse script")

      const inPackage = yield* savedId(memory, join(worktree, "pkg"), "The package builds with esbuild.")
      assert.deepStrictEqual(yield* ids(memory, join(repo, "pkg"), "esbuild"), [inPackage])
      assert.deepStrictEqual(yield* ids(memory, repo, "esbuild"), [])

      assert.deepStrictEqual(yield* ids(memory, other, "parser commas"), [])
      assert.deepStrictEqual(yield* ids(memory, other, "lighthouse"), [])
      assert.strictEqual(
        yield* text(memory, "memory_forget", { id: fromWorktree }, worktree),
        `Forgot memory #${fromWorktree}.`
      )
    })
  )

  it.scoped(
    "PL-5 another repository, and a folder whose .git file claims the repository, stay projects of their own",
    () =>
      Effect.gen(function* () {
        const { root, repo, stateDir } = yield* repositoryWithWorktree
        const memory = yield* startPluginSession(memoryPlugin, { stateDir })
        yield* savedId(memory, repo, "Only the real repository knows the harbour code.")

        const clone = join(root, "clone")
        git(root, "clone", "-q", repo, clone)
        assert.deepStrictEqual(yield* ids(memory, clone, "harbour"), [])

        // A made-up worktree link: its git dir names the repository, which does not list it.
        const forged = join(root, "forged")
        const fakeGitDir = join(forged, "fake", "worktrees", "x")
        mkdirSync(fakeGitDir, { recursive: true })
        writeFileSync(join(forged, ".git"), `gitdir: ${fakeGitDir}\n`)
        writeFileSync(join(fakeGitDir, "commondir"), `${join(repo, ".git")}\n`)
        writeFileSync(join(fakeGitDir, "gitdir"), `${join(forged, ".git")}\n`)
        assert.deepStrictEqual(yield* ids(memory, forged, "harbour"), [])
      })
  )

  it.scoped("PL-5 memories saved in a worktree before it was mapped stay readable there, and forgettable", () =>
    Effect.gen(function* () {
      const { worktree, stateDir } = yield* repositoryWithWorktree
      const memory = yield* startPluginSession(memoryPlugin, { stateDir })
      yield* savedId(memory, worktree, "Opens the file.")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const db = yield* openSqlite({ folder: stateDir, path: "memory.db", pluginId: "inspect" })
          const insert = yield* db.prepare(
            "INSERT INTO memories (project, title, content, type, scope, created_at, updated_at) VALUES (?, '', ?, 'note', 'project', 0, 0)"
          )
          yield* insert.run(ownPathId(worktree), "An older note about the glacier cache.")
        })
      )
      const [older] = yield* ids(memory, worktree, "glacier")
      assert.isDefined(older)
      assert.include(yield* text(memory, "memory_get", { id: older }, worktree), "glacier cache")
      assert.include(yield* memory.contextFor(worktree, "glacier"), "glacier cache")
      assert.strictEqual(yield* text(memory, "memory_forget", { id: older }, worktree), `Forgot memory #${older}.`)
    })
  )

  it.scoped(
    "PL-5 a worktree of a repository made with --separate-git-dir is the main workspace's project, both ways",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir("memory-separate")
        const repo = join(root, "work")
        const worktree = join(root, "wt")
        git(root, "init", "-q", "-b", "main", `--separate-git-dir=${join(root, "repo.git")}`, repo)
        git(repo, "-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-q", "--allow-empty", "-m", "first")
        git(repo, "worktree", "add", "-q", worktree)
        const memory = yield* startPluginSession(memoryPlugin, { stateDir: join(root, "memory-state") })
        const fromRepo = yield* savedId(memory, repo, "The separate repository ships on Tuesdays.")
        assert.deepStrictEqual(yield* ids(memory, worktree, "Tuesdays"), [fromRepo])
        const fromWorktree = yield* savedId(memory, worktree, "The worktree learned the kestrel flag.")
        assert.deepStrictEqual(yield* ids(memory, repo, "kestrel"), [fromWorktree])
        const other = join(root, "other")
        mkdirSync(other)
        git(other, "init", "-q")
        assert.deepStrictEqual(yield* ids(memory, other, "kestrel"), [])
      })
  )

  it.scoped(
    "PL-5 a topic_key saved in a worktree before it was mapped is updated by a later save, never duplicated",
    () =>
      Effect.gen(function* () {
        const { repo, worktree, stateDir } = yield* repositoryWithWorktree
        const memory = yield* startPluginSession(memoryPlugin, { stateDir })
        yield* savedId(memory, repo, "Opens the database.")
        const inspect = Effect.gen(function* () {
          const db = yield* openSqlite({ folder: stateDir, path: "memory.db", pluginId: "inspect" })
          return db
        })
        const older = yield* Effect.scoped(
          Effect.gen(function* () {
            const db = yield* inspect
            const insert = yield* db.prepare(
              "INSERT INTO memories (project, title, content, type, scope, topic_key, created_at, updated_at) VALUES (?, '', ?, 'note', 'project', 'build', 0, 0)"
            )
            return Number((yield* insert.run(ownPathId(worktree), "The build used make.")).lastInsertRowid)
          })
        )
        const said = yield* text(
          memory,
          "memory_save",
          { content: "The build uses ninja now.", topic_key: "build" },
          repo
        )
        assert.strictEqual(said, `Updated memory #${older} (project, topic_key "build").`)
        assert.deepStrictEqual(yield* ids(memory, repo, "build"), [older])
        assert.deepStrictEqual(yield* ids(memory, worktree, "build"), [older])
        assert.include(yield* text(memory, "memory_get", { id: older }, repo), "ninja")

        // Two copies of one topic, one under each id (saved by an older Alisio): a save keeps one.
        const copy = yield* Effect.scoped(
          Effect.gen(function* () {
            const db = yield* inspect
            const insert = yield* db.prepare(
              "INSERT INTO memories (project, title, content, type, scope, topic_key, created_at, updated_at) VALUES (?, '', ?, 'note', 'project', 'build', 0, 0)"
            )
            return Number((yield* insert.run(ownPathId(worktree), "The build used scons.")).lastInsertRowid)
          })
        )
        yield* text(
          memory,
          "memory_save",
          { content: "The build uses ninja and ccache.", topic_key: "build" },
          worktree
        )
        assert.deepStrictEqual(yield* ids(memory, worktree, "build"), [older])
        assert.notInclude(yield* text(memory, "memory_search", { query: "scons" }, worktree), `#${copy}`)
      })
  )
})
