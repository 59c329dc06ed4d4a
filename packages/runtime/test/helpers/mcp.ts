// MCP servers for the tests: the SDK fixture server (fixtures/mcp/server.mjs) over stdio or
// streamable HTTP, and the real runtime with McpServers over it.
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type * as Fake from "@alisio/providers/FakeProvider"
import type { McpServer } from "@alisio/runtime/Config"
import * as Interaction from "@alisio/runtime/Interaction"
import * as McpServers from "@alisio/runtime/McpServers"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { runnerLayer } from "./harness.js"
import { makeTempDir } from "./tempDir.js"

export const fixtureServer = fileURLToPath(new URL("../fixtures/mcp/server.mjs", import.meta.url))

/**
 * The fixture over stdio, as a user would configure it. Servers inherit only a few variables, so
 * its trace folder is handed on as `${MCP_FIXTURE_DIR}`, expanded from Alisio's environment.
 */
export const stdioFixture = (extra: Partial<Omit<Extract<McpServer, { type: "stdio" }>, "type">> = {}): McpServer => ({
  type: "stdio",
  command: process.execPath,
  args: [fixtureServer],
  ...extra,
  env: { MCP_FIXTURE_DIR: `\${MCP_FIXTURE_DIR}`, ...extra.env }
})

/** What a test sees of the servers: the folder they leave traces in, and the diagnostics printed. */
export interface McpWorld {
  readonly dir: string
  readonly logFolder: string
  readonly diagnostics: Array<string>
  /** The lines of a trace file the fixture wrote in `dir` (empty when it wrote none). */
  readonly trace: (file: string) => ReadonlyArray<string>
}

export const traceOf = (dir: string, file: string): ReadonlyArray<string> => {
  const path = join(dir, file)
  return existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : []
}

/**
 * The real runtime (runner on the FakeProvider, in-memory store) with McpServers over it, built
 * in the test's scope: closing the scope closes every server.
 */
export const mcpWorld = (
  servers: { readonly [name: string]: McpServer },
  options: {
    readonly script?: Fake.Script
    readonly env?: { readonly [name: string]: string }
    readonly startupMs?: number
    readonly callMs?: number
    /** What a person answers to approvals (default: everything approved, as `--yes`). */
    readonly approveAll?: boolean
  } = {}
) =>
  Effect.gen(function* () {
    const dir = yield* makeTempDir("alisio-mcp-")
    const diagnostics: Array<string> = []
    const logFolder = join(dir, "state", "mcp")
    const context = yield* Layer.build(
      McpServers.layer({
        servers,
        cwd: dir,
        logFolder,
        env: { ...process.env, MCP_FIXTURE_DIR: dir, ...options.env },
        diagnostic: (line) => Effect.sync(() => void diagnostics.push(line)),
        startupMs: options.startupMs,
        callMs: options.callMs,
        clientVersion: "test"
      }).pipe(
        Layer.provideMerge(
          runnerLayer({
            script: options.script ?? [],
            tools: [],
            interaction: Interaction.layerHeadless({ approveAll: options.approveAll ?? true })
          })
        )
      )
    )
    const world: McpWorld = { dir, logFolder, diagnostics, trace: (file) => traceOf(dir, file) }
    return { world, context }
  })

/** The fixture over streamable HTTP (or the older HTTP+SSE) on 127.0.0.1, in its own process, stopped with the scope. */
export const httpFixture = (
  env: { readonly [name: string]: string } = {},
  protocol: "http" | "sse" = "http"
): Effect.Effect<{ readonly url: string; readonly process: ChildProcess }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ readonly url: string; readonly process: ChildProcess }>((resolve, reject) => {
          const child = spawn(process.execPath, [fixtureServer, protocol], {
            env: { ...process.env, ...env },
            stdio: ["ignore", "pipe", "ignore"]
          })
          let out = ""
          child.stdout!.on("data", (chunk: Buffer) => {
            out += chunk.toString("utf8")
            const match = /listening (\S+)/.exec(out)
            if (match !== null) resolve({ url: match[1]!, process: child })
          })
          child.once("exit", (code) => reject(new Error(`the HTTP fixture exited with ${code}`)))
        })
    ),
    ({ process: child }) => Effect.sync(() => child.kill("SIGKILL"))
  )

/** Whether a process runs; a zombie nobody reaps counts as gone. */
export const running = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

export const McpServersTag = McpServers.McpServers
