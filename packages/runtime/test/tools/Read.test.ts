import { accessSync, constants } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Edit from "@alisio/runtime/tools/Edit"
import * as Read from "@alisio/runtime/tools/Read"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { call, callFails, makeContext, tempDir, writeFiles } from "./context.js"

const lines = (n: number) => `${Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n")}\n`

describe("read", () => {
  it.scoped("TL-1 returns a text file with line numbers", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "src/a.ts": "const a = 1\r\nexport { a }\n" })
      const { context } = yield* makeContext(dir)
      const text = yield* call(Read.make(), { path: "src/a.ts" }, context)
      assert.strictEqual(text, "     1\tconst a = 1\n     2\texport { a }")
    })
  )

  it.scoped("TL-1 reads a line range and says how to go on", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "long.txt": lines(50) })
      const { context } = yield* makeContext(dir)
      const middle = yield* call(Read.make(), { path: "long.txt", offset: 10, limit: 3 }, context)
      assert.strictEqual(
        middle,
        "    10\tline 10\n    11\tline 11\n    12\tline 12\n[lines 10-12 shown; the file goes on: read with offset=13 for more]"
      )
      const end = yield* call(Read.make(), { path: "long.txt", offset: 49 }, context)
      assert.strictEqual(end, "    49\tline 49\n    50\tline 50\n[lines 49-50 of 50]")
      const exactEnd = yield* call(Read.make(), { path: "long.txt", offset: 48, limit: 3 }, context)
      assert.include(exactEnd, "[lines 48-50 of 50]")
      const past = yield* callFails(Read.make(), { path: "long.txt", offset: 51 }, context)
      assert.strictEqual(past, "long.txt has 50 lines; offset 51 is past the end")
      yield* writeFiles(dir, { "one.txt": "only\n" })
      assert.strictEqual(
        yield* callFails(Read.make(), { path: "one.txt", offset: 2 }, context),
        "one.txt has 1 line; offset 2 is past the end"
      )
    })
  )

  it.scoped("TL-1 caps lines, bytes and line length per call", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "long.txt": lines(100), "wide.txt": `${"x".repeat(5000)}\nshort\n` })
      const { context } = yield* makeContext(dir)
      const capped = yield* call(Read.make({ maxLines: 5 }), { path: "long.txt", limit: 50 }, context)
      assert.strictEqual(capped.split("\n").length, 6)
      assert.include(capped, "offset=6")
      const bytes = yield* call(Read.make({ maxBytes: 100 }), { path: "long.txt" }, context)
      assert.match(bytes, /\[output cap of 100 B reached after line (\d+); read with offset=\d+ for more\]$/)
      assert.isBelow(bytes.length, 200)
      const wide = yield* call(Read.make({ maxLineLength: 10 }), { path: "wide.txt" }, context)
      assert.strictEqual(wide, "     1\txxxxxxxxxx… [4990 more characters]\n     2\tshort")
    })
  )

  it.scoped(
    "TL-1 CTX-1 a default read returns at most 100 KiB (about 25 000 tokens), so one call leaves room in a small window",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        // 2 000 lines of 200 characters: 400 KB, within the line count.
        yield* writeFiles(dir, { "wide.txt": `${Array.from({ length: 2_000 }, () => "y".repeat(200)).join("\n")}\n` })
        const { context } = yield* makeContext(dir)
        const text = yield* call(Read.make(), { path: "wide.txt" }, context)
        assert.isAtMost(Buffer.byteLength(text), 100 * 1024 + 200)
        assert.match(text, /\[output cap of 100(\.0)? KiB reached after line \d+; read with offset=\d+ for more\]$/)
      })
  )

  it.scoped("TL-1 reads a file larger than one chunk without losing lines", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "big.txt": lines(30_000) })
      const { context } = yield* makeContext(dir)
      const text = yield* call(Read.make(), { path: "big.txt", offset: 29_999 }, context)
      assert.strictEqual(text, " 29999\tline 29999\n 30000\tline 30000\n[lines 29999-30000 of 30000]")
    })
  )

  it.scoped("TL-1 reports binary files instead of dumping their bytes", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 1, 2, 3])
      yield* writeFiles(dir, { "logo.png": png, "blob.bin": new Uint8Array([1, 2, 0, 4]) })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Read.make(), { path: "logo.png" }, context),
        "logo.png is a binary file (a PNG image, 15 B); its bytes are not shown."
      )
      assert.include(yield* call(Read.make(), { path: "blob.bin" }, context), "binary file (binary data, 4 B)")
    })
  )

  it.scoped("TL-1 a file that is not UTF-8 is shown with a note naming the line and the remedy", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const latin1 = Buffer.from("plain line\ncaf\xe9 au lait\nsecond line\n", "latin1")
      yield* writeFiles(dir, { "latin.txt": latin1, "end.txt": Buffer.from("ok\ncaf\xe9", "latin1") })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Read.make(), { path: "latin.txt" }, context),
        "     1\tplain line\n     2\tcaf\uFFFD au lait\n     3\tsecond line\n" +
          "[latin.txt is not UTF-8 text (line 2 holds bytes of another encoding, such as Latin-1): they are shown as " +
          "\uFFFD, and edit refuses the file; change it with bash (sed, iconv) instead]"
      )
      assert.include(yield* call(Read.make(), { path: "latin.txt", offset: 3 }, context), "(line 2 holds bytes")
      // A byte that begins a sequence at the very end is checked when the file ends.
      assert.include(yield* call(Read.make(), { path: "end.txt" }, context), "[end.txt is not UTF-8 text (line 2 ")
    })
  )

  it.scoped("TL-1 UTF-8 cut by a chunk boundary, and a literal U+FFFD, are no other encoding", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      // 65 535 bytes, then a character of two bytes across the 64 KiB boundary of readWindow's chunks.
      const head = `${"x".repeat(99)}\n`.repeat(655) + "y".repeat(35)
      assert.strictEqual(Buffer.byteLength(head), 64 * 1024 - 1)
      yield* writeFiles(dir, {
        "utf8.txt": `${head}é\nreplacement \uFFFD kept\n`,
        "cut.txt": Buffer.concat([Buffer.from(head), Buffer.from("\xe9 x\n", "latin1")])
      })
      const { context } = yield* makeContext(dir)
      const utf8 = yield* call(Read.make(), { path: "utf8.txt", offset: 656 }, context)
      assert.strictEqual(utf8, `   656\t${"y".repeat(35)}é\n   657\treplacement \uFFFD kept\n[lines 656-657 of 657]`)
      const cut = yield* call(Read.make(), { path: "cut.txt", offset: 656 }, context)
      assert.include(cut, "[cut.txt is not UTF-8 text (line 656 holds bytes of another encoding")
    })
  )

  it.scoped("TL-1 explains missing files, folders and bad arguments", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "sub/empty.txt": "" })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(yield* callFails(Read.make(), { path: "nope.txt" }, context), "nope.txt does not exist")
      assert.strictEqual(
        yield* callFails(Read.make(), { path: "sub" }, context),
        "sub is a directory; use ls to list it"
      )
      assert.strictEqual(yield* call(Read.make(), { path: "sub/empty.txt" }, context), "sub/empty.txt is empty.")
      assert.include(yield* callFails(Read.make(), { path: 3 }, context), "Invalid arguments for read")
    })
  )

  it.scoped.skipIf(process.platform !== "linux")(
    "TL-1 a file that reports no size, as those of /proc do, is read for what it holds",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const { context } = yield* makeContext(dir, { approveExternal: true })
        const stat = yield* Effect.promise(() => fs.stat("/proc/self/status"))
        assert.strictEqual(stat.size, 0)
        const text = yield* call(Read.make(), { path: "/proc/self/status" }, context)
        assert.match(text, /^ {5}1\tName:\t.+\n {5}2\t/)
      })
  )

  // /proc/kmsg is a regular file to stat that waits for the kernel's next message once read out;
  // only root may open it.
  const kmsgReadable = (() => {
    try {
      accessSync("/proc/kmsg", constants.R_OK)
      return true
    } catch {
      return false
    }
  })()

  it.scoped.skipIf(!kmsgReadable)(
    "TL-6 a stream that looks like a file (/proc/kmsg) never blocks the call: what it holds now, or why not",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const { context } = yield* makeContext(dir, { approveExternal: true })
        // Read out what is waiting, so the next reads find nothing and would wait for ever.
        yield* Effect.either(call(Read.make(), { path: "/proc/kmsg" }, context))
        const again = yield* Effect.either(call(Read.make(), { path: "/proc/kmsg" }, context))
        if (again._tag === "Left") {
          assert.strictEqual(
            again.left.message,
            "/proc/kmsg has nothing to read now: it is a stream that waits for data, not a file; " +
              "read a little of it with bash and a timeout (timeout 2 head -n 50 /proc/kmsg)"
          )
        } else {
          assert.match(again.right, /^ {5}1\t/)
        }
      })
  )

  it.scoped("TL-1 UTF-16 text is named as such, with the command that shows it, where read and edit said binary", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const utf16 = (text: string) => new Uint8Array([0xff, 0xfe, ...Buffer.from(text, "utf16le")])
      yield* writeFiles(dir, { "notes.txt": utf16("hello\r\n"), "my notes.txt": utf16("hi\r\n") })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Read.make(), { path: "notes.txt" }, context),
        "notes.txt is UTF-16 text (LE), not UTF-8; see it with bash: iconv -f UTF-16 -t UTF-8 notes.txt, " +
          "and convert it the same way (to a new file) before changing it."
      )
      assert.include(
        yield* call(Read.make(), { path: "my notes.txt" }, context),
        "iconv -f UTF-16 -t UTF-8 'my notes.txt'"
      )
      assert.strictEqual(
        yield* callFails(Edit.make(), { path: "notes.txt", old_string: "hello", new_string: "x" }, context),
        "notes.txt is UTF-16 text (LE), not UTF-8; see it with bash: iconv -f UTF-16 -t UTF-8 notes.txt, " +
          "and convert it the same way (to a new file) before changing it"
      )
    })
  )

  it.scoped("TL-3 a path outside the workspace asks for approval; a denial reaches the model", () =>
    Effect.gen(function* () {
      const outside = yield* tempDir
      const dir = yield* tempDir
      yield* writeFiles(outside, { "secret.txt": "hidden\n" })
      const denied = yield* makeContext(dir)
      const message = yield* callFails(Read.make(), { path: path.join(outside, "secret.txt") }, denied.context)
      assert.strictEqual(message, `access to ${path.join(outside, "secret.txt")} was denied`)
      const relative = path.relative(dir, path.join(outside, "secret.txt"))
      yield* callFails(Read.make(), { path: relative }, denied.context)
      assert.deepStrictEqual(yield* Ref.get(denied.externalRequests), [
        path.join(outside, "secret.txt"),
        path.join(outside, "secret.txt")
      ])
      const approved = yield* makeContext(dir, { approveExternal: true })
      const text = yield* call(Read.make(), { path: relative }, approved.context)
      assert.strictEqual(text, "     1\thidden")
    })
  )

  it.scoped("TL-3 a symlink leading out of the workspace asks too; paths inside do not", () =>
    Effect.gen(function* () {
      const outside = yield* tempDir
      const dir = yield* tempDir
      yield* writeFiles(outside, { "secret.txt": "hidden\n" })
      yield* writeFiles(dir, { "inside.txt": "fine\n" })
      yield* Effect.promise(() => fs.symlink(outside, path.join(dir, "escape")))
      const test = yield* makeContext(dir)
      assert.strictEqual(yield* call(Read.make(), { path: "./sub/../inside.txt" }, test.context), "     1\tfine")
      assert.deepStrictEqual(yield* Ref.get(test.externalRequests), [])
      const message = yield* callFails(Read.make(), { path: "escape/secret.txt" }, test.context)
      assert.include(message, "was denied")
      assert.deepStrictEqual(yield* Ref.get(test.externalRequests), [path.join(outside, "secret.txt")])
    })
  )
})
