// `pnpm bench:profile [deltas]`: a CPU profile of one two-turn task of the built CLI (as in
// goals.bench.ts, in a state home an earlier run created) against the local OpenAI-protocol server, summarised by self time: by package,
// by source module and by function. The bundle's `// path` comments (esbuild writes one before
// each module) map a profile's line back to its source module. The raw profile stays in the
// folder printed last (open it in Chrome DevTools for a flame graph).
// ALISIO_PROFILE_NODE=/path/to/node profiles another Node (see .ci/node24.sh).

import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { startOpenAiServer } from "../test/support/openaiServer.js"
import { node24 } from "./node24.js"

const bin = fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))
const deltas = Number(process.argv[2] ?? 200)

interface ProfileNode {
  readonly id: number
  readonly callFrame: { functionName: string; url: string; lineNumber: number }
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** For each bundle file, the source module that each line belongs to. */
const moduleMaps = new Map<string, ReadonlyArray<string>>()
const moduleAt = (url: string, line: number): string => {
  // The run build is compiled by CodeCache.ts, which names it by its path rather than a URL.
  const isFile = url.startsWith("file://") || url.startsWith("/")
  if (!isFile || !url.includes("/dist/bundle/")) return url.replace(/^file:\/\//, "")
  let map = moduleMaps.get(url)
  if (map === undefined) {
    const modules: Array<string> = []
    let current = url.replace(/.*\/dist\/bundle\//, "bundle ")
    for (const text of readFileSync(url.startsWith("/") ? url : fileURLToPath(url), "utf8").split("\n")) {
      const match = /^\/\/ (\S+\.[cm]?[jt]sx?)$/.exec(text)
      if (match) current = match[1]!.replace(/^.*node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?/, "")
      modules.push(current)
    }
    map = modules
    moduleMaps.set(url, map)
  }
  return map[line] ?? url
}

const packageOf = (module: string): string => {
  if (module === "") return "(vm)"
  if (module.startsWith("(")) return module
  if (module.startsWith("node:") || !module.includes("/")) return "node internals"
  if (module.startsWith("@")) return module.split("/").slice(0, 2).join("/")
  if (module.startsWith("../") || module.startsWith("src/")) {
    const pkg = /^(?:\.\.\/)*(?:packages\/)?(plugins\/[^/]+|[^/]+)\/src/.exec(module)?.[1]
    return pkg === undefined ? "alisio" : `alisio ${pkg}`
  }
  return module.split("/")[0]!
}

const top = (totals: Map<string, number>, all: number, n: number, title: string) => {
  console.log(`\n${title}`)
  for (const [name, ms] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    console.log(`${ms.toFixed(1).padStart(8)} ms ${((ms * 100) / all).toFixed(1).padStart(5)}%  ${name}`)
  }
}

const summarise = (profile: Profile) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map<number, number>()
  for (const [i, id] of profile.samples.entries()) {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000)
  }
  const byPackage = new Map<string, number>()
  const byModule = new Map<string, number>()
  const byFunction = new Map<string, number>()
  let all = 0
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame
    const module = url === "" ? `(${functionName || "anonymous"})` : moduleAt(url, lineNumber)
    const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + ms)
    add(byPackage, packageOf(module))
    add(byModule, module)
    add(byFunction, `${functionName || "(anonymous)"}  ${module}:${lineNumber + 1}`)
    all += ms
  }
  console.log(`sampled: ${all.toFixed(0)} ms`)
  top(byPackage, all, 15, "self time by package")
  top(byModule, all, 25, "self time by module")
  top(byFunction, all, 30, "self time by function")
}

const main = async () => {
  const server = await startOpenAiServer({
    models: ["bench-model"],
    replyFor: (request, index) =>
      (request.body.messages ?? []).some((m) => m.role === "tool")
        ? { kind: "text", text: "word ".repeat(deltas), chunks: deltas }
        : { kind: "tool", id: `call_${index}`, name: "bash", args: { command: "echo hi" } }
  })
  const dir = mkdtempSync(join(tmpdir(), "alisio-profile-"))
  const given = process.env.ALISIO_PROFILE_NODE
  const node = given === undefined ? undefined : resolve(given)
  const preload = node !== undefined && node === node24()?.path ? node24()!.args : []
  const env = {
    ...process.env,
    ALISIO_HOME: join(dir, "home"),
    OPENAI_BASE_URL: server.baseURL,
    OPENAI_API_KEY: "k",
    NO_COLOR: "1"
  }
  const task = ["run", "--yes", "-m", "openai/bench-model", "say hi"]
  const spawned = async (args: ReadonlyArray<string>) => {
    const child = spawn(node ?? process.execPath, [...preload, ...args], {
      env,
      stdio: ["ignore", "ignore", "inherit"]
    })
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    if (code !== 0) throw new Error(`the run exited ${code}`)
  }
  try {
    // A first run creates the state home (migrations), as in the benchmark, where runs share one.
    await spawned([bin, ...task])
    await spawned(["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "200", bin, ...task])
  } finally {
    await server.close()
  }
  const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"))!
  summarise(JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile)
  console.log(`\nprofile: ${join(dir, file)}`)
}

await main()
