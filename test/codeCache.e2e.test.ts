// End-to-end: `alisio run` compiles its code from a V8 code cache an earlier run wrote on its way
// out (packages/cli/src/CodeCache.ts). The cache is only a saving: whatever state it is in, or
// cannot be in, a run gives the same answer and prints nothing about it.

import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { type CliSandbox, cliBin } from "./support/cli.js"
import { useWorld } from "./support/world.js"

// A build's id, as scripts/bundle.mjs computes it: the start of the hash of its file.
const idOf = (file: string) =>
  createHash("sha256")
    .update(readFileSync(join(dirname(cliBin), file)))
    .digest("hex")
    .slice(0, 16)
const buildId = idOf("run.cjs")
// The MCP SDK's file, which run.cjs loads when a server first starts, with a cache of its own.
const mcpBuildId = idOf("run-mcp.cjs")

const mcpFixture = fileURLToPath(new URL("../packages/runtime/test/fixtures/mcp/server.mjs", import.meta.url))

const cacheFolder = (sandbox: CliSandbox) => join(sandbox.home, "cache", "code")
const cacheName = (nodeVersion: string) => `run-${buildId}-${nodeVersion}-${process.arch}.v8`
const ourCache = (sandbox: CliSandbox) => join(cacheFolder(sandbox), cacheName(process.version))
const mcpCache = (sandbox: CliSandbox) =>
  join(cacheFolder(sandbox), `mcp-${mcpBuildId}-${process.version}-${process.arch}.v8`)

/** The file's identity: a cache written again is a new file, renamed over the old one. */
const identity = (file: string) => {
  const { ino, mtimeMs, size } = statSync(file)
  return { ino, mtimeMs, size }
}

