// End-to-end: `alisio install npm:<package>` (PRV-3) with real npm against a registry on 127.0.0.1.

import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { type NpmRegistry, npmEnvironment, type PublishedPackage, startNpmRegistry } from "./support/npmRegistry.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"
import { writePluginPackage } from "./support/pluginPackage.js"
import { echoProviderSource } from "./support/providerPackage.js"

/** A dedicated provider as its author publishes it: ESM, peers on effect and @alisio/domain, nothing bundled. */
const echoProvider: PublishedPackage = {
  manifest: {
    name: "alisio-provider-echo",
    version: "1.2.0",
    type: "module",
    keywords: ["alisio-plugin"],
    exports: { ".": "./index.js" },
    peerDependencies: { effect: "^3.22.0", "@alisio/domain": "^0.1.0" }
  },
  files: {
    "index.js": echoProviderSource
  }
}

const notAPlugin: PublishedPackage = {
  manifest: { name: "left-padding", version: "1.0.0", main: "index.js" },
  files: { "index.js": "module.exports = (s) => ' ' + s\n" }
}

const brokenPlugin: PublishedPackage = {
  manifest: { ...echoProvider.manifest, name: "alisio-provider-broken", version: "0.1.0" },
  files: {
    "index.js": `import { definePlugin } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
export default definePlugin({ id: "broken", version: "0.1.0", setup: Effect.fail(new Error("no API key in BROKEN_KEY")) })
`
  }
}

const noOpenAi = { OPENAI_BASE_URL: "", OPENAI_API_KEY: "" }

