// The performance goals of issue 17, as ratios to yardsticks measured in the same run: the built
// CLI and floor-agent.mjs (the least a Node agent can do for the same task) take turns against one
// local OpenAI-protocol server; `--version` and `--help` take turns with `node -e 0`. With Node 24
// installed by .ci/node24.sh, every row is measured on it too.

import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startOpenAiServer } from "../test/support/openaiServer.js"
import { measureInterleaved, type NodeCommand, type ProcessFigures } from "./measure.js"
import { node24 } from "./node24.js"

const bin = fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))
const floorAgent = fileURLToPath(new URL("./floor-agent.mjs", import.meta.url))

const runs = 11
const smallDeltas = 200
const largeDeltas = 10_200

interface NodeBinary {
  readonly label: string
  readonly path: string
  /** Extra arguments and environment a run of the CLI needs on this Node (its SQLite binding). */
  readonly args: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
}

const nodes = (): ReadonlyArray<NodeBinary> => {
  const here: NodeBinary = { label: `Node ${process.versions.node}`, path: process.execPath, args: [], env: {} }
  const other = node24()
  return other === undefined ? [here] : [here, { label: `Node ${other.version}`, ...other }]
}

interface Goal {
  readonly name: string
  readonly value: number
  readonly yardstick: number
  readonly unit: string
  readonly limit: number
  readonly against: string
}

const print = (label: string, goals: ReadonlyArray<Goal>): void => {
  console.log(`\n${label}`)
  console.log(
    `${"goal".padEnd(40)} ${"Alisio".padStart(10)} ${"yardstick".padStart(22)} ${"ratio".padStart(7)} ${"goal".padStart(7)}  holds`
  )
  for (const goal of goals) {
    const figure = (n: number) => `${n.toFixed(n < 10 ? 2 : 1)} ${goal.unit}`
    const ratio = goal.value / goal.yardstick
    console.log(
      `${goal.name.padEnd(40)} ${figure(goal.value).padStart(10)} ${`${figure(goal.yardstick)} ${goal.against}`.padStart(22)} ${`${ratio.toFixed(2)}×`.padStart(7)} ${`≤ ${goal.limit}×`.padStart(7)}  ${ratio <= goal.limit ? "yes" : "NO"}`
    )
  }
}

/** The two-turn task (one bash call, then `deltas` text deltas), by the floor and by the CLI in turns. */
const tasks = async (node: NodeBinary, home: string, baseURL: string) => {
  const env = {
    ...process.env,
    ...node.env,
    ALISIO_HOME: home,
    OPENAI_BASE_URL: baseURL,
    OPENAI_API_KEY: "k",
    NO_COLOR: "1"
  }
  const command = (args: ReadonlyArray<string>, extra: ReadonlyArray<string> = []): NodeCommand => ({
    node: node.path,
    args: [...extra, ...args],
    env
  })
  const prompt = (deltas: number) => `bench ${deltas}`
  const alisio = (deltas: number) =>
    command([bin, "run", "--yes", "-m", "openai/bench-model", prompt(deltas)], node.args)
  const floor = (deltas: number) => command([floorAgent, prompt(deltas)])
  const [floorSmall, alisioSmall, floorLarge, alisioLarge] = await measureInterleaved(runs, [
    floor(smallDeltas),
    alisio(smallDeltas),
    floor(largeDeltas),
    alisio(largeDeltas)
  ])
  return { floorSmall: floorSmall!, alisioSmall: alisioSmall!, floorLarge: floorLarge!, alisioLarge: alisioLarge! }
}

const perThousand = (small: ProcessFigures, large: ProcessFigures) =>
  ((large.cpuMs - small.cpuMs) * 1000) / (largeDeltas - smallDeltas)

