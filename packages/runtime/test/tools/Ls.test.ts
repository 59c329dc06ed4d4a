import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Ls from "@alisio/runtime/tools/Ls"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, callFails, makeContext, tempDir, writeFiles } from "./context.js"

describe("ls", () => {
  it.scoped("TL-1 lists a folder: folders end with /, symlinks show their target", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "b.txt": "", "a/inner.txt": "", "node_modules/x/y.js": "" })
      yield* Effect.promise(() => fs.symlink("b.txt", path.join(dir, "c")))
      const { context } = yield* makeContext(dir)
      assert.strictEqual(yield* call(Ls.make(), {}, context), "./\n  a/\n  b.txt\n  c -> b.txt\n  node_modules/")
      assert.strictEqual(yield* call(Ls.make(), { path: "a" }, context), "a/\n  inner.txt")
    })
  )

  it.scoped("TL-1 lists a tree without entering node_modules unless asked", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "b.txt": "", "a/inner.txt": "", "node_modules/x/y.js": "" })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Ls.make(), { recursive: true }, context),
        "./\n  a/\n  a/inner.txt\n  b.txt\n  node_modules/\n" +
          "[not entered: node_modules/; set include_ignored to list them]"
      )
      assert.include(yield* call(Ls.make(), { recursive: true, include_ignored: true }, context), "node_modules/x/y.js")
      assert.strictEqual(
        yield* call(Ls.make({ maxEntries: 2 }), { recursive: true }, context),
        "./\n  a/\n  a/inner.txt\n[stopped at 2 entries; list a subfolder, or find files with glob, to see more]"
      )
    })
  )

  it.scoped("TL-1 a flat folder over the cap says how many entries it holds and how to reach the rest", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`flat/f${i}.txt`, ""])))
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Ls.make({ maxEntries: 2 }), { path: "flat" }, context),
        "flat/\n  f0.txt\n  f1.txt\n[2 of 5 entries shown, sorted by name; find the others with glob and a pattern for this folder]"
      )
    })
  )

  it.scoped("TL-1 explains files, missing folders and empty ones", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "f.txt": "" })
      yield* Effect.promise(() => fs.mkdir(path.join(dir, "empty")))
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Ls.make(), { path: "f.txt" }, context),
        "f.txt is not a folder; use read for files"
      )
      assert.strictEqual(yield* callFails(Ls.make(), { path: "nope" }, context), "nope does not exist")
      assert.strictEqual(yield* call(Ls.make(), { path: "empty" }, context), "empty is empty.")
    })
  )
})
