// What MCP servers cost (MCP-1). (1) The time they add to a run's first turn: the real runner on
// the FakeProvider with no server, one, and two stdio servers (the SDK fixture), each run with a
// fresh runtime, so every server starts as it does in a CLI run; two should cost about what one
// does, because they start concurrently. The first start in a process also loads the SDK. (2) The
// built CLI, `alisio run` with and without two servers. (3) Per call (goal ≤ 1.2×), the echo tool
// of the fixture, `bench/mcp-calls.mjs` forked once for each side per round, in a process of its own
// on the built packages (plain Node, no tsx), each side on a process of its own of the fixture
// server, the same arguments: a session's first calls measured, then calls up to a warm-up past
// V8's tier-up of both call paths, then N measured calls in blocks (the goal's figure:
// what a call costs once compiled, not when V8 happens to compile it; bench/README.md says why):
//   - Alisio: what the runner does once a call is approved (internal/toolCalls.ts), inside one
//     fiber as a run's calls are: JSON.parse of the model's argument text, then the registered
//     tool's `execute` (the check against its JSON Schema, compiled once; `tools/call` through the
//     SDK's Client on our stdio transport, interruptible, with the call's timeout and a progress
//     token; the result converted to a ToolResult).
//   - The SDK: `Client.callTool({ name, arguments })` awaited N times on the SDK's own stdio
//     transport: no signal, no progress token, no check, the raw result.
// The two sides' processes take turns in blocks of calls; which goes first alternates; the figures
// are medians over the rounds, and the median of the two sides' ratio in each round. Why
// processes of their own: bench/README.md.
// `MCP_BENCH_ONLY=calls pnpm bench mcp` runs only this part.

import { fork } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Fake from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import type { McpServer } from "@alisio/runtime/Config"
import * as Interaction from "@alisio/runtime/Interaction"
import * as McpServers from "@alisio/runtime/McpServers"
import * as Runner from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { startOpenAiServer } from "../test/support/openaiServer.js"
import { measureNode, median, row } from "./measure.js"

const fixture = fileURLToPath(new URL("../packages/runtime/test/fixtures/mcp/server.mjs", import.meta.url))
const bin = fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))
const server: McpServer = { type: "stdio", command: process.execPath, args: [fixture] }
const ROUNDS = 7

const runtimeWith = (servers: Record<string, McpServer>, logFolder: string) =>
  ManagedRuntime.make(
    McpServers.layer({ servers, cwd: tmpdir(), logFolder }).pipe(
      Layer.provideMerge(
        AgentRuntime.layer({ tools: [], interaction: Interaction.layerHeadless({ approveAll: true }) }).pipe(
          Layer.provideMerge(Fake.layer(() => Fake.answer("ok"))),
          Layer.provideMerge(SessionStore.layerMemory)
        )
      )
    )
  )

/** One run of one turn on a fresh runtime: its wall time (servers start inside it), then the runtime closes. */
const firstTurn = async (servers: Record<string, McpServer>, logFolder: string): Promise<number> => {
  const runtime = runtimeWith(servers, logFolder)
  try {
    const start = performance.now()
    await runtime.runPromise(
      Effect.flatMap(Runner.Runner, (runner) => runner.run({ cwd: tmpdir(), prompt: "hi", model: "fake" }))
    )
    return performance.now() - start
  } finally {
    await runtime.dispose()
  }
}

const calls = fileURLToPath(new URL("./mcp-calls.mjs", import.meta.url))
const root = fileURLToPath(new URL("..", import.meta.url))
const CALL_ROUNDS = 7
/** A session's first calls, measured on their own: the call path's compilation is in them. */
const FIRST = 300
/**
 * V8 optimizes a function once it has run enough of its own bytecode: a function run once a call
 * is compiled between its ~800th and ~6 000th call, so after 2 000 calls either side may still be
 * compiling during the measured ones (bench/README.md, "What the per-call figure is made of").
 */
const WARM_UP = 10_000
const MEASURED = 3000
/** The measured calls, in blocks of each side in turn. */
const BLOCKS = 10

/** The newest modification time of the files under a folder (0 when it is absent). */
const newest = (folder: string): number => {
  if (!existsSync(folder)) return 0
  let latest = 0
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs)
  }
  return latest
}

/** The first of these packages whose `dist/` is missing or older than its sources. */
const staleBuild = (names: ReadonlyArray<string>): string | undefined => {
  for (const name of names) {
    const built = join(root, "packages", name, "dist", ".tsbuildinfo")
    if (!existsSync(built) || statSync(built).mtimeMs < newest(join(root, "packages", name, "src"))) {
      return `packages/${name}/dist`
    }
  }
  return undefined
}

