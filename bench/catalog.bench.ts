// The command catalog and the system context, in process: resolving a typed `/name` (goal < 1 ms)
// with every source present (core, a plugin's commands, 40 templates, 10 skills), listing, an
// unknown name with close matches, and assembling the system context of a run (three AGENTS.md
// files up a repository, the skills, a plugin's context). The floor is a Map lookup in the same loop.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Fake from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as CommandCatalog from "@alisio/runtime/CommandCatalog"
import * as Interaction from "@alisio/runtime/Interaction"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as PluginUi from "@alisio/runtime/PluginUi"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as SystemContext from "@alisio/runtime/SystemContext"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { median, row } from "./measure.js"

const write = (file: string, text: string) => {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

const plugin = definePlugin({
  id: "bench",
  version: "1.0.0",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    for (let i = 0; i < 10; i++) {
      yield* api.commands.register({
        name: `plugin-${i}`,
        description: `command ${i}`,
        execute: () => Effect.succeed("")
      })
    }
    yield* api.context.provide(() => Effect.succeed("Context a plugin adds to every run."))
  })
})

/** Milliseconds per call of `effect`, the median of `rounds` batches of `batch` calls in one Effect. */
const perCall = async <A, E, R>(
  runtime: ManagedRuntime.ManagedRuntime<R, never>,
  effect: Effect.Effect<A, E, R>,
  batch: number,
  rounds = 15
): Promise<number> => {
  const samples: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    samples.push(
      await runtime.runPromise(
        Effect.gen(function* () {
          const start = performance.now()
          for (let i = 0; i < batch; i++) yield* Effect.either(effect)
          return (performance.now() - start) / batch
        })
      )
    )
  }
  return median(samples)
}

export const run = async (): Promise<void> => {
  const root = mkdtempSync(join(tmpdir(), "alisio-bench-catalog-"))
  const config = join(root, "config")
  const repo = join(root, "repo")
  const workspace = join(repo, "packages", "app")
  mkdirSync(join(repo, ".git"), { recursive: true })
  mkdirSync(workspace, { recursive: true })
  for (let i = 0; i < 40; i++) {
    write(
      join(config, "prompts", `template-${i}.md`),
      `---\ndescription: Template ${i}\n---\nDo task ${i} with $ARGUMENTS\n`
    )
  }
  for (let i = 0; i < 10; i++) {
    write(
      join(config, "skills", `skill-${i}`, "SKILL.md"),
      `---\nname: skill-${i}\ndescription: Skill ${i}\n---\n${"Step.\n".repeat(200)}`
    )
  }
  write(join(config, "AGENTS.md"), "Answer briefly.\n".repeat(40))
  write(join(repo, "AGENTS.md"), "Run the tests before answering.\n".repeat(200))
  write(join(repo, "packages", "CLAUDE.md"), "Packages are built with tsc.\n".repeat(50))
  write(join(workspace, "AGENTS.md"), "This is the app.\n".repeat(20))

  const layer = CommandCatalog.layer().pipe(
    Layer.provideMerge(SystemContext.layer({ cwd: workspace, configHome: config, trustProject: false })),
    Layer.provideMerge(PluginHost.layer({ plugins: [plugin] })),
    Layer.provideMerge(PluginUi.layerMemory),
    Layer.provideMerge(
      AgentRuntime.layer({ tools: [], interaction: Interaction.layerHeadless({ approveAll: true }) }).pipe(
        Layer.provideMerge(Fake.layer([])),
        Layer.provideMerge(SessionStore.layerMemory)
      )
    )
  )
  const runtime = ManagedRuntime.make(layer)
  try {
    const catalog = await runtime.runPromise(CommandCatalog.CommandCatalog)
    const context = await runtime.runPromise(SystemContext.SystemContext)
    const coldStart = performance.now()
    const listed = await runtime.runPromise(catalog.list())
    const cold = performance.now() - coldStart
    const names = new Map(listed.map((listing) => [listing.name, listing]))
    const floor = Effect.sync(() => names.get("template-39"))

    const build = context.build({ prompt: "hi", model: "fake" })
    // Warm the JIT on every path first.
    await perCall(runtime, catalog.resolve("template-39", "api"), 200, 3)
    await perCall(runtime, build, 20, 3)

    row(`catalog: ${listed.length} commands; first listing (reads the templates)`, cold, "ms")
    const lookup = await perCall(runtime, floor, 2000)
    row("floor: a Map lookup in the same loop", lookup, "ms")
    row(
      "catalog: resolve /template-39 (goal < 1 ms)",
      await perCall(runtime, catalog.resolve("template-39", "api"), 2000),
      "ms",
      lookup
    )
    row("catalog: resolve /stats", await perCall(runtime, catalog.resolve("stats", "api"), 2000), "ms", lookup)
    row(
      "catalog: an unknown /templat-3 with close matches",
      await perCall(runtime, catalog.resolve("templat-3", "api"), 500),
      "ms"
    )
    row("catalog: list every command", await perCall(runtime, catalog.list(), 2000), "ms")
    row(
      "catalog: reload, then list (reads the templates again)",
      await perCall(runtime, Effect.zipRight(catalog.reload, catalog.list()), 20),
      "ms"
    )
    const built = await runtime.runPromise(build)
    row(
      `system context: assemble (${built.parts.length} parts, ${(built.text.length / 1024).toFixed(1)} KiB)`,
      await perCall(runtime, build, 100),
      "ms"
    )
  } finally {
    await runtime.dispose()
    rmSync(root, { recursive: true, force: true })
  }
}
