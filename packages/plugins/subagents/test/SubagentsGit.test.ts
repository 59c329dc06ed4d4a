// Writing subagents with real git: worktrees, what is kept, merged and discarded (CH-4).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStoreModule from "@alisio/runtime/SessionStore"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { git, repositoryOf } from "../src/Worktrees.js"
import { branches, gitIn, initRepo, startFixture } from "./support/gitRepo.js"
import { agentOf, answered, promptOf, requestsOf, subagentsLayer, tempDir, waitUntil } from "./support/subagentsHost.js"

const run = (cwd: string) =>
  Effect.flatMap(Runner, (runner) => runner.run({ cwd, prompt: "root", model: "fake-model" }))

const results = (sessionId: string) =>
  Effect.map(
    Effect.flatMap(SessionStore, (store) => store.events(sessionId as never)),
    (events: ReadonlyArray<KnownRunEvent>) =>
      events.flatMap((e) => (e.type === "tool_call_completed" && e.data.name === "task" ? [e.data.result] : []))
  )

const command = (args: string, sessionId: string, cwd: string) =>
  Effect.flatMap(PluginHost.PluginHost, (host) => host.commands.run("agents", args, { sessionId, cwd }))

const idOf = (result: string) => /task="([0-9a-f]{8})"/.exec(result)![1]!

/** Two general subagents, each writing `notes.txt` with its own line, asked in one response. */
const twoWriters: Fake.Script = (request) => {
  const agent = agentOf(request)
  if (agent !== undefined) {
    const who = promptOf(request).slice(-1)
    return answered(request)
      ? Fake.answer(`wrote ${who}`)
      : Fake.callTools({ id: `w${who}`, name: "write", args: { path: "notes.txt", content: `from ${who}\n` } })
  }
  return answered(request)
    ? Fake.answer("both wrote")
    : Fake.callTools(
        ...["A", "B"].map((who) => ({
          id: `t${who}`,
          name: "task",
          args: { description: `write ${who}`, prompt: `write ${who}`, subagent_type: "general" }
        }))
      )
}

