import * as path from "node:path"
import * as Glob from "@alisio/runtime/tools/Glob"
import { compileGlob, expandBraces, splitGlobBase } from "@alisio/runtime/tools/internal/glob"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { call, callFails, makeContext, tempDir, writeFiles } from "./context.js"

const tree = {
  "README.md": "",
  "src/index.ts": "",
  "src/util/strings.ts": "",
  "src/util/strings.test.ts": "",
  "src/view.tsx": "",
  "test/a.test.ts": "",
  ".github/ci.yml": "",
  "node_modules/pkg/index.ts": "",
  ".git/HEAD": ""
}

describe("glob matcher", () => {
  it("TL-1 matches *, ?, [..], {..} within a name and ** across folders", () => {
    const cases: ReadonlyArray<readonly [string, string, boolean]> = [
      ["*.ts", "index.ts", true],
      ["*.ts", "src/index.ts", false],
      ["**/*.ts", "index.ts", true],
      ["**/*.ts", "src/util/strings.ts", true],
      ["src/**", "src/util/strings.ts", true],
      ["src/**/strings.ts", "src/strings.ts", true],
      ["src/*/strings.ts", "src/strings.ts", false],
      ["**/*.{ts,tsx}", "src/view.tsx", true],
      ["{src,test}/**/*.test.ts", "test/a.test.ts", true],
      ["file?.txt", "file1.txt", true],
      ["file?.txt", "file10.txt", false],
      ["[a-c]*.md", "b.md", true],
      ["[!a-c]*.md", "b.md", false],
      ["*.yml", ".travis.yml", true],
      ["a\\*b", "a*b", true],
      ["a\\*b", "axb", false],
      ["a.b", "axb", false]
    ]
    for (const [pattern, candidate, expected] of cases) {
      assert.strictEqual(compileGlob(pattern).matches(candidate), expected, `${pattern} ~ ${candidate}`)
    }
  })

  it("TL-6 matches in time linear in name × pattern; brace explosions are refused", () => {
    // As a regular expression, ^[^/]*a[^/]*a…b$ backtracks for minutes on 250 a's.
    assert.isFalse(compileGlob(`${"*a".repeat(30)}*b`).matches("a".repeat(250)))
    assert.isTrue(compileGlob(`${"*a".repeat(30)}*b`).matches(`${"a".repeat(250)}b`))
    assert.throws(() => compileGlob("{a,b}".repeat(12)), "expands to more than 1000 alternatives")
    assert.strictEqual(expandBraces("{a,b}".repeat(9)).length, 512)
  })

  it("TL-1 prunes folders nothing below could match", () => {
    assert.isFalse(compileGlob("*.ts").mayMatchBelow("src"))
    assert.isTrue(compileGlob("src/*.ts").mayMatchBelow("src"))
    assert.isFalse(compileGlob("src/*.ts").mayMatchBelow("test"))
    assert.isTrue(compileGlob("**/*.ts").mayMatchBelow("a/b/c"))
  })

  it("TL-1 expands braces and finds the literal base of a pattern", () => {
    assert.deepStrictEqual(expandBraces("a{b,c{d,e}}f"), ["abf", "acdf", "acef"])
    assert.deepStrictEqual(expandBraces("no{brace}"), ["no{brace}"])
    assert.deepStrictEqual(splitGlobBase("src/util/*.ts"), { base: "src/util", rest: "*.ts" })
    assert.deepStrictEqual(splitGlobBase("/etc/*.conf"), { base: "/etc", rest: "*.conf" })
    assert.deepStrictEqual(splitGlobBase("**/*.ts"), { base: ".", rest: "**/*.ts" })
  })
})

describe("glob", () => {
  it.scoped("TL-1 lists matching files sorted, skipping .git and node_modules", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, tree)
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Glob.make(), { pattern: "**/*.ts" }, context),
        "src/index.ts\nsrc/util/strings.test.ts\nsrc/util/strings.ts\ntest/a.test.ts"
      )
      assert.strictEqual(yield* call(Glob.make(), { pattern: "*.ts", path: "src" }, context), "src/index.ts")
      assert.strictEqual(
        yield* call(Glob.make(), { pattern: "src/**/*.{ts,tsx}" }, context).pipe(
          Effect.map((text) => text.split("\n").length)
        ),
        4
      )
      assert.strictEqual(yield* call(Glob.make(), { pattern: "**/*.yml" }, context), ".github/ci.yml")
      assert.strictEqual(
        yield* call(Glob.make(), { pattern: "**/index.ts", include_ignored: true }, context),
        "node_modules/pkg/index.ts\nsrc/index.ts"
      )
      assert.strictEqual(yield* call(Glob.make(), { pattern: "**/*.rs" }, context), "No files match **/*.rs.")
    })
  )

  it.scoped("TL-1 a pattern matching nothing because of Windows separators or a final / says why", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { ...tree, "deep/a/b.txt": "" })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Glob.make(), { pattern: "src\\util\\*.ts" }, context),
        "No files match src\\util\\*.ts. (\\ escapes the next character in a glob: separate folders with /, as in src/util/*.ts)"
      )
      assert.strictEqual(
        yield* call(Glob.make(), { pattern: "deep/*/" }, context),
        "No files match deep/*/ in deep. (glob finds files, not folders: use ls to list a folder)"
      )
      // An escape of a character special in a glob is meant: no hint.
      assert.strictEqual(yield* call(Glob.make(), { pattern: "a\\*b" }, context), "No files match a\\*b.")
    })
  )

  it.scoped("TL-1 stops at the result cap and says so", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, tree)
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Glob.make({ maxResults: 2 }), { pattern: "**/*.ts" }, context),
        "src/index.ts\nsrc/util/strings.test.ts\n[stopped at 2 paths; use a narrower pattern]"
      )
    })
  )

  it.scoped("TL-3 a pattern reaching outside the workspace asks for approval", () =>
    Effect.gen(function* () {
      const outside = yield* tempDir
      const dir = yield* tempDir
      yield* writeFiles(outside, { "x.md": "" })
      const denied = yield* makeContext(dir)
      assert.include(yield* callFails(Glob.make(), { pattern: `${outside}/*.md` }, denied.context), "denied")
      const approved = yield* makeContext(dir, { approveExternal: true })
      assert.strictEqual(
        yield* call(Glob.make(), { pattern: "*.md", path: outside }, approved.context),
        path.join(outside, "x.md")
      )
      assert.deepStrictEqual(yield* Ref.get(approved.externalRequests), [outside])
    })
  )

  it.scoped("TL-6 a pattern whose braces explode is an error the model sees", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Glob.make(), { pattern: "{a,b}".repeat(12) }, context),
        `the glob ${"{a,b}".repeat(12)} expands to more than 1000 alternatives; use fewer {a,b} groups`
      )
    })
  )
})
