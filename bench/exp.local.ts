// Local experiment harness (not committed): variants of the two-turn task, interleaved.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startOpenAiServer } from "../test/support/openaiServer.js"
import { measureInterleaved, type NodeCommand } from "./measure.js"
import { node24 } from "./node24.js"

const bin = process.env.EXP_BIN ?? fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))
const floorAgent = fileURLToPath(new URL("./floor-agent.mjs", import.meta.url))
const runs = Number(process.env.EXP_RUNS ?? 9)
const variants: Array<{ label: string; pre?: string[]; post?: string[]; env?: Record<string, string>; bin?: string }> =
  JSON.parse(process.argv[2] ?? "[]")
const server = await startOpenAiServer({
  models: ["bench-model"],
  replyFor: (request, index) => {
    const answered = (request.body.messages ?? []).some((m) => m.role === "tool")
    return answered
      ? {
          kind: "text",
          text: "word ".repeat(Number(process.env.EXP_DELTAS ?? 200)),
          chunks: Number(process.env.EXP_DELTAS ?? 200)
        }
      : { kind: "tool", id: `call_${index}`, name: "bash", args: { command: "echo hi" } }
  }
})
const n24 = node24()
const useNode = process.env.EXP_NODE === "24" && n24 ? n24 : { path: process.execPath, args: [], env: {} }
const home = mkdtempSync(join(tmpdir(), "alisio-exp-"))
const env = {
  ...process.env,
  ...useNode.env,
  ALISIO_HOME: home,
  OPENAI_BASE_URL: server.baseURL,
  OPENAI_API_KEY: "k",
  NO_COLOR: "1"
}
const commands: NodeCommand[] = [
  { node: useNode.path, args: [floorAgent, "bench 200"], env },
  ...variants.map((v) => ({
    node: useNode.path,
    args: [
      ...useNode.args,
      ...(v.pre ?? []),
      v.bin ?? bin,
      "run",
      "--yes",
      "-m",
      "openai/bench-model",
      ...(v.post ?? []),
      "bench 200"
    ],
    env: { ...env, ...(v.env ?? {}) }
  }))
]
const figures = await measureInterleaved(runs, commands)
const labels = ["floor", ...variants.map((v) => v.label)]
figures.forEach((f, i) =>
  console.log(
    `${labels[i]!.padEnd(30)} cpu ${f.cpuMs.toFixed(0).padStart(6)} ms (${(f.cpuMs / figures[0]!.cpuMs).toFixed(2)}×)  rss ${f.maxRssMb.toFixed(1)} MB (${(f.maxRssMb / figures[0]!.maxRssMb).toFixed(2)}×)  wall ${f.wallMs.toFixed(0)}`
  )
)
await server.close()
process.exit(0)