describe("alisio install (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let registry: NpmRegistry | undefined
  afterEach(async () => {
    await server?.close()
    await registry?.close()
  })

  const setup = async (packages: ReadonlyArray<PublishedPackage>) => {
    server = await startOpenAiServer({ replies: [{ kind: "text", text: "from openai" }] })
    registry = await startNpmRegistry(packages)
    const sandbox = makeSandbox(server.baseURL)
    const npmEnv = npmEnvironment(registry)
    return {
      sandbox,
      run: (args: ReadonlyArray<string>, env = {}) => sandbox.run(args, { env: { ...npmEnv, ...env } })
    }
  }
  const config = (sandbox: CliSandbox) => readFileSync(join(sandbox.home, "config.yaml"), "utf8")
  const installed = (sandbox: CliSandbox, name: string) =>
    existsSync(join(sandbox.home, "plugins", "node_modules", name, "package.json"))

  it("PRV-3 `alisio install npm:<package>` installs a provider package; its models are listed and chosen, and `alisio uninstall` removes it", async () => {
    const { sandbox, run } = await setup([echoProvider])
    try {
      const added = await run(["install", "npm:alisio-provider-echo"])
      assert.strictEqual(added.code, 0, added.stderr)
      assert.include(added.stdout, `Installed alisio-provider-echo@1.2.0 in ${join(sandbox.home, "plugins")}`)
      assert.include(
        added.stdout,
        "provider echo:echo: `alisio models` lists its models; use one with -m echo:echo/<model>"
      )
      assert.include(registry!.requests, "/alisio-provider-echo")
      assert.strictEqual(config(sandbox), "plugins:\n  - alisio-provider-echo\n")
      // Its peers are not installed: Alisio gives the package its own effect and @alisio/domain.
      assert.isFalse(existsSync(join(sandbox.home, "plugins", "node_modules", "effect")))

      const models = await run(["models"])
      assert.strictEqual(models.code, 0, models.stderr)
      assert.strictEqual(models.stdout, "  openai/test-model\n  echo:echo/reverse  (context 8000)\n")

      // The provider alone: no OpenAI server configured at all.
      const alone = await run(["run", "-m", "echo:echo/reverse", "hello"], noOpenAi)
      assert.strictEqual(alone.code, 0, alone.stderr)
      assert.strictEqual(alone.stdout, "olleh\n")

      // Without -m or a default, the configured provider still runs.
      const plain = await run(["run", "hi"])
      assert.strictEqual(plain.code, 0, plain.stderr)
      assert.strictEqual(plain.stdout, "from openai\n")
      assert.include(plain.stderr, "using openai/test-model")

      const chosen = await run(["models", "use", "echo:echo/reverse"])
      assert.strictEqual(chosen.code, 0, chosen.stderr)
      assert.strictEqual((await run(["run", "abc"])).stdout, "cba\n")

      const removed = await run(["uninstall", "npm:alisio-provider-echo"])
      assert.strictEqual(removed.code, 0, removed.stderr)
      assert.strictEqual(
        removed.stdout,
        `Removed alisio-provider-echo from ${join(sandbox.home, "plugins")} and from the plugins of ${join(sandbox.home, "config.yaml")}.\n`
      )
      assert.isFalse(installed(sandbox, "alisio-provider-echo"))
      assert.strictEqual(config(sandbox), "defaultModel: echo:echo/reverse\n")
      const orphaned = await run(["run", "abc"])
      assert.strictEqual(orphaned.code, 2)
      assert.include(orphaned.stderr, '"echo:echo" is not a provider')
      assert.include(
        orphaned.stderr,
        "It is the configured defaultModel: `alisio models use <provider/model>` sets another"
      )
    } finally {
      sandbox.cleanup()
    }
  }, 120_000)

  it("PRV-3 PL-6 a package that is not a plugin is removed again, one that does not load is reported (naming the remove command of the install used), a missing one fails with npm's words", async () => {
    const { sandbox, run } = await setup([notAPlugin, brokenPlugin])
    try {
      const other = await run(["install", "npm:left-padding"])
      assert.strictEqual(other.code, 2)
      assert.include(
        other.stderr,
        'alisio: left-padding is not an Alisio plugin (its package.json has no "alisio-plugin" keyword), so it was removed again.'
      )
      assert.isFalse(installed(sandbox, "left-padding"))
      assert.isFalse(existsSync(join(sandbox.home, "config.yaml")))

      const broken = await run(["install", "alisio-provider-broken"])
      assert.strictEqual(broken.code, 1)
      assert.include(broken.stderr, "alisio-provider-broken is installed but does not load:")
      assert.include(broken.stderr, "no API key in BROKEN_KEY")
      assert.include(broken.stderr, "remove it with `alisio uninstall alisio-provider-broken`")
      assert.isTrue(installed(sandbox, "alisio-provider-broken"))
      // PL-6: through `plugins install`, the remedy is the documented `plugins remove`.
      const again = await run(["plugins", "install", "alisio-provider-broken"])
      assert.strictEqual(again.code, 1, again.stderr)
      assert.include(again.stderr, "remove it with `alisio plugins remove alisio-provider-broken`")
      assert.notInclude(again.stderr, "alisio uninstall")

      const missing = await run(["install", "npm:alisio-provider-nowhere"])
      assert.strictEqual(missing.code, 1)
      assert.include(missing.stderr, "404")
      assert.include(
        missing.stderr,
        "alisio: npm could not install npm:alisio-provider-nowhere (exit code 1); its output is above."
      )

      const folder = await run(["install", "./not-here"])
      assert.deepStrictEqual(
        [folder.code, folder.stderr],
        [2, `alisio: ${join(sandbox.workspace, "not-here")} does not exist.\n`]
      )
      const unnamed = await run(["uninstall", " "])
      assert.strictEqual(unnamed.stderr, "alisio: Name the package to remove, as `alisio plugins list` shows it.\n")

      const absent = await run(["uninstall", "alisio-provider-nowhere"])
      assert.strictEqual(absent.code, 2)
      assert.include(absent.stderr, "alisio-provider-nowhere is neither installed in")
      assert.strictEqual(config(sandbox), "plugins:\n  - alisio-provider-broken\n")
    } finally {
      sandbox.cleanup()
    }
  }, 120_000)

  it("PRV-3 PL-6 a provider package that crashes fails the run with its name, not an internal error; the session is kept", async () => {
    const { sandbox, run } = await setup([])
    try {
      const plugin = writePluginPackage(sandbox.home, "../crashing", {
        name: "alisio-provider-crashing",
        source: `import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
export default definePlugin({
  id: "crashing",
  version: "1.0.0",
  setup: Effect.flatMap(PluginApi, (api) => api.providers.register("acme", {
    provider: "acme",
    models: Effect.succeed([{ id: "m", provider: "acme" }]),
    stream: () => { throw new TypeError("Cannot read properties of undefined (reading 'token')") }
  }))
})
`
      })
      const result = await run(["run", "--plugin", plugin, "-m", "crashing:acme/m", "hello"], noOpenAi)
      assert.strictEqual(result.code, 1)
      assert.strictEqual(
        result.stderr.trim().split("\n").at(-1),
        "alisio: The provider crashing:acme (of the plugin crashing) failed: Cannot read properties of undefined (reading 'token')"
      )
      assert.notInclude(result.stderr, "Internal error")
      const listed = await run(["sessions", "list", "--json"])
      assert.strictEqual(listed.code, 0, listed.stderr)
      assert.include(listed.stdout, '"status":"failed"')
    } finally {
      sandbox.cleanup()
    }
  }, 60_000)
})