interface CallFigures {
  readonly wallMs: number
  readonly cpuMs: number
  readonly gcMsPerCall: number
}

type Side = "alisio" | "sdk"

/** One side's process (`mcp-calls.mjs` forked): `calls(n, timed)` makes n calls, timed or not. */
const startSide = (which: Side) =>
  new Promise<{ calls: (n: number, timed: boolean) => Promise<CallFigures>; close: () => Promise<void> }>(
    (resolve, reject) => {
      // Plain Node on the built packages: not the bench's own tsx.
      const child = fork(calls, [which], { execArgv: [], stdio: ["ignore", "ignore", "inherit", "ipc"] })
      let answer: ((figures: CallFigures) => void) | undefined
      child.on("error", reject)
      child.on("exit", (code) => {
        if (code !== 0) reject(new Error(`bench mcp: the ${which} side exited with code ${code}`))
      })
      child.on("message", (message: CallFigures & { ready?: boolean }) => {
        if (message.ready === true) {
          resolve({
            calls: (n, timed) =>
              new Promise<CallFigures>((done) => {
                answer = done
                child.send({ calls: n, timed })
              }),
            close: () =>
              new Promise<void>((done) => {
                child.once("exit", () => done())
                child.send({ calls: 0 })
              })
          })
        } else answer?.(message)
      })
    }
  )

/** The sum of figures a call over blocks of the same size, as one figure a call. */
const mean = (blocks: ReadonlyArray<CallFigures>): CallFigures => ({
  wallMs: blocks.reduce((sum, each) => sum + each.wallMs, 0) / blocks.length,
  cpuMs: blocks.reduce((sum, each) => sum + each.cpuMs, 0) / blocks.length,
  gcMsPerCall: blocks.reduce((sum, each) => sum + each.gcMsPerCall, 0) / blocks.length
})

/**
 * One echo call, two ways (see the top of the file). Each round starts a process a side; both
 * connect, then take turns: the first calls of a session, the warm-up, then blocks of measured
 * calls, each side's block right after the other's, so that a change in the machine's load falls
 * on both sides alike. Which side goes first alternates between blocks and rounds.
 */
const perCall = async () => {
  const rounds: Array<Record<Side, { first: CallFigures; after: CallFigures }>> = []
  for (let round = 0; round < CALL_ROUNDS; round++) {
    const sides = { alisio: await startSide("alisio"), sdk: await startSide("sdk") }
    const order = (turn: number): ReadonlyArray<Side> =>
      (round + turn) % 2 === 0 ? ["alisio", "sdk"] : ["sdk", "alisio"]
    try {
      const first = {} as Record<Side, CallFigures>
      for (const which of order(0)) first[which] = await sides[which].calls(FIRST, true)
      for (const which of order(0)) await sides[which].calls(WARM_UP - FIRST, false)
      const blocks = { alisio: [] as Array<CallFigures>, sdk: [] as Array<CallFigures> }
      for (let block = 0; block < BLOCKS; block++) {
        for (const which of order(block)) blocks[which].push(await sides[which].calls(MEASURED / BLOCKS, true))
      }
      rounds.push({
        alisio: { first: first.alisio, after: mean(blocks.alisio) },
        sdk: { first: first.sdk, after: mean(blocks.sdk) }
      })
    } finally {
      await Promise.all([sides.alisio.close(), sides.sdk.close()])
    }
  }
  const window = (pick: "first" | "after") => {
    const of = (which: Side, key: keyof CallFigures) => median(rounds.map((each) => each[which][pick][key]))
    // The ratio within each round, whose two sides took turns.
    const ratio = (key: keyof CallFigures) => median(rounds.map((each) => each.alisio[pick][key] / each.sdk[pick][key]))
    return {
      alisio: of("alisio", "wallMs"),
      sdk: of("sdk", "wallMs"),
      wallRatio: ratio("wallMs"),
      alisioCpu: of("alisio", "cpuMs"),
      sdkCpu: of("sdk", "cpuMs"),
      cpuRatio: ratio("cpuMs"),
      alisioGc: of("alisio", "gcMsPerCall"),
      sdkGc: of("sdk", "gcMsPerCall")
    }
  }
  return { ...window("after"), first: window("first") }
}