describe("subagents in git worktrees", () => {
  it.scoped(
    "CH-4 two writing subagents change the same file in worktrees; both kept; the workspace changes only by merge; merge one, discard the other",
    () =>
      Effect.gen(function* () {
        const cwd = yield* tempDir
        const base = initRepo(cwd)
        const outcome = yield* run(cwd)
        assert.strictEqual(outcome.status, "completed")
        const [first, second] = yield* results(outcome.sessionId)
        const byWho = Object.fromEntries(
          [first!, second!].map((r) => [r.includes("wrote A") ? "A" : "B", { id: idOf(r), text: r }])
        )
        const a = byWho.A!
        const b = byWho.B!
        for (const { id, text } of [a, b]) {
          assert.include(
            text,
            `on the branch alisio/${id}, started from ${base.slice(0, 7)} (HEAD of main). It changed: notes.txt.`
          )
          assert.include(text, `\`/agents merge ${id}\``)
        }
        // The workspace is untouched: same file, clean tree, both branches and worktrees exist.
        assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "original\n")
        assert.strictEqual(gitIn(cwd, "status", "--porcelain"), "")
        assert.deepStrictEqual(branches(cwd), [`alisio/${a.id}`, `alisio/${b.id}`, "main"].sort())
        const worktreeOf = (text: string) => /own git worktree (\S+) on the branch/.exec(text)![1]!
        assert.strictEqual(readFileSync(path.join(worktreeOf(a.text), "notes.txt"), "utf8"), "from A\n")
        assert.strictEqual(readFileSync(path.join(worktreeOf(b.text), "notes.txt"), "utf8"), "from B\n")

        const listing = yield* command("", outcome.sessionId, cwd)
        assert.include(listing, `[worktree kept: /agents merge ${a.id}]`)

        const merged = yield* command(`merge ${a.id}`, outcome.sessionId, cwd)
        assert.strictEqual(
          merged,
          `Merged alisio/${a.id} into ${cwd}: notes.txt. The worktree and the branch were removed.`
        )
        assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "from A\n")
        assert.isFalse(existsSync(worktreeOf(a.text)))

        const discarded = yield* command(`discard ${b.id.slice(0, 4)}`, outcome.sessionId, cwd)
        assert.match(discarded, new RegExp(`^Discarded the work of task ${b.id}`))
        assert.isFalse(existsSync(worktreeOf(b.text)))
        assert.deepStrictEqual(branches(cwd), ["main"])
        assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "from A\n")
        assert.strictEqual(gitIn(cwd, "status", "--porcelain"), "")
        assert.match(
          yield* command(`merge ${a.id}`, outcome.sessionId, cwd),
          /has no worktree to merge \(its worktree was merged\)/
        )
      }).pipe(Effect.provide(subagentsLayer({ script: twoWriters, config: { parallelWrites: "worktree" } }))),
    { timeout: 60_000 }
  )

  it.scoped(
    "CH-4 an unchanged worktree is removed; the report says what the workspace had uncommitted; merge refuses a dirty tree",
    () =>
      Effect.gen(function* () {
        const cwd = yield* tempDir
        initRepo(cwd)
        writeFileSync(path.join(cwd, "draft.txt"), "not committed\n")
        const outcome = yield* run(cwd)
        const texts = yield* results(outcome.sessionId)
        const idle = texts.find((t) => t.includes("looked only"))!
        const writer = texts.find((t) => t.includes("wrote A"))!
        assert.include(idle, "It changed nothing, so the worktree was removed.")
        assert.include(idle, "it did not see the workspace's 1 uncommitted change (still there, untouched)")
        assert.deepStrictEqual(branches(cwd), [`alisio/${idOf(writer)}`, "main"])
        const refused = yield* command(`merge ${idOf(writer)}`, outcome.sessionId, cwd)
        assert.strictEqual(
          refused,
          `Refused: the workspace ${cwd} has uncommitted changes (draft.txt). Commit or stash them, then run /agents merge again.`
        )
        assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "original\n")
      }).pipe(
        Effect.provide(
          subagentsLayer({
            config: { parallelWrites: "worktree" },
            script: (request) => {
              const agent = agentOf(request)
              if (agent !== undefined && promptOf(request) === "look") return Fake.answer("looked only")
              if (agent !== undefined) return twoWriters(request, 0)
              return answered(request)
                ? Fake.answer("done")
                : Fake.callTools(
                    { id: "t1", name: "task", args: { description: "look", prompt: "look", subagent_type: "general" } },
                    {
                      id: "t2",
                      name: "task",
                      args: { description: "write", prompt: "write A", subagent_type: "general" }
                    }
                  )
            }
          })
        )
      ),
    { timeout: 60_000 }
  )

  it.scoped("CH-4 outside a git repository, writing subagents run one at a time in the workspace and say so", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const outcome = yield* run(cwd)
      assert.strictEqual(outcome.status, "completed")
      const texts = yield* results(outcome.sessionId)
      for (const text of texts) {
        assert.include(
          text,
          "Git worktrees were not available (the workspace is not a git repository), so this writing subagent ran in the shared workspace, one writing subagent at a time."
        )
        assert.match(text, /In the shared workspace it called: write notes\.txt\./)
      }
      // One at a time: every request of one subagent comes before the other's first.
      const order = (yield* requestsOf).flatMap((r) => (agentOf(r) === undefined ? [] : [promptOf(r)]))
      assert.strictEqual(order.length, 4)
      assert.strictEqual(order[0], order[1])
      assert.strictEqual(order[2], order[3])
      assert.notStrictEqual(order[0], order[2])
    }).pipe(Effect.provide(subagentsLayer({ script: twoWriters, config: { parallelWrites: "worktree" } })))
  )

  it.scoped("CH-4 CH-2 interrupting the parent keeps a writing subagent's worktree, its partial work committed", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const base = initRepo(cwd)
      const fiber = yield* Effect.fork(run(cwd))
      yield* waitUntil(requestsOf, (requests) => requests.some((r) => agentOf(r) !== undefined && answered(r)))
      yield* Fiber.interrupt(fiber)
      const store = yield* SessionStore
      const [root] = yield* store.sessions({ parentId: null })
      const listing = yield* command("", root!.id, cwd)
      const id = /^([0-9a-f]{8}) {2}cancelled/m.exec(listing)?.[1]
      assert.isDefined(id, listing)
      assert.include(listing, `[worktree kept: /agents merge ${id}]`)
      assert.deepStrictEqual(branches(cwd), [`alisio/${id}`, "main"])
      assert.strictEqual(gitIn(cwd, "show", `alisio/${id}:notes.txt`), "half done\n")
      assert.match(
        gitIn(cwd, "log", "-1", "--format=%s", `alisio/${id}`).trim(),
        /^alisio: general: edit \(task [0-9a-f]{8}, cancelled\)$/
      )
      assert.strictEqual(gitIn(cwd, "rev-parse", "main").trim(), base)
      assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "original\n")
    }).pipe(
      Effect.provide(
        subagentsLayer({
          config: { parallelWrites: "worktree" },
          script: (request) => {
            const agent = agentOf(request)
            if (agent !== undefined) {
              return answered(request)
                ? [...Fake.text("still working"), Fake.silence]
                : Fake.callTools({ id: "w1", name: "write", args: { path: "notes.txt", content: "half done\n" } })
            }
            return Fake.callTools({
              id: "t1",
              name: "task",
              args: { description: "edit", prompt: "edit it", subagent_type: "general" }
            })
          }
        })
      )
    )
  )

  it.scoped(
    "CH-3 CH-4 kill -9 during a subagent: at the next start it reads interrupted, its worktree is still there and merges",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir
        const cwd = path.join(root, "workspace")
        mkdirSync(cwd)
        initRepo(cwd)
        const filename = path.join(root, "alisio.db")
        const homes = path.join(root, "homes")
        const fixture = startFixture("killedTree.ts", [filename, homes, cwd])
        const { root: rootSession } = (yield* Effect.promise(() => fixture.firstLine)) as { root: string }
        yield* Effect.promise(fixture.kill9)

        const after = Effect.gen(function* () {
          const store = yield* SessionStore
          yield* store.interruptRuns!()
          const [child] = yield* store.sessions({ parentId: rootSession as never })
          assert.strictEqual(child!.status, "interrupted")
          const listing = yield* command("", rootSession, cwd)
          const id = /^([0-9a-f]{8}) {2}interrupted {2}general/m.exec(listing)?.[1]
          assert.isDefined(id, listing)
          assert.include(listing, `[worktree kept: /agents merge ${id}]`)
          const worktree = path.join(homes, "state", "plugins", "subagents", "worktrees", id!)
          assert.strictEqual(readFileSync(path.join(worktree, "notes.txt"), "utf8"), "half done\n")
          assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "original\n")
          const merged = yield* command(`merge ${id}`, rootSession, cwd)
          assert.match(merged, /^Merged alisio\/[0-9a-f]{8} into .*: notes\.txt\./)
          assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "half done\n")
        })
        yield* after.pipe(
          Effect.provide(
            subagentsLayer({
              script: [],
              store: SessionStoreModule.layer({ filename }),
              homes: {
                state: path.join(homes, "state"),
                config: path.join(homes, "config"),
                cache: path.join(homes, "cache")
              }
            })
          )
        )
      }),
    { timeout: 60_000 }
  )
})

