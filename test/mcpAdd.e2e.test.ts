// End-to-end: `alisio mcp add` refuses a server name that would leave its tools no valid name
// (MCP-1): models take 64 characters for mcp__<server>__<tool>.

import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"

describe("mcp add (end to end)", () => {
  let sandbox: CliSandbox | undefined
  afterEach(() => {
    sandbox?.cleanup()
    sandbox = undefined
  })

  it("MCP-1 a server name too long for its tools' names is a usage error naming the limit, which --help states", async () => {
    sandbox = makeSandbox("http://127.0.0.1:9/v1")
    const long = "x".repeat(200)
    const refused = await sandbox.run(["mcp", "add", long, "--", "node", "server.js"])
    assert.strictEqual(refused.code, 2, refused.stderr)
    assert.include(
      refused.stderr,
      `The server name "${"x".repeat(20)}…" is 200 characters: its tools are named mcp__<server>__<tool>, which models accept up to 64 characters; use at most 40`
    )
    const file = join(sandbox.home, "config.yaml")
    assert.isFalse(existsSync(file) && readFileSync(file, "utf8").includes("xxxx"), "nothing was added")
    const added = await sandbox.run(["mcp", "add", "y".repeat(40), "--", "node", "server.js"])
    assert.strictEqual(added.code, 0, added.stderr)
    const help = await sandbox.run(["mcp", "add", "--help"])
    assert.match(help.stdout.replace(/\s+/g, " "), /letters, digits, _ and -, at most 40/)
  })

  it("MCP-1 a name whose tools another server already gives (Docs vs docs) is refused up front, nothing written", async () => {
    sandbox = makeSandbox("http://127.0.0.1:9/v1")
    const first = await sandbox.run(["mcp", "add", "docs", "--", "node", "server.js"])
    assert.strictEqual(first.code, 0, first.stderr)
    const file = join(sandbox.home, "config.yaml")
    const before = readFileSync(file, "utf8")
    const twin = await sandbox.run(["mcp", "add", "Docs", "--", "node", "other.js"])
    assert.strictEqual(twin.code, 2, twin.stderr)
    assert.include(
      twin.stderr,
      "The MCP server docs is already configured, and Docs would share its tool and command names (mcp__docs__…, in any case), so it would not start; choose another name"
    )
    assert.strictEqual(readFileSync(file, "utf8"), before, "config.yaml is unchanged")
  })
})
