// What MCP servers cost (MCP-1). (1) The time they add to a run's first turn: the real runner on
// the FakeProvider with no server, one, and two stdio servers (the SDK fixture), each run with a
// fresh runtime, so every server starts as it does in a CLI run; two should cost about what one
// does, because they start concurrently. The first start in a process also loads the SDK. (2) The
// built CLI, `alisio run` with and without two servers. (3) Per call: a tool called through
// McpServers (argument check, Effect, result conversion) against the SDK's client called directly,
// on the same server (goal ≤ 1.2×).

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
const CALLS = 1000

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

/** Median time of one echo call: through McpServers' tool, and through the SDK's client directly. */
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
    const viaAlisio = () => runtime.runPromise(tool.execute({ text: "x" }, context))
    const direct = () => client.callTool({ name: "echo", arguments: { text: "x" } })
    for (let i = 0; i < 50; i++) {
      await viaAlisio()
      await direct()
    }
    // Interleaved blocks, so a change in the machine's load hits both alike; wall time per call
    // (a round trip to the server process), and this process's CPU per call.
    const alisio: Array<number> = []
    const sdk: Array<number> = []
    const cpu = { alisio: 0, sdk: 0 }
    const block = async (call: () => Promise<unknown>, walls: Array<number>) => {
      const used = process.cpuUsage()
      for (let i = 0; i < 20; i++) {
        const start = performance.now()
        await call()
        walls.push(performance.now() - start)
      }
      const { system, user } = process.cpuUsage(used)
      return (user + system) / 1000
    }
    for (let i = 0; i < CALLS / 20; i++) {
      cpu.alisio += await block(viaAlisio, alisio)
      cpu.sdk += await block(direct, sdk)
    }
    return {
      alisio: median(alisio),
      sdk: median(sdk),
      alisioCpu: cpu.alisio / alisio.length,
      sdkCpu: cpu.sdk / sdk.length
    }
  } finally {
    await client.close()
    await runtime.dispose()
  }
}

export const run = async (): Promise<void> => {
  const root = mkdtempSync(join(tmpdir(), "alisio-bench-mcp-"))
  const logFolder = join(root, "mcp")
  try {
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

    const calls = await perCall(logFolder)
    row("one call through the SDK client directly: wall", calls.sdk, "ms")
    row("one call through McpServers: wall (goal ≤ 1.2×)", calls.alisio, "ms", calls.sdk)
    row("one call through the SDK client directly: CPU", calls.sdkCpu, "ms")
    row("one call through McpServers: CPU", calls.alisioCpu, "ms", calls.sdkCpu)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