describe("a kept worktree whose folder was deleted", () => {
  it.scoped(
    "CH-4 /agents merge of a killed subagent's deleted worktree merges its branch and says so, not that git is missing",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir
        const cwd = path.join(root, "workspace")
        mkdirSync(cwd)
        initRepo(cwd)
        const filename = path.join(root, "alisio.db")
        const homes = path.join(root, "homes")
        const fixture = startFixture("killedTree.ts", [filename, homes, cwd])
        const { root: rootSession } = (yield* Effect.promise(() => fixture.firstLine)) as { root: string }
        yield* Effect.promise(fixture.kill9)

        const gone = path.join(root, "no-such-folder")
        const failed = yield* Effect.flip(git(gone, ["status"]))
        assert.strictEqual(failed.message, `git status failed: the folder ${gone} does not exist`)
        assert.notStrictEqual(failed.missing, true)

        const after = Effect.gen(function* () {
          yield* Effect.flatMap(SessionStore, (store) => store.interruptRuns!())
          const id = /^([0-9a-f]{8}) {2}interrupted/m.exec(yield* command("", rootSession, cwd))![1]!
          rmSync(path.join(homes, "state", "plugins", "subagents", "worktrees", id), { recursive: true, force: true })
          const merged = yield* command(`merge ${id}`, rootSession, cwd)
          assert.match(
            merged,
            /^Merged alisio\/[0-9a-f]{8} into .*\. Its worktree .* was gone: only the work committed/
          )
          assert.strictEqual(readFileSync(path.join(cwd, "notes.txt"), "utf8"), "original\n")
          assert.deepStrictEqual(branches(cwd), ["main"])
        })
        yield* after.pipe(
          Effect.provide(
            subagentsLayer({
              script: [],
              store: SessionStoreModule.layer({ filename }),
              homes: {
                state: path.join(homes, "state"),
                config: path.join(homes, "config"),
                cache: path.join(homes, "cache")
              }
            })
          )
        )
      }),
    { timeout: 60_000 }
  )
})

describe("subagents without git", () => {
  it.scoped("CH-4 with git missing, a workspace has no repository and the reason says git is not installed", () =>
    Effect.gen(function* () {
      const cwd = yield* tempDir
      const saved = process.env.PATH
      const repository = yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          process.env.PATH = path.join(cwd, "no-bin")
        }),
        () => repositoryOf(cwd),
        () =>
          Effect.sync(() => {
            process.env.PATH = saved
          })
      )
      assert.deepStrictEqual(repository, { _tag: "Unavailable", reason: "git is not installed" })
    })
  )
})
