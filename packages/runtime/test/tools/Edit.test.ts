import { execFileSync } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Edit from "@alisio/runtime/tools/Edit"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, callFails, makeContext, readBytes, readText, tempDir, writeFiles } from "./context.js"

const source = [
  "export function load(path) {",
  "  const text = read(path)",
  "  return parse(text)",
  "}",
  "",
  "export function save(path, value) {",
  "  const text = render(value)",
  "  return write(path, text)",
  "}",
  ""
].join("\n")

describe("edit", () => {
  it.scoped("TL-1 replaces text that occurs exactly once", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "io.js": source })
      const { context } = yield* makeContext(dir)
      const text = yield* call(
        Edit.make(),
        { path: "io.js", old_string: "  return parse(text)", new_string: "  return JSON.parse(text) // $& $1" },
        context
      )
      assert.strictEqual(text, "Replaced 1 occurrence in io.js (line 3).")
      assert.strictEqual(
        yield* readText(path.join(dir, "io.js")),
        source.replace("  return parse(text)", () => "  return JSON.parse(text) // $& $1")
      )
    })
  )

  it.scoped("TL-1 refuses an ambiguous match, naming the lines, and replaces all with replace_all", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "io.js": source })
      const { context } = yield* makeContext(dir)
      const message = yield* callFails(
        Edit.make(),
        { path: "io.js", old_string: "const text", new_string: "let text" },
        context
      )
      assert.strictEqual(
        message,
        "old_string occurs 2 times in io.js (lines 2, 7); include more surrounding lines to make it unique, " +
          "or set replace_all to replace every occurrence"
      )
      assert.strictEqual(yield* readText(path.join(dir, "io.js")), source)
      const text = yield* call(
        Edit.make(),
        { path: "io.js", old_string: "const text", new_string: "let text", replace_all: true },
        context
      )
      assert.strictEqual(text, "Replaced 2 occurrences in io.js.")
      assert.strictEqual(yield* readText(path.join(dir, "io.js")), source.replaceAll("const text", "let text"))
    })
  )

  it.scoped("TL-1 says why nothing matched, pointing at the closest line", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "io.js": source })
      const { context } = yield* makeContext(dir)
      const typo = yield* callFails(
        Edit.make(),
        { path: "io.js", old_string: "return parse(txt)", new_string: "x" },
        context
      )
      assert.strictEqual(
        typo,
        'old_string was not found in io.js; the closest line is 3: "return parse(text)". ' +
          "Read the file again and copy the text exactly."
      )
      const indentation = yield* callFails(
        Edit.make(),
        { path: "io.js", old_string: "const text = read(path)\nreturn parse(text)", new_string: "x" },
        context
      )
      assert.include(indentation, "line 2 matches its first line when spacing is ignored")
      const numbered = yield* callFails(
        Edit.make(),
        { path: "io.js", old_string: "     2\t  const text = read(path)", new_string: "x" },
        context
      )
      assert.include(numbered, "line number from read")
      const unrelated = yield* callFails(
        Edit.make(),
        { path: "io.js", old_string: "zzzz qqqq", new_string: "x" },
        context
      )
      assert.strictEqual(unrelated, "old_string was not found in io.js. Read the file again and copy the text exactly.")
      assert.strictEqual(yield* readText(path.join(dir, "io.js")), source)
    })
  )

  it.scoped("TL-1 edits of one file that run at once, as one response's calls do, all land", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
      yield* writeFiles(dir, { "f.txt": `${words.join("\n")}\n` })
      const { context } = yield* makeContext(dir)
      const results = yield* Effect.forEach(
        words,
        (word, i) =>
          // One path written three ways: each call resolves it to the same file.
          call(
            Edit.make(),
            { path: ["f.txt", "./f.txt", `${dir}/f.txt`][i % 3], old_string: word, new_string: word.toUpperCase() },
            context
          ),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        results,
        words.map((_, i) => `Replaced 1 occurrence in f.txt (line ${i + 1}).`)
      )
      assert.strictEqual(yield* readText(path.join(dir, "f.txt")), `${words.map((w) => w.toUpperCase()).join("\n")}\n`)
    })
  )

  it.scoped("TL-1 keeps Windows line ends when the model writes \\n", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "win.txt": "a\r\nb\r\nc\r\n" })
      const { context } = yield* makeContext(dir)
      yield* call(Edit.make(), { path: "win.txt", old_string: "a\nb", new_string: "A\nB" }, context)
      assert.strictEqual(yield* readText(path.join(dir, "win.txt")), "A\r\nB\r\nc\r\n")
    })
  )

  it.scoped("TL-1 a file with other hard links is edited in place, so every name sees the change", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "a.ts": source })
      const first = path.join(dir, "a.ts")
      const second = path.join(dir, "b.ts")
      yield* Effect.promise(() => fs.link(first, second))
      const { context } = yield* makeContext(dir)
      yield* call(Edit.make(), { path: "a.ts", old_string: "parse(text)", new_string: "decode(text)" }, context)
      assert.strictEqual(yield* readText(second), source.replace("parse(text)", "decode(text)"))
      const [a, b] = yield* Effect.promise(() => Promise.all([fs.stat(first), fs.stat(second)]))
      assert.strictEqual(a.ino, b.ino)
      assert.strictEqual(a.nlink, 2)
    })
  )

  it.scoped("TL-1 TL-5 edits through a symlink the file it names; the link stays a link", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "src/real.ts": source })
      const link = path.join(dir, "link.ts")
      yield* Effect.promise(() => fs.symlink("src/real.ts", link))
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Edit.make(), { path: "link.ts", old_string: "render(value)", new_string: "show(value)" }, context),
        "Replaced 1 occurrence in link.ts (line 7)."
      )
      assert.include(yield* readText(path.join(dir, "src/real.ts")), "const text = show(value)")
      assert.isTrue((yield* Effect.promise(() => fs.lstat(link))).isSymbolicLink())
      assert.strictEqual(yield* Effect.promise(() => fs.readlink(link)), "src/real.ts")
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(path.join(dir, "src"))), ["real.ts"])
    })
  )

  it.scoped("TL-1 a file in another encoding than UTF-8 is refused, not rewritten with its other bytes replaced", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const latin1 = Buffer.from("plain line\ncaf\xe9 au lait\nsecond line\n", "latin1")
      yield* writeFiles(dir, { "latin.txt": latin1, "utf8.txt": "café au lait\nsecond line\n" })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Edit.make(), { path: "latin.txt", old_string: "second", new_string: "2nd" }, context),
        "latin.txt is not UTF-8 text (line 2 holds bytes of another encoding, such as Latin-1), and edit would change them; change it with bash (sed, iconv) instead"
      )
      assert.isTrue((yield* readBytes(path.join(dir, "latin.txt"))).equals(latin1), "the file is as it was")
      yield* call(Edit.make(), { path: "utf8.txt", old_string: "second", new_string: "2nd" }, context)
      assert.strictEqual(yield* readText(path.join(dir, "utf8.txt")), "café au lait\n2nd line\n")
    })
  )

  it.scoped("TL-1 a read-only file is not edited", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "locked.txt": "keep me\n" })
      const file = path.join(dir, "locked.txt")
      yield* Effect.promise(() => fs.chmod(file, 0o400))
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Edit.make(), { path: "locked.txt", old_string: "keep", new_string: "lose" }, context),
        "locked.txt is read-only (mode 0400); edit leaves it as it is: make it writable first (chmod u+w) if it is meant to change"
      )
      assert.strictEqual(yield* readText(file), "keep me\n")
    })
  )

  it.scoped("TL-1 rejects empty and no-op edits, missing and binary files", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "a.txt": "abc", "b.bin": new Uint8Array([0, 1, 2]) })
      const { context } = yield* makeContext(dir)
      assert.include(
        yield* callFails(Edit.make(), { path: "a.txt", old_string: "", new_string: "x" }, context),
        "use write"
      )
      assert.include(
        yield* callFails(Edit.make(), { path: "a.txt", old_string: "abc", new_string: "abc" }, context),
        "nothing to change"
      )
      assert.strictEqual(
        yield* callFails(Edit.make(), { path: "c.txt", old_string: "a", new_string: "b" }, context),
        "c.txt does not exist"
      )
      assert.include(
        yield* callFails(Edit.make(), { path: "b.bin", old_string: "a", new_string: "b" }, context),
        "binary"
      )
    })
  )

  it.scoped("TL-1 a folder or a pipe is refused before it is read (a pipe would wait for a writer for ever)", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "sub/a.txt": "abc" })
      execFileSync("mkfifo", [path.join(dir, "queue")])
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Edit.make(), { path: "queue", old_string: "a", new_string: "b" }, context),
        "queue is not a regular file (a device, pipe or socket); edit changes text files only"
      )
      assert.strictEqual(
        yield* callFails(Edit.make(), { path: "sub", old_string: "a", new_string: "b" }, context),
        "sub is a directory; edit changes files"
      )
    })
  )

  it.scoped("TL-6 a file too large to hold is refused with the remedy; a near miss in huge lines is cheap", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const long = `${"x".repeat(200_000)}\n`
      yield* writeFiles(dir, { "big.txt": "y".repeat(2_000), "wide.txt": `${long.repeat(20)}  return parse(text)\n` })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(
          Edit.make({ maxFileBytes: 1_000 }),
          { path: "big.txt", old_string: "y", new_string: "z" },
          context
        ),
        "big.txt is too large to edit (2.0 KiB, more than 1000 B); change it with bash (sed, a script) instead"
      )
      assert.include(
        yield* callFails(Edit.make(), { path: "wide.txt", old_string: "return parse(txt)", new_string: "z" }, context),
        'the closest line is 21: "return parse(text)"'
      )
    })
  )
})
