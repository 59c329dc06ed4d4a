// What MCP servers cost (MCP-1). (1) The time they add to a run's first turn: the real runner on
// the FakeProvider with no server, one, and two stdio servers (the SDK fixture), each run with a
// fresh runtime, so every server starts as it does in a CLI run; two should cost about what one
// does, because they start concurrently. The first start in a process also loads the SDK. (2) The
// built CLI, `alisio run` with and without two servers. (3) Per call (goal ≤ 1.2×), the echo tool
// of the fixture, each side on a connection of its own to a process of its own of the same
// fixture, the same arguments, N calls one after the other:
//   - Alisio: what the runner does once a call is approved (internal/toolCalls.ts), inside one
//     fiber as a run's calls are: JSON.parse of the model's argument text, then the registered
//     tool's `execute` (the check against its JSON Schema, compiled once; `tools/call` through the
//     SDK's Client on our stdio transport, interruptible, with the call's timeout and a progress
//     token; the result converted to a ToolResult). One `runPromise` per block of N calls.
//   - The SDK: `Client.callTool({ name, arguments })` awaited N times on the SDK's own stdio
//     transport: no signal, no progress token, no check, the raw result.
// Blocks of the two sides take turns (which goes first alternates); the figures are medians over
// the blocks of a block's wall time and CPU (this process's) divided by N, and the median of the
// ratios of neighbouring blocks. `MCP_BENCH_ONLY=calls pnpm bench mcp` runs only this part.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ToolCallId } from "@alisio/domain/Ids"
import type { Tool } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import type { McpServer } from "@alisio/runtime/Config"
import * as Interaction from "@alisio/runtime/Interaction"
import * as McpServers from "@alisio/runtime/McpServers"
import * as Runner from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { Tools } from "@alisio/runtime/Tools"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { startOpenAiServer } from "../test/support/openaiServer.js"
import { measureNode, median, row } from "./measure.js"

const fixture = fileURLToPath(new URL("../packages/runtime/test/fixtures/mcp/server.mjs", import.meta.url))
const bin = fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))
const server: McpServer = { type: "stdio", command: process.execPath, args: [fixture] }
const ROUNDS = 7
const CALLS = 2000

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

const context = {
  sessionId: "bench" as never,
  runId: "bench" as never,
  toolCallId: ToolCallId.make("bench"),
  cwd: tmpdir(),
  readOnly: false,
  progress: () => Effect.void,
  approveExternalPath: () => Effect.void,
  askUser: () => Effect.succeed("")
}

/** The arguments as the model sends them (JSON text), and as an SDK caller passes them. */
const ARGUMENTS_JSON = JSON.stringify({ text: "x" })
const BLOCK = 25

/** One echo call, two ways (see the top of the file). */
const perCall = async (logFolder: string) => {
  const runtime = runtimeWith({ fixture: server }, logFolder)
  const client = new Client({ name: "bench", version: "1" })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [fixture], stderr: "ignore" }))
  try {
    const tool = await runtime.runPromise(
      Effect.gen(function* () {
        yield* Effect.flatMap(McpServers.McpServers, (mcp) => mcp.ready)
        const all = yield* Effect.flatMap(Tools, (tools) => tools.all)
        return all.find((each) => each.name === "mcp__fixture__echo")! as Tool<never, unknown>
      })
    )
    const viaAlisio = (calls: number) =>
      runtime.runPromise(
        Effect.gen(function* () {
          for (let i = 0; i < calls; i++) {
            const result = yield* tool.execute(JSON.parse(ARGUMENTS_JSON), context)
            if (result.isError === true) throw new Error("the echo call failed")
          }
        })
      )
    const direct = async (calls: number) => {
      for (let i = 0; i < calls; i++) {
        const result = await client.callTool({ name: "echo", arguments: { text: "x" } })
        if (result.isError === true) throw new Error("the echo call failed")
      }
    }
    await viaAlisio(100)
    await direct(100)
    const walls = { alisio: [] as Array<number>, sdk: [] as Array<number> }
    const cpus = { alisio: [] as Array<number>, sdk: [] as Array<number> }
    const block = async (calls: (n: number) => Promise<unknown>, side: "alisio" | "sdk") => {
      const used = process.cpuUsage()
      const start = performance.now()
      await calls(BLOCK)
      walls[side].push((performance.now() - start) / BLOCK)
      const { system, user } = process.cpuUsage(used)
      cpus[side].push((user + system) / 1000 / BLOCK)
    }
    for (let i = 0; i < CALLS / BLOCK; i++) {
      // Which side goes first alternates, so neither always follows the other's garbage.
      if (i % 2 === 0) {
        await block(viaAlisio, "alisio")
        await block(direct, "sdk")
      } else {
        await block(direct, "sdk")
        await block(viaAlisio, "alisio")
      }
    }
    // The ratio of each pair of neighbouring blocks: the load of the machine changes from one
    // second to the next, far less from one block to the one beside it.
    const ratios = (figures: { alisio: Array<number>; sdk: Array<number> }) =>
      figures.alisio.map((alisio, i) => alisio / figures.sdk[i]!)
    return {
      alisio: median(walls.alisio),
      sdk: median(walls.sdk),
      wallRatio: median(ratios(walls)),
      alisioCpu: median(cpus.alisio),
      sdkCpu: median(cpus.sdk),
      cpuRatio: median(ratios(cpus))
    }
  } finally {
    await client.close()
    await runtime.dispose()
  }
}

const perCallRows = async (logFolder: string) => {
  const calls = await perCall(logFolder)
  row("one call through the SDK client directly: wall", calls.sdk, "ms")
  row("one call through McpServers: wall", calls.alisio, "ms", calls.sdk)
  row("  median of block pairs (goal ≤ 1.2×)", calls.wallRatio, "×")
  row("one call through the SDK client directly: CPU", calls.sdkCpu, "ms")
  row("one call through McpServers: CPU", calls.alisioCpu, "ms", calls.sdkCpu)
  row("  median of block pairs", calls.cpuRatio, "×")
}

export const run = async (): Promise<void> => {
  const root = mkdtempSync(join(tmpdir(), "alisio-bench-mcp-"))
  const logFolder = join(root, "mcp")
  try {
    if (process.env.MCP_BENCH_ONLY === "calls") return await perCallRows(logFolder)
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

    await perCallRows(logFolder)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
