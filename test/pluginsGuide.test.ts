// docs/plugins.md shows a complete plugin and its test: they are the files the test suite runs.
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { echoProviderSource } from "./support/providerPackage.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const read = (path: string) => readFileSync(root + path, "utf8")

/** The first ```ts (or ```js) block after `heading`. */
const blockAfter = (markdown: string, heading: string, language = "ts"): string => {
  const section = markdown.split(heading)[1] ?? ""
  return new RegExp(`\`\`\`${language}\n([\\s\\S]*?)\`\`\``).exec(section)?.[1] ?? ""
}

describe("docs/plugins.md", () => {
  it("PL-1 its example plugin and its test are the ones the test suite runs", () => {
    const guide = read("docs/plugins.md")
    assert.strictEqual(
      blockAfter(guide, "### The plugin (`src/index.ts`)"),
      read("packages/runtime/test/fixtures/plugins/weather.ts")
    )
    assert.strictEqual(
      blockAfter(guide, "### Its test (`test/weather.test.ts`)"),
      // An author's test imports the plugin from its sources.
      read("packages/runtime/test/PluginGuide.test.ts").replace(
        'from "./fixtures/plugins/weather.js"',
        'from "../src/index.js"'
      )
    )
  })
  it("PRV-3 its provider package is the one the install test publishes and runs", () => {
    assert.strictEqual(
      blockAfter(read("docs/plugins.md"), "### A provider package (`index.js`)", "js"),
      echoProviderSource
    )
  })
})
