// End-to-end: the built `alisio` when its output cannot go where it was sent: stdout on a full disk
// (`/dev/full`), a failing stderr, `--output-last-message` naming a device or a link (CLI-1, CLI-2).

import { execFileSync, spawn } from "node:child_process"
import {
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  readSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type CliResult, type CliSandbox, cliBin } from "./support/cli.js"
import type { Reply } from "./support/openaiServer.js"
import { useWorld } from "./support/world.js"

const hasDevFull = existsSync("/dev/full")

/** Runs the CLI with stdout or stderr on `/dev/full`, where every write fails with ENOSPC. */
const runInto = (sandbox: CliSandbox, args: ReadonlyArray<string>, full: "stdout" | "stderr") =>
  new Promise<CliResult>((resolve) => {
    const fd = openSync("/dev/full", "w")
    const child = spawn(process.execPath, [cliBin, ...args], {
      cwd: sandbox.workspace,
      env: sandbox.env,
      stdio: ["ignore", full === "stdout" ? fd : "pipe", full === "stderr" ? fd : "pipe"]
    })
    closeSync(fd)
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (data: Buffer) => {
      stdout += data.toString("utf8")
    })
    child.stderr?.on("data", (data: Buffer) => {
      stderr += data.toString("utf8")
    })
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })

const runStatuses = async (sandbox: CliSandbox) => {
  const listed = await sandbox.run(["sessions", "list", "--json"])
  assert.strictEqual(listed.code, 0, listed.stderr)
  const sessionId = (JSON.parse(listed.stdout.split("\n")[0]!) as { id: string }).id
  const shown = await sandbox.run(["sessions", "show", sessionId, "--json"])
  return (JSON.parse(shown.stdout) as { runs: ReadonlyArray<{ status: string }> }).runs.map((run) => run.status)
}

describe("alisio's output going nowhere (end to end)", () => {
  const world = useWorld()
  const setup = async (replies: ReadonlyArray<Reply>) => (await world({ replies })).sandbox

  it.skipIf(!hasDevFull)(
    "CLI-2: `run --json > file` on a full disk cancels the run with one line naming the cause, no stack trace",
    async () => {
      const sandbox = await setup([{ kind: "text", text: "x".repeat(200), chunks: 200, delayMs: 10 }])
      const result = await runInto(sandbox, ["run", "--json", "-m", "openai/test-model", "stream"], "stdout")
      assert.strictEqual(result.code, 1, result.stderr)
      assert.strictEqual(result.stderr, "alisio: could not write to stdout (the disk is full); the run was cancelled\n")
      assert.deepStrictEqual(await runStatuses(sandbox), ["cancelled"])
    }
  )

  it.skipIf(!hasDevFull)("CLI-1: a listing written to a full disk says so in one line and exits 1", async () => {
    const sandbox = await setup([{ kind: "text", text: "ok" }])
    assert.strictEqual((await sandbox.run(["run", "-m", "openai/test-model", "hi"])).code, 0)
    const result = await runInto(sandbox, ["sessions", "list"], "stdout")
    assert.strictEqual(result.code, 1, result.stderr)
    assert.strictEqual(result.stderr, "alisio: could not write to stdout (the disk is full)\n")
    const version = await runInto(sandbox, ["--version"], "stdout")
    assert.strictEqual(version.code, 1, version.stderr)
    assert.notInclude(version.stderr, "    at ")
  })

  it.skipIf(!hasDevFull)(
    "CLI-1: --output-last-message on a full disk says so in words, and the answer still comes on stdout",
    async () => {
      const sandbox = await setup([{ kind: "text", text: "the answer" }])
      const result = await sandbox.run(["run", "-m", "openai/test-model", "--output-last-message", "/dev/full", "hi"])
      assert.strictEqual(result.code, 1)
      assert.strictEqual(result.stdout, "the answer\n")
      assert.strictEqual(result.stderr, "alisio: could not write /dev/full (the disk is full)\n")
    }
  )

  it.skipIf(!hasDevFull)("CLI-1: a failing stderr does not stop the run: the answer still comes", async () => {
    const sandbox = await setup([{ kind: "text", text: "the answer" }])
    mkdirSync(sandbox.home, { recursive: true })
    writeFileSync(join(sandbox.home, "config.yaml"), "limit: {}\n") // a warning, written to stderr
    const result = await runInto(sandbox, ["run", "-m", "openai/test-model", "hi"], "stderr")
    assert.strictEqual(result.code, 0)
    assert.strictEqual(result.stdout, "the answer\n")
  })

  it("CLI-1: --output-last-message to a pipe (`/dev/stdout`, a FIFO) writes into it, never a file in its place", async () => {
    const sandbox = await setup([{ kind: "text", text: "the answer" }])
    const fifo = join(sandbox.workspace, "answer.fifo")
    execFileSync("mkfifo", [fifo])
    // Opened for reading first, without waiting for a writer, so the CLI's open does not block.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    try {
      const result = await sandbox.run(["run", "-q", "-m", "openai/test-model", "--output-last-message", fifo, "hi"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.isTrue(lstatSync(fifo).isFIFO())
      const buffer = Buffer.alloc(100)
      assert.strictEqual(buffer.toString("utf8", 0, readSync(reader, buffer)), "the answer")
    } finally {
      closeSync(reader)
    }
  })

  it("CLI-1: --output-last-message through a link replaces the file it names and keeps the link", async () => {
    const sandbox = await setup([{ kind: "text", text: "the answer" }])
    const real = join(sandbox.workspace, "real.txt")
    const link = join(sandbox.workspace, "link.txt")
    writeFileSync(real, "old")
    symlinkSync(real, link)
    const result = await sandbox.run(["run", "-q", "-m", "openai/test-model", "--output-last-message", link, "hi"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(readlinkSync(link), real)
    assert.strictEqual(readFileSync(real, "utf8"), "the answer")
  })
})
