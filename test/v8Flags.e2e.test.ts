// End-to-end: the V8 flags `alisio` sets at start (packages/cli/src/V8Flags.ts) take effect on
// the Node that runs the test (CI: Node 20 and 24). A flag V8 accepts at run time can still do
// nothing: V8 12+ applies a flag's implications only when it is given on the command line.

import { assert, describe, it } from "@effect/vitest"
import { useWorld } from "./support/world.js"

describe("V8 flags set at start (end to end)", () => {
  const world = useWorld()

  it("fetch's HTTP parser (WebAssembly) is compiled by Liftoff only, however long the answer streams", async () => {
    // A model's answer in 3 000 chunks makes undici's llhttp hot: without the flags V8 compiles it
    // again with TurboFan on a worker thread (Node 24: ~7 MB of peak RSS for a two-turn task).
    const { sandbox } = await world({
      replyFor: () => ({ kind: "text", text: "word ".repeat(3_000), chunks: 3_000 })
    })
    const result = await sandbox.run(["run", "-m", "openai/test-model", "hello"], {
      nodeArgs: ["--trace-wasm-compilation-times"]
    })
    assert.strictEqual(result.code, 0, result.stderr)
    // V8 prints its trace on stdout, among the answer.
    const output = result.stdout
    assert.include(output, "word word")
    assert.match(output, /Compiled function .* using Liftoff/, "the trace shows the parser's compilation")
    assert.notMatch(output, /using TurboFan/)
  })

  // V8 takes the code Node ships for its own modules only under the flags it was compiled with;
  // on Node 20 a run loads fetch's and child processes' modules before it sets its flags.
  it.skipIf(!process.versions.v8.startsWith("11."))(
    "on Node 20 a run compiles fetch's and child processes' modules from the code Node ships",
    async () => {
      const { sandbox } = await world({ replyFor: () => ({ kind: "text", text: "the answer" }) })
      const result = await sandbox.run(["run", "-m", "openai/test-model", "hello"], {
        env: { NODE_DEBUG_NATIVE: "CODE_CACHE" }
      })
      assert.strictEqual(result.code, 0, result.stderr)
      assert.include(result.stdout, "the answer")
      for (const module of ["internal/deps/undici/undici", "child_process", "fs/promises"]) {
        assert.match(result.stderr, new RegExp(`Code cache of ${module} \\(\\w+\\) is accepted`), module)
        assert.notMatch(result.stderr, new RegExp(`Code cache of ${module} \\(\\w+\\) is rejected`), module)
      }
    }
  )
})