export const run = async (): Promise<void> => {
  // The first request of a task gets the bash call; the one that carries its result gets the text.
  const server = await startOpenAiServer({
    models: ["bench-model"],
    replyFor: (request, index) => {
      const answered = (request.body.messages ?? []).some((m) => m.role === "tool")
      const prompt = JSON.stringify(request.body.messages?.find((m) => m.role === "user")?.content ?? "")
      const deltas = Number(/bench (\d+)/.exec(prompt)?.[1] ?? smallDeltas)
      return answered
        ? { kind: "text", text: "word ".repeat(deltas), chunks: deltas }
        : { kind: "tool", id: `call_${index}`, name: "bash", args: { command: "echo hi" } }
    }
  })
  try {
    for (const node of nodes()) {
      const home = mkdtempSync(join(tmpdir(), "alisio-bench-home-"))
      try {
        const nodeArgs = (args: ReadonlyArray<string>): NodeCommand => ({
          node: node.path,
          args: [...node.args, ...args],
          env: { ...process.env, ...node.env, ALISIO_HOME: home }
        })
        const [bare, version, help] = await measureInterleaved(runs, [
          { node: node.path, args: ["-e", "0"] },
          nodeArgs([bin, "--version"]),
          nodeArgs([bin, "--help"])
        ])
        const t = await tasks(node, home, server.baseURL)
        const goals: ReadonlyArray<Goal> = [
          {
            name: `two-turn task CPU (${smallDeltas} deltas)`,
            value: t.alisioSmall.cpuMs,
            yardstick: t.floorSmall.cpuMs,
            unit: "ms",
            limit: 1.4,
            against: "floor"
          },
          {
            name: `two-turn task peak RSS (${smallDeltas} deltas)`,
            value: t.alisioSmall.maxRssMb,
            yardstick: t.floorSmall.maxRssMb,
            unit: "MB",
            limit: 1.25,
            against: "floor"
          },
          {
            name: "CPU per 1 000 extra deltas",
            value: perThousand(t.alisioSmall, t.alisioLarge),
            yardstick: perThousand(t.floorSmall, t.floorLarge),
            unit: "ms",
            limit: 1.4,
            against: "floor"
          },
          {
            name: "--version wall (fastest run)",
            value: version!.minWallMs,
            yardstick: bare!.minWallMs,
            unit: "ms",
            limit: 1.3,
            against: "node -e 0"
          },
          {
            name: "--help wall (fastest run)",
            value: help!.minWallMs,
            yardstick: bare!.minWallMs,
            unit: "ms",
            limit: 2,
            against: "node -e 0"
          }
        ]
        print(`${node.label}: ${runs} runs each, the CLI and its yardstick in turns; CPU and RSS medians`, goals)
        console.log(
          `  also: two-turn task wall ${t.alisioSmall.wallMs.toFixed(0)} ms (floor ${t.floorSmall.wallMs.toFixed(0)} ms);` +
            ` ${largeDeltas} deltas: CPU ${t.alisioLarge.cpuMs.toFixed(0)} ms (floor ${t.floorLarge.cpuMs.toFixed(0)} ms),` +
            ` peak RSS ${t.alisioLarge.maxRssMb.toFixed(1)} MB (floor ${t.floorLarge.maxRssMb.toFixed(1)} MB);` +
            ` node -e 0: CPU ${bare!.cpuMs.toFixed(1)} ms, peak RSS ${bare!.maxRssMb.toFixed(1)} MB;` +
            ` median walls: node -e 0 ${bare!.wallMs.toFixed(0)} ms, --version ${version!.wallMs.toFixed(0)} ms,` +
            ` --help ${help!.wallMs.toFixed(0)} ms; CPU: --version ${version!.cpuMs.toFixed(0)} ms, --help ${help!.cpuMs.toFixed(0)} ms`
        )
      } finally {
        rmSync(home, { recursive: true, force: true })
      }
    }
  } finally {
    await server.close()
  }
  if (!existsSync(floorAgent)) throw new Error(`missing ${floorAgent}`)
}
