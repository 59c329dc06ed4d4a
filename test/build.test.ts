// PKG-4: `pnpm build` compiles every package with tsc, declarations included, into the `dist` its
// manifest exports. The suite runs after the build (README, .ci/run), as the end-to-end tests do.

import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as ts from "typescript"

const root = fileURLToPath(new URL("..", import.meta.url))
const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>

/** Every workspace package: the folders of `packages/` and `packages/plugins/` with a manifest. */
const packageFolders = ["packages", "packages/plugins"].flatMap((parent) =>
  readdirSync(join(root, parent), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, parent, entry.name, "package.json")))
    .map((entry) => join(root, parent, entry.name))
)

const compilerOptionsOf = (folder: string): ts.ParsedCommandLine => {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(folder, "tsconfig.json"),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => assert.fail(String(diagnostic.messageText)) }
  )
  assert.isDefined(parsed, `${folder}/tsconfig.json`)
  return parsed!
}

const sourcesOf = (folder: string): ReadonlyArray<string> =>
  readdirSync(join(folder, "src"), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => relative(join(folder, "src"), join(entry.parentPath, entry.name)))

describe("build", () => {
  it("PKG-4 `pnpm build` runs tsc -b over a tsconfig that references every package", () => {
    const scripts = readJson(join(root, "package.json")).scripts as Record<string, string>
    assert.match(scripts.build!, /^tsc -b( |$|&)/)
    const references = (readJson(join(root, "tsconfig.json")).references as Array<{ path: string }>).map((ref) =>
      join(root, ref.path)
    )
    assert.isAtLeast(packageFolders.length, 6)
    assert.sameMembers(references, packageFolders)
  })

  it("PKG-4 each package compiles src to dist with declarations, and exports those .js and .d.ts files", () => {
    for (const folder of packageFolders) {
      const name = relative(root, folder)
      const { fileNames, options } = compilerOptionsOf(folder)
      assert.isTrue(options.declaration, `${name}: declaration`)
      assert.notStrictEqual(options.noEmit, true, `${name}: noEmit`)
      assert.notStrictEqual(options.emitDeclarationOnly, true, `${name}: emitDeclarationOnly`)
      assert.strictEqual(options.outDir, join(folder, "dist"), `${name}: outDir`)
      assert.strictEqual(options.rootDir, join(folder, "src"), `${name}: rootDir`)
      assert.isAbove(fileNames.length, 0, `${name}: no source file`)
      const exports = (readJson(join(folder, "package.json")).exports ?? {}) as Record<string, Record<string, string>>
      assert.deepInclude(exports["."], { types: "./dist/index.d.ts", default: "./dist/index.js" }, name)
      assert.deepInclude(exports["./*"], { types: "./dist/*.d.ts", default: "./dist/*.js" }, name)
    }
  })

  it("PKG-4 after the build every module of every package has its .js and .d.ts in dist", () => {
    const missing: Array<string> = []
    for (const folder of packageFolders) {
      for (const source of sourcesOf(folder)) {
        const base = join(folder, "dist", source.replace(/\.ts$/, ""))
        for (const built of [`${base}.js`, `${base}.d.ts`]) {
          if (!existsSync(built)) missing.push(relative(root, built))
        }
      }
    }
    assert.deepStrictEqual(missing, [], "missing build output: run `pnpm build` before the tests")
  })
})
