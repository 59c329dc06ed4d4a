// The V8 flag a process sets when it first connects to an MCP server (internal/mcp/heap.ts).
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"

const heap = fileURLToPath(new URL("../src/internal/mcp/heap.ts", import.meta.url))
const root = fileURLToPath(new URL("../../..", import.meta.url))

describe("MCP heap tuning", () => {
  it("MCP-1 the V8 flag a connection sets is known to this Node: setting it prints nothing on stderr", () => {
    // A flag this Node's V8 does not know would print "unrecognized flag" on stderr of every run
    // that starts an MCP server.
    const script = `const { stopPretenuring } = await import(${JSON.stringify(heap)}); stopPretenuring(); stopPretenuring(); console.log("set")`
    const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8"
    })
    assert.strictEqual(result.stderr, "")
    assert.strictEqual(result.stdout.trim(), "set")
    assert.strictEqual(result.status, 0)
  })
})
