// The modules the host shares with external plugins must be every public module of effect and
// @alisio/domain: a module left out would be loaded from the plugin's own folder, a second copy.
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { hostModules } from "@alisio/runtime/internal/plugins/hostModules"
import { assert, describe, it } from "@effect/vitest"

const require = createRequire(import.meta.url)
const domainSources = fileURLToPath(new URL("../../domain/src/", import.meta.url))

describe("PluginHost modules", () => {
  it("PL-3 every public module of effect and of the domain is shared with external plugins", () => {
    const manifest = JSON.parse(fs.readFileSync(require.resolve("effect/package.json"), "utf8")) as {
      exports: Record<string, unknown>
    }
    const effect = Object.keys(manifest.exports)
      .filter((key) => key !== "./package.json" && key !== "./.index" && key !== "./index")
      .map((key) => (key === "." ? "effect" : `effect/${key.slice(2)}`))
    const domain = fs
      .readdirSync(domainSources)
      .filter((file) => file.endsWith(".ts") && file !== "index.ts")
      .map((file) => `@alisio/domain/${path.basename(file, ".ts")}`)
    assert.deepStrictEqual(Object.keys(hostModules).sort(), [...effect, "@alisio/domain", ...domain].sort())
  })

  it("PL-3 a shared module is the host's own instance", async () => {
    const shared = (await hostModules["@alisio/domain/Plugin"]!()) as typeof import("@alisio/domain/Plugin")
    const own = await import("@alisio/domain/Plugin")
    assert.strictEqual(shared.PluginApi, own.PluginApi)
  })
})
