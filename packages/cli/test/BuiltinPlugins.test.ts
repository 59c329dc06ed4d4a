// PKG-2: the builtin plugins are known to the CLI's registry alone; the core never names them.

import { readdirSync, readFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import type { PluginDefinition } from "@alisio/domain/Plugin"
import * as Paths from "@alisio/runtime/Paths"
import { assert, describe, it } from "@effect/vitest"
import { builtinPlugins } from "alisio/BuiltinPlugins"
import { hostOptions, noPluginFlags } from "alisio/Plugins"
import * as ts from "typescript"

const packages = fileURLToPath(new URL("../../", import.meta.url))
const pluginsFolder = join(packages, "plugins")
const corePackages = ["domain", "runtime", "providers"]

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>

/** The builtin plugin packages: every folder of `packages/plugins` with a manifest, by name. */
const pluginPackages = readdirSync(pluginsFolder, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => ({
    folder: join(pluginsFolder, entry.name),
    name: readJson(join(pluginsFolder, entry.name, "package.json")).name as string
  }))

const sourceFiles = (folder: string): ReadonlyArray<string> =>
  readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(c|m)?tsx?$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))

/** Every module a file names: static and type imports, re-exports, `import()` and `require()`. */
const importsOf = (file: string): ReadonlyArray<string> =>
  ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.map((imported) => imported.fileName)

/** Whether `specifier`, imported from `file`, is a builtin plugin: its package, or its files by path. */
const namesPlugin = (file: string, specifier: string): boolean =>
  pluginPackages.some(({ folder, name }) => {
    if (specifier === name || specifier.startsWith(`${name}/`)) return true
    if (!specifier.startsWith(".")) return false
    const target = relative(folder, resolve(file, "..", specifier))
    return !target.startsWith("..")
  })

describe("BuiltinPlugins", () => {
  it("PKG-2 domain, runtime and providers import no builtin plugin, in code or in their manifests", () => {
    assert.isAbove(pluginPackages.length, 0, "no plugin package found under packages/plugins")
    const offending: Array<string> = []
    const scanned = new Set<string>()
    for (const core of corePackages) {
      for (const file of sourceFiles(join(packages, core, "src"))) {
        for (const specifier of importsOf(file)) {
          scanned.add(specifier)
          if (namesPlugin(file, specifier)) offending.push(`${relative(packages, file)}: ${specifier}`)
        }
      }
      const manifest = readJson(join(packages, core, "package.json"))
      for (const field of ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"]) {
        const deps = Object.keys((manifest[field] ?? {}) as Record<string, string>)
        for (const dep of deps) {
          if (pluginPackages.some(({ name }) => name === dep)) offending.push(`${core}/package.json ${field}: ${dep}`)
        }
      }
      const references = (readJson(join(packages, core, "tsconfig.json")).references ?? []) as Array<{ path: string }>
      for (const reference of references) {
        if (namesPlugin(join(packages, core, "tsconfig.json"), reference.path))
          offending.push(`${core}/tsconfig.json references ${reference.path}`)
      }
    }
    assert.deepStrictEqual(offending, [])
    // The scan reads imports at all: the runtime's own imports of the domain are among them.
    assert.isTrue(
      [...scanned].some((specifier) => specifier.startsWith("@alisio/domain/")),
      "the import scan found nothing"
    )
  })

  it("PKG-2 the registry has one entry per builtin plugin package; each load gives that package's definition", async () => {
    const definitions: Array<PluginDefinition> = []
    for (const { name } of pluginPackages) {
      const module = (await import(name)) as { readonly default: PluginDefinition }
      definitions.push(module.default)
    }
    assert.deepStrictEqual(
      builtinPlugins.map((entry) => entry.id).sort(),
      definitions.map((definition) => definition.id).sort()
    )
    assert.strictEqual(new Set(builtinPlugins.map((entry) => entry.id)).size, builtinPlugins.length)
    for (const entry of builtinPlugins) {
      assert.isFunction(entry.load, `${entry.id} is loaded on demand`)
      const loaded = await entry.load()
      assert.strictEqual(loaded.id, entry.id)
      assert.strictEqual(
        loaded,
        definitions.find((definition) => definition.id === entry.id),
        `${entry.id} loads its package's definition`
      )
    }
  })

  it("PKG-2 the CLI passes its registry to the plugin host", () => {
    const setup = {
      cwd: "/tmp/project",
      paths: Paths.resolve({ ALISIO_HOME: "/tmp/alisio-home", home: "/tmp" }),
      config: {},
      layers: []
    }
    assert.deepStrictEqual(hostOptions(setup, noPluginFlags).builtin, builtinPlugins)
  })
})
