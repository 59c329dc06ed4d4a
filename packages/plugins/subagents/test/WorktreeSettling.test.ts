// How a writing subagent's worktree is settled when git's own settings get in the way (CH-4): its
// work is committed on its branch, or kept in the folder and merged from there, never dropped.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { gitIn, initRepo } from "./support/gitRepo.js"
import { agentOf, answered, subagentsLayer, tempDir } from "./support/subagentsHost.js"

const run = (cwd: string) =>
  Effect.flatMap(Runner, (runner) => runner.run({ cwd, prompt: "root", model: "fake-model" }))

const taskResult = (sessionId: string) =>
  Effect.map(
    Effect.flatMap(SessionStore, (store) => store.events(sessionId as never)),
    (events: ReadonlyArray<KnownRunEvent>) =>
      events.flatMap((e) => (e.type === "tool_call_completed" && e.data.name === "task" ? [e.data.result] : []))[0]!
  )

const command = (args: string, sessionId: string, cwd: string) =>
  Effect.flatMap(PluginHost.PluginHost, (host) => host.commands.run("agents", args, { sessionId, cwd }))

/** A subagent that makes the calls given, then answers; the root asks for it once. */
const subagentDoing = (...calls: ReadonlyArray<{ readonly name: string; readonly args: unknown }>): Fake.Script => {
  let step = 0
  return (request) => {
    if (agentOf(request) !== undefined) {
      const call = calls[step++]
      return call === undefined ? Fake.answer("done") : Fake.callTools({ id: `c${step}`, ...call })
    }
    return answered(request)
      ? Fake.answer("ok")
      : Fake.callTools({
          id: "t1",
          name: "task",
          args: { description: "edit", prompt: "edit notes", subagent_type: "general" }
        })
  }
}

/** What `npm install` and a Python import leave: folders the repository ignores. */
const install = {
  name: "bash",
  args: {
    command:
      "mkdir -p node_modules/left-pad src/__pycache__ && echo 'module.exports = 1' > node_modules/left-pad/index.js && " +
      "echo x > src/__pycache__/m.cpython-312.pyc"
  }
}

/** A repository whose `.gitignore` (committed) holds `rules`. */
const ignoring = (cwd: string, rules: string) => {
  initRepo(cwd)
  writeFileSync(path.join(cwd, ".gitignore"), rules)
  gitIn(cwd, "add", ".gitignore")
  gitIn(cwd, "commit", "-q", "-m", "ignore")
}

const writeNotes = { name: "write", args: { path: "notes.txt", content: "the subagent's work\n" } }

