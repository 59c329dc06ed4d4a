// End-to-end: `alisio plugins install` and `plugins remove` given what a person mistypes or a
// package.json claims: checked before npm runs, one line each, config.yaml untouched (PRV-3, PL-1).

import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { CliSandbox } from "./support/cli.js"
import { writePluginPackage } from "./support/pluginPackage.js"
import { echoProviderSource } from "./support/providerPackage.js"
import { useWorld } from "./support/world.js"

// npm never reaches beyond 127.0.0.1: a registry there that refuses connections.
const npmEnv = {
  npm_config_registry: "http://127.0.0.1:9/",
  npm_config_fetch_retries: "0",
  npm_config_update_notifier: "false",
  npm_config_loglevel: "error"
}
const ESC = "\u001b"
const comments = "# my settings\nlimits:\n  maxTurns: 9 # enough\n"

describe("plugins install and remove of hostile input (end to end)", () => {
  const world = useWorld()
  const setup = async () => {
    const { sandbox } = await world({ replies: [] })
    mkdirSync(sandbox.home, { recursive: true })
    writeFileSync(join(sandbox.home, "config.yaml"), comments)
    const run = (args: ReadonlyArray<string>) => sandbox.run(args, { env: npmEnv })
    return { sandbox, run }
  }
  const config = (sandbox: CliSandbox) => readFileSync(join(sandbox.home, "config.yaml"), "utf8")
  const folder = (sandbox: CliSandbox, name: string, packageJson: string) => {
    const dir = join(sandbox.workspace, name)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "package.json"), packageJson)
    return dir
  }

  it("PRV-3 a file, a package.json that is not JSON, a name with ../ or escapes, npm: with a path: one line each before npm runs", async () => {
    const { sandbox, run } = await setup()
    writeFileSync(join(sandbox.workspace, "notes.txt"), "hello\n")
    const badJson = folder(sandbox, "bad-json", "{nope\n")
    const climbing = folder(sandbox, "climbing", JSON.stringify({ name: "../../evil", keywords: ["alisio-plugin"] }))
    const escaping = folder(
      sandbox,
      "escaping",
      JSON.stringify({ name: `red${ESC}[31m${ESC}]0;pwned\u0007`, keywords: ["alisio-plugin"] })
    )
    const cases: ReadonlyArray<readonly [string, string]> = [
      [
        "./notes.txt",
        `alisio: ${join(sandbox.workspace, "notes.txt")} is a file, not a plugin: give the folder of a plugin package, or a tarball that \`npm pack\` made (.tgz).`
      ],
      ["./bad-json", `alisio: ${join(badJson, "package.json")} is not valid JSON (`],
      [
        "./climbing",
        `alisio: ${join(climbing, "package.json")} gives the package the name "../../evil", which is not a valid package name;`
      ],
      [
        "./escaping",
        `alisio: ${join(escaping, "package.json")} gives the package the name "red\\u001b[31m\\u001b]0;pwned\\u0007", which is not a valid package name;`
      ],
      [
        "npm:../../x",
        'alisio: "../../x" is not an npm package name (lower-case letters, digits, - . _ ~, an optional @scope/); to install a folder, give its path without npm:.'
      ],
      [
        `npm:left${ESC}[31mpad`,
        'alisio: "npm:left\\u001b[31mpad" holds control characters; name a package (npm:<package>) or a folder.'
      ]
    ]
    for (const [spec, line] of cases) {
      const result = await run(["plugins", "install", spec])
      assert.strictEqual(result.code, 2, spec)
      assert.strictEqual(result.stderr.split("\n").filter((l) => l !== "").length, 1, `${spec}: ${result.stderr}`)
      assert.isTrue(result.stderr.startsWith(line), `${spec}: ${result.stderr}`)
      assert.notInclude(result.stderr, ESC)
      assert.notInclude(result.stderr, "npm error")
    }
    assert.strictEqual(config(sandbox), comments)
    assert.isFalse(existsSync(join(sandbox.home, "plugins", "node_modules")))
  })

  it("PRV-3 a tarball `npm pack` made installs under its package's name, twice without harm; remove of a typo names the close match", async () => {
    const { sandbox, run } = await setup()
    const source = writePluginPackage(sandbox.workspace, "echo-src", {
      name: "alisio-provider-echo",
      source: echoProviderSource
    })
    const tarball = execFileSync("npm", ["pack", "--silent"], { cwd: source, env: { ...process.env, ...npmEnv } })
      .toString()
      .trim()
    for (const time of ["first", "second"]) {
      const installed = await run(["plugins", "install", join("echo-src", tarball).replace(/^/, "./")])
      assert.strictEqual(installed.code, 0, `${time}: ${installed.stderr}`)
      assert.include(installed.stdout, "Installed alisio-provider-echo@1.0.0")
      assert.strictEqual(config(sandbox), `${comments}plugins:\n  - alisio-provider-echo\n`)
    }

    const typo = await run(["plugins", "remove", "alisio-provider-ecko"])
    assert.deepStrictEqual(
      [typo.code, typo.stderr],
      [
        2,
        `alisio: alisio-provider-ecko is neither installed in ${join(sandbox.home, "plugins")} nor in the plugins of ${join(sandbox.home, "config.yaml")}; did you mean alisio-provider-echo?\n`
      ]
    )
    const short = await run(["plugins", "remove", "echo"])
    assert.include(short.stderr, "did you mean alisio-provider-echo?")
    assert.strictEqual(config(sandbox), `${comments}plugins:\n  - alisio-provider-echo\n`)
  }, 120_000)

  it("PL-6 plugins install runs none of the package's install scripts unless --allow-scripts; npm's output is marked npm:", async () => {
    const { sandbox, run } = await setup()
    const marker = join(sandbox.workspace, "postinstall-ran")
    const source = writePluginPackage(sandbox.workspace, "scripted-src", {
      name: "alisio-plugin-scripted",
      source:
        'import * as Effect from "effect/Effect"\nexport default { id: "scripted", version: "1.0.0", setup: Effect.void }\n',
      files: {
        "postinstall.cjs": `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran")\nconsole.error("hello from postinstall")\n`
      }
    })
    const manifest = JSON.parse(readFileSync(join(source, "package.json"), "utf8")) as Record<string, unknown>
    writeFileSync(
      join(source, "package.json"),
      JSON.stringify({ ...manifest, scripts: { postinstall: "node postinstall.cjs" } }, null, 2)
    )
    const tarball = execFileSync("npm", ["pack", "--silent", "--ignore-scripts"], {
      cwd: source,
      env: { ...process.env, ...npmEnv }
    })
      .toString()
      .trim()
    const spec = `./${join("scripted-src", tarball)}`

    const quiet = await run(["plugins", "install", spec])
    assert.strictEqual(quiet.code, 0, quiet.stderr)
    assert.isFalse(existsSync(marker), "the postinstall script ran without --allow-scripts")
    assert.notInclude(quiet.stderr, "hello from postinstall")
    assert.include(
      quiet.stderr,
      "alisio: alisio-plugin-scripted's install scripts (postinstall) did not run; if it needs them, install it again with --allow-scripts.\n"
    )
    assert.include(quiet.stdout, "Installed alisio-plugin-scripted@1.0.0")

    rmSync(join(sandbox.home, "plugins", "node_modules", "alisio-plugin-scripted"), { recursive: true, force: true })
    // npm shows a script's output with foreground-scripts (or when the script fails).
    const allowed = await sandbox.run(["plugins", "install", "--allow-scripts", spec], {
      env: { ...npmEnv, npm_config_foreground_scripts: "true" }
    })
    assert.strictEqual(allowed.code, 0, allowed.stderr)
    assert.isTrue(existsSync(marker), "the postinstall script did not run with --allow-scripts")
    const scriptLines = allowed.stderr.split("\n").filter((line) => line.includes("hello from postinstall"))
    assert.isNotEmpty(scriptLines, allowed.stderr)
    for (const line of scriptLines) assert.match(line, /^npm: /)
    assert.notInclude(allowed.stderr, "did not run")
  }, 120_000)

  it("PRV-3 plugins remove <folder> takes out the config entries naming that folder, however they were written", async () => {
    const { sandbox, run } = await setup()
    const plugin = writePluginPackage(sandbox.workspace, "weather", { name: "alisio-plugin-weather", source: "" })
    writeFileSync(
      join(sandbox.home, "config.yaml"),
      `${comments}plugins:\n  - ${plugin} # by path\n  - source: ../workspace/weather\n    enabled: true\n  - other-plugin\n`
    )
    const removed = await run(["plugins", "remove", "./weather"])
    assert.strictEqual(removed.code, 0, removed.stderr)
    assert.strictEqual(
      removed.stdout,
      `Removed alisio-plugin-weather from the plugins of ${join(sandbox.home, "config.yaml")}.\n`
    )
    assert.strictEqual(config(sandbox), `${comments}plugins:\n  - other-plugin\n`)
  })
  it("PRV-3 PL-6 a package whose alisio-plugin.json asks for another plugin API is installed but said not to load, exit 1", async () => {
    const { sandbox, run } = await setup()
    const dir = folder(sandbox, "future", JSON.stringify({ name: "alisio-plugin-future", version: "2.0.0" }))
    writeFileSync(join(dir, "alisio-plugin.json"), JSON.stringify({ apiVersion: 2, entry: "index.js" }))
    writeFileSync(join(dir, "index.js"), "export default {}\n")
    const result = await run(["plugins", "install", "./future"])
    assert.strictEqual(result.code, 1, result.stderr)
    assert.include(result.stdout, "Installed alisio-plugin-future@2.0.0")
    assert.include(result.stderr, "alisio: alisio-plugin-future is installed but does not load: ")
    assert.include(result.stderr, "asks for plugin API version 2; this Alisio offers version 1")
  })
})
