// The subagents plugin: what a `task` round trip costs over a plain child run (the same child,
// spawned and awaited through `api.sessions` by a bare tool), goal < 5 ms; and what a git
// worktree costs on a 10 000-file repository (creation, the status check before it, removal).

import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import { defineTool, textResult } from "@alisio/domain/Tool"
import { makeSubagentsPlugin } from "@alisio/plugin-subagents"
import { addWorktree, removeWorktree, repositoryOf } from "@alisio/plugin-subagents/Worktrees"
import * as Fake from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as Interaction from "@alisio/runtime/Interaction"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as PluginUi from "@alisio/runtime/PluginUi"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import { median, row } from "./measure.js"

/** `plain`: spawns the child and awaits it through `api.sessions`, with a subagent's limits. */
const plainDelegation = definePlugin({
  id: "plain",
  version: "1.0.0",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    yield* api.tools.register(
      defineTool({
        name: "plain",
        description: "Runs a child session and returns its answer.",
        effect: "internal",
        input: Schema.Struct({ prompt: Schema.String }),
        run: ({ prompt }) =>
          Effect.gen(function* () {
            const child = yield* api.sessions.spawn({
              prompt,
              system: "You are a subagent.",
              label: "plain",
              // The limits a subagent gets, so that both children are the same run.
              limits: { maxTurns: 50, timeoutMs: 20 * 60_000 }
            })
            return textResult((yield* api.sessions.await(child)).text)
          }).pipe(Effect.orDie)
      })
    )
  })
})

const script: Fake.Script = (request) => {
  if (request.system !== undefined) return Fake.answer("child answer")
  if (request.messages.at(-1)?.role === "tool") return Fake.answer("root done")
  const via = JSON.stringify(request.messages[0]).includes("via task") ? "task" : "plain"
  return Fake.callTools(
    via === "task"
      ? { id: "c1", name: "task", args: { description: "d", prompt: "work", subagent_type: "general" } }
      : { id: "c1", name: "plain", args: { prompt: "work" } }
  )
}

const measureRoundTrip = async (root: string) => {
  const layer = PluginHost.layer({
    plugins: [
      { definition: makeSubagentsPlugin({ homeDir: join(root, "home") }), config: {} },
      { definition: plainDelegation }
    ],
    homes: { state: join(root, "state"), config: join(root, "config"), cache: join(root, "cache") }
  }).pipe(
    Layer.provideMerge(PluginUi.layerMemory),
    Layer.provideMerge(AgentRuntime.layer({ tools: [], interaction: Interaction.layerHeadless({ approveAll: true }) })),
    Layer.provideMerge(Fake.layer(script)),
    Layer.provideMerge(SessionStore.layer({ filename: join(root, "alisio.db") }))
  )
  const runtime = ManagedRuntime.make(layer)
  const workspace = join(root, "workspace")
  mkdirSync(workspace, { recursive: true })
  const once = (prompt: string) =>
    runtime.runPromise(
      Effect.flatMap(Runner, (runner) => runner.run({ cwd: workspace, prompt, model: "fake-model" })).pipe(
        Effect.tap((outcome) =>
          outcome.status === "completed" ? Effect.void : Effect.dieMessage(`run ${outcome.status}`)
        )
      ) as Effect.Effect<unknown, unknown, never>
    )
  try {
    for (let i = 0; i < 20; i++) {
      await once("via task")
      await once("via plain")
    }
    // Wall time swings with whatever else the machine runs; the CPU time this process spends on a
    // run is the steadier figure, and the one the goal is read on.
    const samples = {
      plain: { wall: [] as Array<number>, cpu: [] as Array<number> },
      task: { wall: [] as Array<number>, cpu: [] as Array<number> }
    }
    for (let i = 0; i < 150; i++) {
      for (const via of ["plain", "task"] as const) {
        const cpu = process.cpuUsage()
        const start = performance.now()
        await once(`via ${via}`)
        samples[via].wall.push(performance.now() - start)
        const used = process.cpuUsage(cpu)
        samples[via].cpu.push((used.user + used.system) / 1000)
      }
    }
    return {
      plain: { wall: median(samples.plain.wall), cpu: median(samples.plain.cpu) },
      task: { wall: median(samples.task.wall), cpu: median(samples.task.cpu) }
    }
  } finally {
    await runtime.dispose()
  }
}

const git = (cwd: string, ...args: ReadonlyArray<string>) => execFileSync("git", args, { cwd, stdio: "pipe" })

const measureWorktrees = async (root: string) => {
  const repo = join(root, "repo")
  mkdirSync(repo)
  git(repo, "init", "-q", "-b", "main")
  git(repo, "config", "user.email", "bench@example.com")
  git(repo, "config", "user.name", "Bench")
  for (let d = 0; d < 100; d++) {
    const dir = join(repo, `dir${d}`)
    mkdirSync(dir)
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `file${f}.ts`), `export const value${d}_${f} = ${f}\n`)
  }
  git(repo, "add", "-A")
  git(repo, "commit", "-q", "-m", "10 000 files")
  const head = git(repo, "rev-parse", "HEAD").toString().trim()
  const status: Array<number> = []
  const create: Array<number> = []
  const remove: Array<number> = []
  for (let i = 0; i < 7; i++) {
    const dir = join(root, "worktrees", `w${i}`)
    let start = performance.now()
    await Effect.runPromise(repositoryOf(repo))
    status.push(performance.now() - start)
    start = performance.now()
    await Effect.runPromise(addWorktree(repo, dir, `alisio/bench${i}`, head))
    create.push(performance.now() - start)
    start = performance.now()
    await Effect.runPromise(removeWorktree(repo, dir, `alisio/bench${i}`))
    remove.push(performance.now() - start)
  }
  return { status: median(status), create: median(create), remove: median(remove) }
}

export const run = async (): Promise<void> => {
  const root = mkdtempSync(join(tmpdir(), "alisio-bench-subagents-"))
  try {
    const trip = await measureRoundTrip(join(root, "trip"))
    row("root run with a plain child (api.sessions): CPU", trip.plain.cpu, "ms")
    row("root run with a task subagent: CPU", trip.task.cpu, "ms", trip.plain.cpu)
    row("task round trip over a plain child: CPU (goal < 5 ms)", trip.task.cpu - trip.plain.cpu, "ms")
    row("root run with a plain child: wall", trip.plain.wall, "ms")
    row("root run with a task subagent: wall", trip.task.wall, "ms", trip.plain.wall)
    row("task round trip over a plain child: wall", trip.task.wall - trip.plain.wall, "ms")
    mkdirSync(join(root, "git"))
    const trees = await measureWorktrees(join(root, "git"))
    row("10 000-file repository: status before a worktree", trees.status, "ms")
    row("10 000-file repository: git worktree add", trees.create, "ms")
    row("10 000-file repository: git worktree remove", trees.remove, "ms")
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