const perCallRows = async () => {
  const load = loadavg()[0]!
  const calls = await perCall()
  console.log(
    `per call: ${CALL_ROUNDS} rounds, a process a side taking turns; a session's first ${FIRST} calls, then ${MEASURED} calls in ${BLOCKS} blocks after ${WARM_UP} to warm up; load ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`
  )
  row(`the first ${FIRST} calls, through the SDK client directly: wall`, calls.first.sdk, "ms")
  row(`the first ${FIRST} calls, through McpServers: wall`, calls.first.alisio, "ms", calls.first.sdk)
  row("  median of the rounds' ratios", calls.first.wallRatio, "×")
  row(`the first ${FIRST} calls, through the SDK client directly: CPU`, calls.first.sdkCpu, "ms")
  row(`the first ${FIRST} calls, through McpServers: CPU`, calls.first.alisioCpu, "ms", calls.first.sdkCpu)
  row("  median of the rounds' ratios", calls.first.cpuRatio, "×")
  row("one call through the SDK client directly: wall", calls.sdk, "ms")
  row("one call through McpServers: wall", calls.alisio, "ms", calls.sdk)
  row("  median of the rounds' ratios (goal ≤ 1.2×)", calls.wallRatio, "×")
  row("one call through the SDK client directly: CPU", calls.sdkCpu, "ms")
  row("one call through McpServers: CPU", calls.alisioCpu, "ms", calls.sdkCpu)
  row("  median of the rounds' ratios", calls.cpuRatio, "×")
  row("  GC pauses a call: SDK", calls.sdkGc, "ms")
  row("  GC pauses a call: McpServers", calls.alisioGc, "ms")
}

export const run = async (): Promise<void> => {
  // The per-call part runs the packages' `dist/` (the CLI's bundle is made from them), the other
  // parts spawn the CLI's bundle too.
  const callsOnly = process.env.MCP_BENCH_ONLY === "calls"
  const stale = staleBuild(callsOnly ? ["domain", "providers", "runtime"] : ["domain", "providers", "runtime", "cli"])
  if (stale !== undefined) {
    console.error(`bench mcp: ${stale} is missing or older than its sources: run pnpm build`)
    process.exit(1)
  }
  const root = mkdtempSync(join(tmpdir(), "alisio-bench-mcp-"))
  const logFolder = join(root, "mcp")
  try {
    if (callsOnly) return await perCallRows()
    const cold = await firstTurn({ one: server }, logFolder)
    row("first turn, the first start in a process (SDK loads)", cold, "ms")
    const samples = { none: [] as Array<number>, one: [] as Array<number>, two: [] as Array<number> }
    for (let round = 0; round < ROUNDS; round++) {
      samples.none.push(await firstTurn({}, logFolder))
      samples.one.push(await firstTurn({ one: server }, logFolder))
      samples.two.push(await firstTurn({ one: server, two: server }, logFolder))
    }
    const none = median(samples.none)
    const one = median(samples.one)
    const two = median(samples.two)
    row("first turn, no MCP server", none, "ms")
    row("first turn, one stdio server", one, "ms")
    row("first turn, two stdio servers", two, "ms")
    row("  added by two servers", two - none, "ms")
    row("  two servers / one server (concurrent: ≈ 1)", two / one, "×")

    const cliServer = await startOpenAiServer({ replyFor: () => ({ kind: "text", text: "ok" }) })
    try {
      const env = (home: string) => ({
        ...process.env,
        ALISIO_HOME: home,
        OPENAI_BASE_URL: cliServer.baseURL,
        OPENAI_API_KEY: "k",
        NO_COLOR: "1"
      })
      const plain = join(root, "plain")
      const configured = join(root, "configured")
      mkdirSync(configured, { recursive: true })
      const entry = `{ command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(fixture)}] }`
      writeFileSync(join(configured, "config.yaml"), `mcpServers:\n  one: ${entry}\n  two: ${entry}\n`)
      const task = [bin, "run", "-q", "-m", "openai/test-model", "say ok"]
      const walls = { plain: [] as Array<number>, configured: [] as Array<number> }
      for (let round = 0; round < ROUNDS; round++) {
        walls.plain.push((await measureNode(1, task, { env: env(plain) })).wallMs)
        walls.configured.push((await measureNode(1, task, { env: env(configured) })).wallMs)
      }
      row("alisio run, no MCP server: wall", median(walls.plain), "ms")
      row("alisio run, two stdio servers: wall", median(walls.configured), "ms")
      row("  added by two servers", median(walls.configured) - median(walls.plain), "ms")
    } finally {
      await cliServer.close()
    }

    await perCallRows()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
