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
        "./\n  a/\n  a/inner.txt\n[stopped at 2 entries; list a subfolder to see more]"
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
