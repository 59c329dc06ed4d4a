import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"

const root = fileURLToPath(new URL("..", import.meta.url))
const read = (path: string) => readFileSync(root + path, "utf8")

const setupCommands = (): ReadonlyArray<string> => {
  const section = read("README.md").split("## Set up")[1] ?? ""
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ""
  return block.split("\n").filter((line) => line.trim() !== "")
}

describe("README", () => {
  it("has exactly two set-up commands: one that runs alisio, one that runs the tests", () => {
    const commands = setupCommands()
    assert.strictEqual(commands.length, 2)
    assert.match(commands[0]!, /pnpm alisio run "/)
    assert.match(commands[0]!, /OPENAI_BASE_URL=/)
    assert.match(commands[1]!, /pnpm test$/)
  })

  it("its test command is what .ci/run runs", () => {
    const ci = read(".ci/run")
      .split("\n")
      .map((line) => line.trim())
    assert.include(ci, setupCommands()[1])
  })

  it("PKG-3 every package exports dist and the alisio-source condition, and publishes without it", () => {
    for (const dir of ["domain", "runtime", "providers", "cli"]) {
      const manifest = JSON.parse(read(`packages/${dir}/package.json`)) as {
        exports: Record<string, Record<string, string>>
        publishConfig: { exports: Record<string, Record<string, string>> }
      }
      assert.strictEqual(manifest.exports["."]?.["alisio-source"], "./src/index.ts")
      assert.strictEqual(manifest.exports["."]?.default, "./dist/index.js")
      assert.notProperty(manifest.publishConfig.exports["."], "alisio-source")
      assert.notProperty(manifest.publishConfig.exports["./*"], "alisio-source")
    }
  })

  it("PKG-1 the domain depends on effect only", () => {
    const manifest = JSON.parse(read("packages/domain/package.json")) as { dependencies: Record<string, string> }
    assert.deepStrictEqual(Object.keys(manifest.dependencies), ["effect"])
  })
})
