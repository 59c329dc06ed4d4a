// What plugins cost the built CLI: `--version` must load none of them (goal: < 10 ms over the
// same command without plugins configured), and a run with the builtin plugins loaded should cost
// < 30 ms more than one with them disabled. An external plugin adds Node's module hooks (on the
// main thread from Node 22.15, a loader thread on Node 20) and its own import; measured too. CPU time is the steadier figure on a busy machine.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startOpenAiServer } from "../test/support/openaiServer.js"
import { weatherPluginSource, writePluginPackage } from "../test/support/pluginPackage.js"
import { measureNode, median, type ProcessFigures, row } from "./measure.js"

const bin = fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))
const RUNS = 11

/** Runs each variant once per round, `rounds` times; the medians of each. */
const interleaved = async <K extends string>(
  rounds: number,
  variants: Record<K, { readonly args: ReadonlyArray<string>; readonly env: NodeJS.ProcessEnv }>
): Promise<Record<K, ProcessFigures>> => {
  const samples = Object.fromEntries(Object.keys(variants).map((key) => [key, [] as Array<ProcessFigures>])) as Record<
    K,
    Array<ProcessFigures>
  >
  for (let round = 0; round < rounds; round++) {
    for (const key of Object.keys(variants) as Array<K>) {
      samples[key].push(await measureNode(1, variants[key].args, { env: variants[key].env }))
    }
  }
  return Object.fromEntries(
    (Object.keys(variants) as Array<K>).map((key) => [
      key,
      {
        wallMs: median(samples[key].map((sample) => sample.wallMs)),
        cpuMs: median(samples[key].map((sample) => sample.cpuMs)),
        maxRssMb: median(samples[key].map((sample) => sample.maxRssMb))
      }
    ])
  ) as Record<K, ProcessFigures>
}

export const run = async (): Promise<void> => {
  const root = mkdtempSync(join(tmpdir(), "alisio-bench-plugins-"))
  const server = await startOpenAiServer({ replyFor: () => ({ kind: "text", text: "ok" }) })
  try {
    const plugin = writePluginPackage(root, "weather", { name: "alisio-plugin-weather", source: weatherPluginSource })
    const plain = join(root, "plain")
    const configured = join(root, "configured")
    const env = (home: string) => ({
      ...process.env,
      ALISIO_HOME: home,
      OPENAI_BASE_URL: server.baseURL,
      OPENAI_API_KEY: "k",
      NO_COLOR: "1"
    })
    // A home whose config lists an external plugin: `--version` must not look at it.
    mkdirSync(configured, { recursive: true })
    writeFileSync(join(configured, "config.yaml"), `plugins:\n  - ${plugin}\n`)

    // Variants alternate round by round, so a change in the machine's load hits each alike.
    const task = ["run", "-m", "openai/test-model", "say ok"]
    const figures = await interleaved(RUNS, {
      floor: { args: ["-e", "0"], env: env(plain) },
      version: { args: [bin, "--version"], env: env(plain) },
      versionConfigured: { args: [bin, "--version"], env: env(configured) },
      runWithout: {
        args: [bin, ...task, "--disable-plugin", "memory", "--disable-plugin", "subagents"],
        env: env(plain)
      },
      runMemoryOnly: { args: [bin, ...task, "--disable-plugin", "subagents"], env: env(plain) },
      runBuiltin: { args: [bin, ...task], env: env(plain) },
      runExternal: { args: [bin, ...task, "--plugin", plugin], env: env(plain) }
    })
    const { floor, runBuiltin, runExternal, runMemoryOnly, runWithout, version, versionConfigured } = figures
    row("node -e 0 (floor): CPU", floor.cpuMs, "ms")
    row("--version: CPU", version.cpuMs, "ms", floor.cpuMs)
    row("--version, an external plugin configured: CPU", versionConfigured.cpuMs, "ms", floor.cpuMs)
    row("  difference (goal < 10 ms)", versionConfigured.cpuMs - version.cpuMs, "ms")
    row("run, builtin plugins disabled: CPU", runWithout.cpuMs, "ms", floor.cpuMs)
    row("run, builtin plugins (memory, subagents): CPU", runBuiltin.cpuMs, "ms", floor.cpuMs)
    row("  difference (goal < 30 ms)", runBuiltin.cpuMs - runWithout.cpuMs, "ms")
    row("run, memory only (subagents disabled): CPU", runMemoryOnly.cpuMs, "ms", floor.cpuMs)
    row("  the subagents plugin on a run that never calls task", runBuiltin.cpuMs - runMemoryOnly.cpuMs, "ms")
    row("run, builtin + one external plugin: CPU", runExternal.cpuMs, "ms", floor.cpuMs)
    row("  difference to builtin only", runExternal.cpuMs - runBuiltin.cpuMs, "ms")
    row("run, builtin plugins disabled: wall", runWithout.wallMs, "ms", floor.wallMs)
    row("run, memory only (subagents disabled): wall", runMemoryOnly.wallMs, "ms", floor.wallMs)
    row("run, builtin plugins (memory, subagents): wall", runBuiltin.wallMs, "ms", floor.wallMs)
    row("run, builtin + one external plugin: wall", runExternal.wallMs, "ms", floor.wallMs)
    row("run, builtin plugins: peak RSS", runBuiltin.maxRssMb, "MB", runWithout.maxRssMb)
    row("run, builtin + one external plugin: peak RSS", runExternal.maxRssMb, "MB", runWithout.maxRssMb)
  } finally {
    await server.close()
    rmSync(root, { recursive: true, force: true })
  }
}
