// End-to-end: the V8 flags `alisio` sets at start (packages/cli/src/V8Flags.ts) take effect on
// the Node that runs the test (CI: Node 20 and 24). A flag V8 accepts at run time can still do
// nothing: V8 12+ applies a flag's implications only when it is given on the command line.

import { spawn } from "node:child_process"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliSandbox, cliBin, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"

/** The CLI under extra Node flags (a trace), with its stdout and stderr together. */
const runTraced = (sandbox: CliSandbox, nodeFlags: ReadonlyArray<string>, args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number | null; readonly output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, cliBin, ...args], {
      cwd: sandbox.workspace,
      env: sandbox.env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (data: Buffer) => {
      output += data.toString("utf8")
    })
    child.stderr.on("data", (data: Buffer) => {
      output += data.toString("utf8")
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, output }))
  })

describe("V8 flags set at start (end to end)", () => {
  let server: OpenAiTestServer | undefined
  const sandboxes: Array<CliSandbox> = []
  afterEach(async () => {
    await server?.close()
    server = undefined
    for (const sandbox of sandboxes.splice(0)) sandbox.cleanup()
  })

  it("fetch's HTTP parser (WebAssembly) is compiled by Liftoff only, however long the answer streams", async () => {
    // A model's answer in 3 000 chunks makes undici's llhttp hot: without the flags V8 compiles it
    // again with TurboFan on a worker thread (Node 24: ~7 MB of peak RSS for a two-turn task).
    server = await startOpenAiServer({
      replyFor: () => ({ kind: "text", text: "word ".repeat(3_000), chunks: 3_000 })
    })
    const sandbox = makeSandbox(server.baseURL)
    sandboxes.push(sandbox)
    const { code, output } = await runTraced(
      sandbox,
      ["--trace-wasm-compilation-times"],
      ["run", "-m", "openai/test-model", "hello"]
    )
    assert.strictEqual(code, 0, output.slice(-2_000))
    assert.include(output, "word word")
    assert.match(output, /Compiled function .* using Liftoff/, "the trace shows the parser's compilation")
    assert.notMatch(output, /using TurboFan/)
  })
})