describe("alisio run's code cache (end to end)", () => {
  const world = useWorld()

  const sandboxWithServer = async () => {
    const { sandbox } = await world({ replyFor: () => ({ kind: "text", text: "the answer" }) })
    return sandbox
  }

  const answered = async (sandbox: CliSandbox, env: NodeJS.ProcessEnv = {}) => {
    const result = await sandbox.run(["run", "-m", "openai/test-model", "hello"], { env })
    assert.deepStrictEqual([result.code, result.stderr], [0, ""])
    assert.include(result.stdout, "the answer")
  }

  it("a run that ends well writes the cache; the next run compiles from it and leaves it as it is", async () => {
    const sandbox = await sandboxWithServer()
    assert.isFalse(existsSync(cacheFolder(sandbox)))
    await answered(sandbox)
    const written = identity(ourCache(sandbox))
    assert.isAbove(written.size, 0)
    // V8 refusing it would make this run write it again (a new file renamed over it).
    await answered(sandbox)
    assert.deepStrictEqual(identity(ourCache(sandbox)), written)
    assert.strictEqual(statSync(cacheFolder(sandbox)).mode & 0o777, 0o700, "only its user can write code there")
    // Without a server the MCP SDK's file is not loaded, so it has no cache.
    assert.deepStrictEqual(readdirSync(cacheFolder(sandbox)), [cacheName(process.version)])
  })

  it("a cache V8 refuses (damaged, or another Node's bytes) costs the run nothing and is written again", async () => {
    const sandbox = await sandboxWithServer()
    mkdirSync(cacheFolder(sandbox), { recursive: true })
    writeFileSync(ourCache(sandbox), Buffer.from("not a code cache at all".repeat(100)))
    await answered(sandbox)
    const rewritten = readFileSync(ourCache(sandbox))
    assert.notInclude(rewritten.toString("latin1"), "not a code cache at all")
    const accepted = identity(ourCache(sandbox))
    await answered(sandbox)
    assert.deepStrictEqual(identity(ourCache(sandbox)), accepted)
  })

  it("a run with an MCP server, which changes a V8 flag as it connects, leaves caches the next run accepts", async () => {
    // V8 refuses code cached under other flags than the process's: written under the changed flag,
    // a cache would be refused and written again by every such run. Two caches: run.cjs's and that
    // of the MCP SDK's file, loaded as the server starts; the latter's other builds are removed.
    const sandbox = await sandboxWithServer()
    mkdirSync(cacheFolder(sandbox), { recursive: true })
    const otherMcpBuild = join(cacheFolder(sandbox), `mcp-0123456789abcdef-${process.version}-${process.arch}.v8`)
    writeFileSync(otherMcpBuild, "old")
    writeFileSync(
      join(sandbox.home, "config.yaml"),
      `mcpServers:\n  fixture:\n    command: node\n    args: ["${mcpFixture}"]\n    env: { MCP_FIXTURE_DIR: "${sandbox.workspace}" }\n`
    )
    await answered(sandbox)
    const written = identity(ourCache(sandbox))
    const mcpWritten = identity(mcpCache(sandbox))
    assert.isAbove(mcpWritten.size, 0)
    assert.isFalse(existsSync(otherMcpBuild))
    await answered(sandbox)
    assert.deepStrictEqual(identity(ourCache(sandbox)), written)
    assert.deepStrictEqual(identity(mcpCache(sandbox)), mcpWritten)
  })

  it("a run that outlasts its first second, when V8 turns TurboFan on, leaves a cache the next run accepts", async () => {
    // V8Flags.ts turns TurboFan on a second after the start; the cache must still carry the flags a
    // start sets, or every run longer than a second would find it refused and write it again.
    const { sandbox } = await world({ replyFor: () => ({ kind: "text", text: "the answer", firstDelayMs: 1_500 }) })
    await answered(sandbox)
    const written = identity(ourCache(sandbox))
    await answered(sandbox)
    assert.deepStrictEqual(identity(ourCache(sandbox)), written)
  })

  /** A sandbox whose model answers every request with an error no run retries. */
  const sandboxRefused = async () => {
    const { sandbox } = await world({ replyFor: () => ({ kind: "error", status: 400, message: "refused here" }) })
    return sandbox
  }

  const failed = async (sandbox: CliSandbox) => {
    const result = await sandbox.run(["run", "-m", "openai/test-model", "hello"])
    assert.notStrictEqual(result.code, 0)
    // The run build ran it (a line it cannot read is left to main.ts, which writes no cache anyway).
    assert.include(result.stderr, "refused here")
  }

  it("a run that fails writes no cache: it may have stopped before most of the code ran", async () => {
    const sandbox = await sandboxRefused()
    await failed(sandbox)
    assert.isFalse(existsSync(cacheFolder(sandbox)))
  })

  it("a run that fails after an MCP server started writes no cache for the MCP SDK's file either", async () => {
    const sandbox = await sandboxRefused()
    mkdirSync(sandbox.home, { recursive: true })
    writeFileSync(
      join(sandbox.home, "config.yaml"),
      `mcpServers:\n  fixture:\n    command: node\n    args: ["${mcpFixture}"]\n    env: { MCP_FIXTURE_DIR: "${sandbox.workspace}" }\n`
    )
    await failed(sandbox)
    assert.isTrue(existsSync(join(sandbox.workspace, "starts.txt")), "the server started")
    assert.isFalse(existsSync(cacheFolder(sandbox)))
  })

  it("a run line left to main.ts writes no cache: the run build's code did not run it", async () => {
    // RunLine.ts reads no exponent; main.ts does, and runs the same command.
    const sandbox = await sandboxWithServer()
    const result = await sandbox.run(["run", "-m", "openai/test-model", "--max-turns=1e1", "hello"])
    assert.deepStrictEqual([result.code, result.stderr], [0, ""])
    assert.include(result.stdout, "the answer")
    assert.isFalse(existsSync(cacheFolder(sandbox)))
  })

  it("a cache folder that cannot be made: the run answers and says nothing about it", async () => {
    const sandbox = await sandboxWithServer()
    mkdirSync(join(sandbox.home, "cache"), { recursive: true })
    // A file where the folder would go: mkdir fails even for root, which ignores permissions.
    writeFileSync(cacheFolder(sandbox), "")
    await answered(sandbox)
    await answered(sandbox)
  })

  it("NODE_DISABLE_COMPILE_CACHE turns it off, as it does Node's own compile cache", async () => {
    const sandbox = await sandboxWithServer()
    await answered(sandbox, { NODE_DISABLE_COMPILE_CACHE: "1" })
    assert.isFalse(existsSync(cacheFolder(sandbox)))
  })

  it("writing a cache removes other builds' caches and keeps this build's for other Node versions", async () => {
    const sandbox = await sandboxWithServer()
    mkdirSync(cacheFolder(sandbox), { recursive: true })
    const otherBuild = join(cacheFolder(sandbox), `run-0123456789abcdef-${process.version}-${process.arch}.v8`)
    const otherNode = join(cacheFolder(sandbox), cacheName("v99.0.0"))
    writeFileSync(otherBuild, "old")
    writeFileSync(otherNode, "another node")
    await answered(sandbox)
    assert.deepStrictEqual(
      readdirSync(cacheFolder(sandbox)).sort(),
      [cacheName(process.version), cacheName("v99.0.0")].sort()
    )
  })
})
