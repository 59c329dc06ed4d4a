// The modules the host shares with external plugins must be every public module of effect and
// @alisio/domain: a module left out would be loaded from the plugin's own folder, a second copy.
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { coreSpecifiers, hostModuleSpecifiers } from "@alisio/runtime/internal/plugins/hostModuleNames"
import { loadHostModule } from "@alisio/runtime/internal/plugins/hostModules"
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
    assert.deepStrictEqual([...hostModuleSpecifiers].sort(), [...effect, "@alisio/domain", ...domain].sort())
    assert.strictEqual(new Set(hostModuleSpecifiers).size, hostModuleSpecifiers.length)
  })

  it("PL-3 a shared module is the host's own instance", async () => {
    const shared = (await loadHostModule("@alisio/domain/Plugin")) as typeof import("@alisio/domain/Plugin")
    assert.strictEqual(shared.PluginApi, (await import("@alisio/domain/Plugin")).PluginApi)
    const rest = (await loadHostModule("effect/Micro")) as typeof import("effect/Micro")
    assert.strictEqual(rest.succeed, (await import("effect/Micro")).succeed)
    assert.isFalse(coreSpecifiers.has("effect/Micro"))
    assert.isUndefined(await loadHostModule("effect/internal/core"))
  })
})
