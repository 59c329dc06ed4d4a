// What plugins cost the built CLI: `--version` must load none of them (goal: < 10 ms over the
// same command without plugins configured), and a run with the builtin plugins loaded should cost
// < 30 ms more than one with them disabled. An external plugin adds Node's module hooks (a loader
// thread) and its own import; measured too. CPU time is the steadier figure on a busy machine.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startOpenAiServer } from "../test/support/openaiServer.js"
import { weatherPluginSource, writePluginPackage } from "../test/support/pluginPackage.js"
import { measureNode, row } from "./measure.js"

const bin = fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))
const RUNS = 9

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

    const floor = await measureNode(RUNS, ["-e", "0"])
    row("node -e 0 (floor): CPU", floor.cpuMs, "ms")
    const version = await measureNode(RUNS, [bin, "--version"], { env: env(plain) })
    const versionConfigured = await measureNode(RUNS, [bin, "--version"], { env: env(configured) })
    row("--version: CPU", version.cpuMs, "ms", floor.cpuMs)
    row("--version, an external plugin configured: CPU", versionConfigured.cpuMs, "ms", floor.cpuMs)
    row("  difference (goal < 10 ms)", versionConfigured.cpuMs - version.cpuMs, "ms")

    const task = ["run", "-m", "openai/test-model", "say ok"]
    const without = await measureNode(RUNS, [bin, ...task, "--disable-plugin", "memory"], { env: env(plain) })
    const builtin = await measureNode(RUNS, [bin, ...task], { env: env(plain) })
    const external = await measureNode(RUNS, [bin, ...task, "--plugin", plugin], { env: env(plain) })
    row("run, no plugin: CPU", without.cpuMs, "ms", floor.cpuMs)
    row("run, builtin plugins: CPU", builtin.cpuMs, "ms", floor.cpuMs)
    row("  difference (goal < 30 ms)", builtin.cpuMs - without.cpuMs, "ms")
    row("run, builtin + one external plugin: CPU", external.cpuMs, "ms", floor.cpuMs)
    row("  difference to builtin only", external.cpuMs - builtin.cpuMs, "ms")
    row("run, no plugin: wall", without.wallMs, "ms", floor.wallMs)
    row("run, builtin plugins: wall", builtin.wallMs, "ms", floor.wallMs)
    row("run, builtin + one external plugin: wall", external.wallMs, "ms", floor.wallMs)
    row("run, builtin plugins: peak RSS", builtin.maxRssMb, "MB", without.maxRssMb)
  } finally {
    await server.close()
    rmSync(root, { recursive: true, force: true })
  }
}
