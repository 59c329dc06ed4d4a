import * as Grep from "@alisio/runtime/tools/Grep"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, callFails, makeContext, tempDir, writeFiles } from "./context.js"

const tree = {
  "src/a.ts": "import x from 'y'\nexport const Load = 1\nconst load = 2\n",
  "src/b.js": "function load() {}\n",
  "docs/notes.md": "how to load things\n",
  "image.bin": new Uint8Array([108, 111, 97, 100, 0, 1, 2]),
  "node_modules/dep/index.js": "load()\n"
}

describe("grep", () => {
  it.scoped("TL-1 returns path:line: text for matching lines, skipping binary files and node_modules", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, tree)
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Grep.make(), { pattern: "load" }, context),
        "docs/notes.md:1: how to load things\nsrc/a.ts:3: const load = 2\nsrc/b.js:1: function load() {}"
      )
    })
  )

  it.scoped("TL-1 filters by path and glob, and ignores case on request", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, tree)
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(
          Grep.make(),
          { pattern: "^(export )?const \\w+ = \\d", case_insensitive: true, glob: "*.ts" },
          context
        ),
        "src/a.ts:2: export const Load = 1\nsrc/a.ts:3: const load = 2"
      )
      assert.strictEqual(
        yield* call(Grep.make(), { pattern: "load", path: "src/b.js" }, context),
        "src/b.js:1: function load() {}"
      )
      assert.strictEqual(
        yield* call(Grep.make(), { pattern: "load", glob: "docs/**" }, context),
        "docs/notes.md:1: how to load things"
      )
      assert.strictEqual(
        yield* call(Grep.make(), { pattern: "nothing here" }, context),
        "No lines match /nothing here/."
      )
    })
  )

  it.scoped("TL-1 stops at the result cap and says how to narrow", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "many.txt": "hit\n".repeat(50), "wide.txt": `${"y".repeat(400)} hit\n` })
      const { context } = yield* makeContext(dir)
      const capped = yield* call(Grep.make({ maxResults: 10 }), { pattern: "hit", max_results: 3 }, context)
      assert.strictEqual(
        capped,
        "many.txt:1: hit\nmany.txt:2: hit\nmany.txt:3: hit\n[stopped at 3 matching lines; narrow the pattern, path or glob]"
      )
      const wide = yield* call(Grep.make({ maxLineLength: 20 }), { pattern: "hit", path: "wide.txt" }, context)
      assert.strictEqual(wide, `wide.txt:1: ${"y".repeat(20)}… [384 more characters]`)
    })
  )

  it.scoped("TL-1 rejects an invalid regular expression", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const { context } = yield* makeContext(dir)
      assert.include(yield* callFails(Grep.make(), { pattern: "a(b" }, context), "Invalid regular expression")
    })
  )
})