describe("settling a writing subagent's worktree", () => {
  it.scoped("CH-4 a person who signs commits with a key git cannot use still gets the work on the task's branch", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      initRepo(cwd)
      // gpg without the key (or a pinentry nobody answers): every signed commit fails.
      const gpg = path.join(cwd, "..", `no-gpg-${path.basename(cwd)}`)
      writeFileSync(gpg, "#!/bin/sh\necho 'gpg: signing failed: No secret key' >&2\nexit 2\n")
      chmodSync(gpg, 0o755)
      gitIn(cwd, "config", "commit.gpgsign", "true")
      gitIn(cwd, "config", "gpg.program", gpg)
      const outcome = yield* run(cwd)
      const result = yield* taskResult(outcome.sessionId)
      assert.include(result, "It changed: notes.txt.", result)
      const id = /task="([0-9a-f]{8})"/.exec(result)![1]!
      assert.strictEqual(gitIn(cwd, "show", `alisio/${id}:notes.txt`), "the subagent's work\n")
    }).pipe(
      Effect.provide(subagentsLayer({ config: { parallelWrites: "worktree" }, script: subagentDoing(writeNotes) }))
    )
  )

  it.scoped(
    "CH-4 /agents merge of a worktree git could not commit at the task's end never removes the work left in it",
    () =>
      Effect.gen(function* () {
        const cwd = yield* tempDir
        initRepo(cwd)
        const outcome = yield* run(cwd)
        const result = yield* taskResult(outcome.sessionId)
        assert.include(result, "so it is left uncommitted in its worktree", result)
        assert.include(result, "Its work is in that folder, not yet committed", result)
        const id = /task="([0-9a-f]{8})"/.exec(result)![1]!
        const dir = /own git worktree (\S+) on the branch/.exec(result)![1]!
        const merged = yield* command(`merge ${id}`, outcome.sessionId, cwd)
        // git still cannot commit it: the merge says why, and the work stays where it was.
        assert.match(merged, /^git failed: git add failed: .*inner/)
        assert.isTrue(existsSync(dir), "the worktree was removed")
        assert.strictEqual(readFileSync(path.join(dir, "notes.txt"), "utf8"), "the subagent's work\n")
        assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "original\n")
      }).pipe(
        Effect.provide(
          subagentsLayer({
            config: { parallelWrites: "worktree" },
            // A repository with no commit inside the worktree: `git add -A` refuses it.
            script: subagentDoing(writeNotes, { name: "bash", args: { command: "git init -q inner" } })
          })
        )
      )
  )
  it.scoped("CH-4 /agents merge of a kept worktree takes along what was changed in its folder since", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      initRepo(cwd)
      const outcome = yield* run(cwd)
      const result = yield* taskResult(outcome.sessionId)
      assert.include(result, "Its work is committed on that branch", result)
      const id = /task="([0-9a-f]{8})"/.exec(result)![1]!
      const dir = /own git worktree (\S+) on the branch/.exec(result)![1]!
      // The person finishes the job in the kept worktree before merging it.
      writeFileSync(path.join(dir, "more.txt"), "finished by hand\n")
      const merged = yield* command(`merge ${id}`, outcome.sessionId, cwd)
      assert.match(merged, /^Merged alisio\/[0-9a-f]{8} into .*: more\.txt, notes\.txt\./)
      assert.strictEqual(readFileSync(path.join(cwd, "more.txt"), "utf8"), "finished by hand\n")
      assert.strictEqual(gitIn(cwd, "status", "--porcelain"), "")
    }).pipe(
      Effect.provide(subagentsLayer({ config: { parallelWrites: "worktree" }, script: subagentDoing(writeNotes) }))
    )
  )
  it.scoped(
    "CH-4 what a subagent writes into a submodule folder its worktree did not check out is kept and pointed at, never removed",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir
        const library = path.join(root, "library src")
        const cwd = path.join(root, "main repo")
        for (const dir of [library, cwd]) {
          mkdirSync(dir)
          initRepo(dir)
        }
        gitIn(cwd, "-c", "protocol.file.allow=always", "submodule", "add", "-q", library, "lib")
        gitIn(cwd, "commit", "-q", "-m", "add lib")
        const outcome = yield* run(cwd)
        const result = yield* taskResult(outcome.sessionId)
        const id = /task="([0-9a-f]{8})"/.exec(result)![1]!
        const dir = /own git worktree (\S+) on the branch/.exec(result)?.[1]
        assert.isDefined(dir, result)
        assert.include(result, "It wrote into the submodule folder lib", result)
        assert.strictEqual(readFileSync(path.join(dir!, "lib", "notes.txt"), "utf8"), "in the library\n")
        const merged = yield* command(`merge ${id}`, outcome.sessionId, cwd)
        assert.include(merged, `Its worktree ${dir} was kept: it holds what git does not commit (lib: `)
        assert.strictEqual(readFileSync(path.join(dir!, "lib", "notes.txt"), "utf8"), "in the library\n")
      }).pipe(
        Effect.provide(
          subagentsLayer({
            config: { parallelWrites: "worktree" },
            script: subagentDoing({ name: "write", args: { path: "lib/notes.txt", content: "in the library\n" } })
          })
        )
      ),
    { timeout: 60_000 }
  )
  it.scoped(
    "CH-4 when no worktree can be made (a branch named alisio), the writing subagent still runs, in the shared workspace, and says why",
    () =>
      Effect.gen(function* () {
        const cwd = yield* tempDir
        initRepo(cwd)
        gitIn(cwd, "branch", "alisio")
        const outcome = yield* run(cwd)
        const result = yield* taskResult(outcome.sessionId)
        assert.include(result, 'status="completed"', result)
        assert.include(result, "No git worktree could be made (git worktree failed: ", result)
        assert.include(result, "so this writing subagent ran in the shared workspace, one writing subagent at a time.")
        assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "the subagent's work\n")
      }).pipe(
        Effect.provide(subagentsLayer({ config: { parallelWrites: "worktree" }, script: subagentDoing(writeNotes) }))
      )
  )
  it.scoped(
    "CH-4 a worktree whose only work is files the repository ignores is kept and they are named, never removed",
    () =>
      Effect.gen(function* () {
        const cwd = yield* tempDir
        initRepo(cwd)
        writeFileSync(path.join(cwd, ".gitignore"), "out/\n")
        gitIn(cwd, "add", ".gitignore")
        gitIn(cwd, "commit", "-q", "-m", "ignore out")
        const outcome = yield* run(cwd)
        const result = yield* taskResult(outcome.sessionId)
        assert.notInclude(result, "It changed nothing", result)
        assert.include(result, "It left files the repository ignores (out/): they are not committed, only in ", result)
        const id = /task="([0-9a-f]{8})"/.exec(result)![1]!
        const dir = /own git worktree (\S+) on the branch/.exec(result)![1]!
        assert.strictEqual(readFileSync(path.join(dir, "out", "report.txt"), "utf8"), "the report\n")
        const merged = yield* command(`merge ${id}`, outcome.sessionId, cwd)
        assert.include(merged, `Its worktree ${dir} was kept: it holds what git does not commit (out/: `)
        assert.strictEqual(readFileSync(path.join(dir, "out", "report.txt"), "utf8"), "the report\n")
      }).pipe(
        Effect.provide(
          subagentsLayer({
            config: { parallelWrites: "worktree" },
            script: subagentDoing({ name: "write", args: { path: "out/report.txt", content: "the report\n" } })
          })
        )
      )
  )

  it.scoped(
    "CH-4 a subagent that only ran an install (an ignored node_modules, __pycache__) leaves no worktree behind, and the result says why",
    () =>
      Effect.gen(function* () {
        const cwd = yield* tempDir
        ignoring(cwd, "node_modules/\n__pycache__/\n")
        const outcome = yield* run(cwd)
        const result = yield* taskResult(outcome.sessionId)
        assert.include(
          result,
          "It changed nothing but ignored files an install or a build makes again (node_modules/, src/__pycache__/; " +
            "ignored dependency, build and cache folders (node_modules, dist, build, target, .venv, __pycache__, .cache and the like) " +
            "and compiled files do not keep a worktree; other ignored files do), so the worktree was removed.",
          result
        )
        assert.deepStrictEqual(
          gitIn(cwd, "worktree", "list", "--porcelain")
            .split("\n")
            .filter((line) => line.startsWith("worktree ")).length,
          1
        )
        assert.notInclude(gitIn(cwd, "branch"), "alisio/")
      }).pipe(
        Effect.provide(subagentsLayer({ config: { parallelWrites: "worktree" }, script: subagentDoing(install) }))
      )
  )
  it.scoped(
    "CH-4 ignored work beside a node_modules (a .env, local notes) keeps the worktree and is named; node_modules is not",
    () =>
      Effect.gen(function* () {
        const cwd = yield* tempDir
        ignoring(cwd, "node_modules/\n__pycache__/\n.env\n*.local.md\n")
        const outcome = yield* run(cwd)
        const result = yield* taskResult(outcome.sessionId)
        assert.include(
          result,
          "It left files the repository ignores (.env, notes.local.md): they are not committed",
          result
        )
        const id = /task="([0-9a-f]{8})"/.exec(result)![1]!
        const dir = /own git worktree (\S+) on the branch/.exec(result)![1]!
        const merged = yield* command(`merge ${id}`, outcome.sessionId, cwd)
        assert.include(
          merged,
          `Its worktree ${dir} was kept: it holds what git does not commit (.env, notes.local.md: `
        )
        assert.strictEqual(readFileSync(path.join(dir, ".env"), "utf8"), "TOKEN=mine\n")
        assert.strictEqual(readFileSync(path.join(dir, "notes.local.md"), "utf8"), "my notes\n")
      }).pipe(
        Effect.provide(
          subagentsLayer({
            config: { parallelWrites: "worktree" },
            script: subagentDoing(
              install,
              { name: "write", args: { path: ".env", content: "TOKEN=mine\n" } },
              { name: "write", args: { path: "notes.local.md", content: "my notes\n" } }
            )
          })
        )
      )
  )
  it.scoped("CH-4 /agents merge removes a worktree whose only ignored content is a node_modules, and says so", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      ignoring(cwd, "node_modules/\n__pycache__/\n")
      const outcome = yield* run(cwd)
      const result = yield* taskResult(outcome.sessionId)
      const id = /task="([0-9a-f]{8})"/.exec(result)![1]!
      const dir = /own git worktree (\S+) on the branch/.exec(result)![1]!
      const merged = yield* command(`merge ${id}`, outcome.sessionId, cwd)
      assert.include(
        merged,
        "The worktree and the branch were removed, with node_modules/, src/__pycache__/ in it (",
        merged
      )
      assert.isFalse(existsSync(dir))
      assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "the subagent's work\n")
    }).pipe(
      Effect.provide(
        subagentsLayer({ config: { parallelWrites: "worktree" }, script: subagentDoing(install, writeNotes) })
      )
    )
  )
})
