import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Write from "@alisio/runtime/tools/Write"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { call, callFails, makeContext, readText, tempDir, writeFiles } from "./context.js"

describe("write", () => {
  it.scoped("TL-1 creates a file and its parent folders", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const { context } = yield* makeContext(dir)
      const text = yield* call(Write.make(), { path: "a/b/c.txt", content: "one\ntwo\n" }, context)
      assert.strictEqual(text, "Created a/b/c.txt (2 lines, 8 B).")
      assert.strictEqual(yield* readText(path.join(dir, "a/b/c.txt")), "one\ntwo\n")
    })
  )

  it.scoped("TL-1 replaces a file atomically, keeping its mode and leaving no temporary file", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "run.sh": "echo old\n" })
      yield* Effect.promise(() => fs.chmod(path.join(dir, "run.sh"), 0o755))
      const { context } = yield* makeContext(dir)
      const text = yield* call(Write.make(), { path: "run.sh", content: "echo new\n" }, context)
      assert.strictEqual(text, "Wrote run.sh (1 line, 9 B).")
      assert.strictEqual(yield* readText(path.join(dir, "run.sh")), "echo new\n")
      const stat = yield* Effect.promise(() => fs.stat(path.join(dir, "run.sh")))
      assert.strictEqual(stat.mode & 0o777, 0o755)
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(dir)), ["run.sh"])
    })
  )

  it.scoped("TL-1 a read-only file is not replaced (the rename would need only the folder's permission)", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "locked.txt": "keep me\n" })
      const file = path.join(dir, "locked.txt")
      yield* Effect.promise(() => fs.chmod(file, 0o444))
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "locked.txt", content: "new\n" }, context),
        "locked.txt is read-only (mode 0444); write leaves it as it is: make it writable first (chmod u+w) if it is meant to change"
      )
      assert.strictEqual(yield* readText(file), "keep me\n")
      yield* Effect.promise(() => fs.chmod(file, 0o644))
      yield* call(Write.make(), { path: "locked.txt", content: "new\n" }, context)
      assert.strictEqual(yield* readText(file), "new\n")
    })
  )

  it.scoped("TL-1 a new name with a Windows separator, a newline or an edge space is a slip named, not a file", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* Effect.promise(() => fs.mkdir(path.join(dir, "odd\\folder")))
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "sub\\new.txt", content: "x" }, context),
        'sub\\new.txt would be created with "\\" in its name; folders are separated by /, as in sub/new.txt'
      )
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "notes.md\n", content: "x" }, context),
        '"notes.md\\n" would be created with a control character or a space at an end of a name; leave it out'
      )
      assert.include(yield* callFails(Write.make(), { path: "docs /a.md", content: "x" }, context), "a space at an end")
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(dir)), ["odd\\folder"])
      // A folder that already has such a name is the person's own: writing into it is fine.
      yield* call(Write.make(), { path: "odd\\folder/ok.txt", content: "x" }, context)
      assert.strictEqual(yield* readText(path.join(dir, "odd\\folder/ok.txt")), "x")
    })
  )

  it.scoped("TL-1 writes through a symlink to the file it names", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "real.txt": "old" })
      yield* Effect.promise(() => fs.symlink("real.txt", path.join(dir, "link.txt")))
      const { context } = yield* makeContext(dir)
      yield* call(Write.make(), { path: "link.txt", content: "new" }, context)
      assert.strictEqual(yield* readText(path.join(dir, "real.txt")), "new")
      assert.isTrue((yield* Effect.promise(() => fs.lstat(path.join(dir, "link.txt")))).isSymbolicLink())
    })
  )

  it.scoped("TL-1 a file with other hard links is written in place, so every name sees the new content", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "a.txt": "old line one\nold line two\n" })
      const first = path.join(dir, "a.txt")
      const second = path.join(dir, "b.txt")
      yield* Effect.promise(() => fs.link(first, second))
      yield* Effect.promise(() => fs.chmod(first, 0o640))
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Write.make(), { path: "a.txt", content: "new\n" }, context),
        "Wrote a.txt (1 line, 4 B)."
      )
      assert.strictEqual(yield* readText(second), "new\n", "the other name sees the new content, none of the old")
      const [a, b] = yield* Effect.promise(() => Promise.all([fs.stat(first), fs.stat(second)]))
      assert.strictEqual(a.ino, b.ino)
      assert.strictEqual(a.nlink, 2)
      assert.strictEqual(a.mode & 0o777, 0o640)
      assert.deepStrictEqual((yield* Effect.promise(() => fs.readdir(dir))).sort(), ["a.txt", "b.txt"])
    })
  )

  it.scoped("TL-1 refuses a folder and a path under a file", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "sub/file.txt": "x" })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "sub", content: "x" }, context),
        "sub is a directory; give a file path"
      )
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "sub/file.txt/inner", content: "x" }, context),
        "sub/file.txt/inner: a part of the path is not a directory"
      )
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "made/", content: "x" }, context),
        "made/ names a folder; give a file path"
      )
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(dir)), ["sub"], "nothing was made")
      assert.include(yield* callFails(Write.make(), { path: "x.txt" }, context), "Invalid arguments for write")
    })
  )

  it.scoped("TL-1 a pipe (or device, or socket) is never replaced by a file", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const fifo = path.join(dir, "queue")
      execFileSync("mkfifo", [fifo])
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "queue", content: "x" }, context),
        "queue is not a regular file (a device, pipe or socket); write replaces files only"
      )
      assert.isTrue((yield* Effect.promise(() => fs.lstat(fifo))).isFIFO(), "still a pipe")
    })
  )

  it.scoped.skipIf(!existsSync("/proc/self"))(
    "TL-6 a new folder where none can be made (under /proc) fails at once instead of spinning",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const approved = yield* makeContext(dir, { approveExternal: true })
        const target = "/proc/alisio-no-such/sub/new.txt"
        assert.strictEqual(
          yield* callFails(Write.make(), { path: target, content: "x" }, approved.context),
          `${target} does not exist`
        )
      })
  )

  it.scoped("TL-3 writing outside the workspace needs approval and writes nothing when denied", () =>
    Effect.gen(function* () {
      const outside = yield* tempDir
      const dir = yield* tempDir
      const target = path.join(outside, "new.txt")
      const denied = yield* makeContext(dir)
      assert.include(yield* callFails(Write.make(), { path: target, content: "x" }, denied.context), "denied")
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(outside)), [])
      const approved = yield* makeContext(dir, { approveExternal: true })
      yield* call(Write.make(), { path: target, content: "x" }, approved.context)
      assert.strictEqual(yield* readText(target), "x")
      assert.deepStrictEqual(yield* Ref.get(approved.externalRequests), [target])
    })
  )
})
