// One side of the per-call part of `pnpm bench mcp`, in a process of its own, as plain JavaScript
// on the built packages (`dist/`, what the CLI's bundle is made from), never through tsx:
//   node bench/mcp-calls.mjs <alisio|sdk> <calls> <warm-up calls> [<first calls>]
// connects to a process of its own of the MCP fixture server, measures the first calls (none
// unless asked: what a session's first calls cost, V8's compilation of the call path included),
// goes on with calls up to the warm-up's count, then makes the measured ones one after the other,
// and prints what they cost as one JSON line: wall and CPU (this process's: the server's counts
// for neither side) per call, the garbage collector's pauses, and the first calls' wall and CPU.
// Why a process per side: bench/README.md, "MCP (issue 13)". Forked with an IPC channel (what
// mcp.bench.ts does), it connects and then makes the calls each message asks for, so that two sides
// can take turns in short blocks.
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PerformanceObserver } from "node:perf_hooks"
import { fileURLToPath } from "node:url"

const [side, callsText, warmUpText, firstText = "0"] = process.argv.slice(2)
const calls = Number(callsText)
const warmUp = Number(warmUpText)
const first = Number(firstText)
const fixture = fileURLToPath(new URL("../packages/runtime/test/fixtures/mcp/server.mjs", import.meta.url))
/** The arguments as the model sends them (JSON text), and as an SDK caller passes them. */
const ARGUMENTS_JSON = JSON.stringify({ text: "x" })

/** Alisio: `calls(n)` runs n calls as the runner runs an approved call, in one fiber. */
const alisio = async () => {
  // Each side loads only what it uses, as its users' processes do.
  const { ToolCallId } = await import("@alisio/domain/Ids")
  const Fake = await import("@alisio/providers/FakeProvider")
  const AgentRuntime = await import("@alisio/runtime/AgentRuntime")
  const Interaction = await import("@alisio/runtime/Interaction")
  const McpServers = await import("@alisio/runtime/McpServers")
  const SessionStore = await import("@alisio/runtime/SessionStore")
  const { Tools } = await import("@alisio/runtime/Tools")
  const Effect = await import("effect/Effect")
  const Layer = await import("effect/Layer")
  const ManagedRuntime = await import("effect/ManagedRuntime")
  const runtime = ManagedRuntime.make(
    McpServers.layer({
      servers: { fixture: { type: "stdio", command: process.execPath, args: [fixture] } },
      cwd: tmpdir(),
      logFolder: join(tmpdir(), "alisio-bench-mcp-calls")
    }).pipe(
      Layer.provideMerge(
        AgentRuntime.layer({ tools: [], interaction: Interaction.layerHeadless({ approveAll: true }) }).pipe(
          Layer.provideMerge(Fake.layer(() => Fake.answer("ok"))),
          Layer.provideMerge(SessionStore.layerMemory)
        )
      )
    )
  )
  const tool = await runtime.runPromise(
    Effect.gen(function* () {
      yield* Effect.flatMap(McpServers.McpServers, (mcp) => mcp.ready)
      const all = yield* Effect.flatMap(Tools, (tools) => tools.all)
      return all.find((each) => each.name === "mcp__fixture__echo")
    })
  )
  const context = {
    sessionId: "bench",
    runId: "bench",
    toolCallId: ToolCallId.make("bench"),
    cwd: tmpdir(),
    readOnly: false,
    progress: () => Effect.void,
    approveExternalPath: () => Effect.void,
    askUser: () => Effect.succeed("")
  }
  return {
    calls: (n) =>
      runtime.runPromise(
        Effect.gen(function* () {
          for (let i = 0; i < n; i++) {
            const result = yield* tool.execute(JSON.parse(ARGUMENTS_JSON), context)
            if (result.isError === true) throw new Error("the echo call failed")
          }
        })
      ),
    close: () => runtime.dispose()
  }
}

/** The SDK: `client.callTool` awaited n times on the SDK's own stdio transport. */
const sdk = async () => {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js")
  const client = new Client({ name: "bench", version: "1" })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [fixture], stderr: "ignore" }))
  return {
    calls: async (n) => {
      for (let i = 0; i < n; i++) {
        const result = await client.callTool({ name: "echo", arguments: JSON.parse(ARGUMENTS_JSON) })
        if (result.isError === true) throw new Error("the echo call failed")
      }
    },
    close: () => client.close()
  }
}

const subject = side === "alisio" ? await alisio() : side === "sdk" ? await sdk() : undefined
const commandLine = process.send === undefined
if (subject === undefined || (commandLine && (!(calls > 0) || !(warmUp >= first) || !(first >= 0)))) {
  console.error(
    "usage: node bench/mcp-calls.mjs <alisio|sdk> <calls> <warm-up calls> [<first calls, at most the warm-up>]"
  )
  process.exit(2)
}

const pauses = { count: 0, ms: 0 }
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    pauses.count++
    pauses.ms += entry.duration
  }
})

/** Wall and CPU a call of n calls made now, and the collector's pauses among them. */
const timed = async (n) => {
  pauses.count = 0
  pauses.ms = 0
  observer.observe({ entryTypes: ["gc"] })
  const used = process.cpuUsage()
  const start = performance.now()
  await subject.calls(n)
  const wall = performance.now() - start
  const { user, system } = process.cpuUsage(used)
  // The observer hears of the last pauses a task later.
  await new Promise((resolve) => setImmediate(resolve))
  observer.disconnect()
  return {
    wallMs: wall / n,
    cpuMs: (user + system) / 1000 / n,
    systemMs: system / 1000 / n,
    gcPauses: pauses.count,
    gcMsPerCall: pauses.ms / n
  }
}

if (commandLine) {
  const firstCalls = first > 0 ? await timed(first) : undefined
  await subject.calls(warmUp - first)
  // MCP_CALLS_PROFILE=<file>: a CPU profile of the measured calls only.
  const profile = process.env.MCP_CALLS_PROFILE
  const session = profile === undefined ? undefined : new Session()
  if (session !== undefined) {
    session.connect()
    await session.post("Profiler.enable")
    await session.post("Profiler.start")
  }
  const measured = await timed(calls)
  if (session !== undefined) writeFileSync(profile, JSON.stringify((await session.post("Profiler.stop")).profile))
  await subject.close()
  console.log(JSON.stringify({ ...measured, first: firstCalls }))
} else {
  // Forked by mcp.bench.ts, which makes two sides take turns: each message asks for `calls` calls,
  // timed or not, and is answered when they are done.
  process.on("message", async ({ calls, timed: measure }) => {
    if (calls === 0) {
      await subject.close()
      process.disconnect()
      return
    }
    if (measure) process.send(await timed(calls))
    else process.send(await subject.calls(calls).then(() => ({})))
  })
  process.send({ ready: true })
}
