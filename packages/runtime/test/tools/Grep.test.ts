import * as Grep from "@alisio/runtime/tools/Grep"
import { liveSearchWorkers } from "@alisio/runtime/tools/internal/searchWorker"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { call, callFails, makeContext, tempDir, writeFiles } from "./context.js"

/** `^(a+)+$` backtracks about 2^35 times on this line before it gives up: minutes of one core. */
const catastrophic = { pattern: "^(a+)+$", text: `${"a".repeat(35)}!\n` }

/** Real time, whatever clock the test runs on. */
const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Waits until the search thread has its job (a thread started, then some real time). */
const searching = (before: number) =>
  Effect.gen(function* () {
    while (liveSearchWorkers() <= before) yield* realSleep(10)
    yield* realSleep(300)
  })

const tree = {
  "src/a.ts": "import x from 'y'\nexport const Load = 1\nconst load = 2\n",
  "src/b.js": "function load() {}\n",
  "docs/notes.md": "how to load things\n",
  "image.bin": new Uint8Array([108, 111, 97, 100, 0, 1, 2]),
  // Binary in its first 8 KiB, text after: left after the first read.
  "large.bin": new Uint8Array([0, ...new Array(20_000).fill(32), ...new TextEncoder().encode("\nload\n")]),
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

  it.scoped("TL-1 a final newline ends the last line and adds no empty line to match", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "a.txt": "one\n\nthree\n", "b.txt": "no newline" })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(yield* call(Grep.make(), { pattern: "^$" }, context), "a.txt:2: ")
      assert.strictEqual(
        yield* call(Grep.make(), { pattern: "" }, context),
        "a.txt:1: one\na.txt:2: \na.txt:3: three\nb.txt:1: no newline"
      )
    })
  )

  it.scoped("TL-1 lines match as read shows them: without a Windows line end, or a byte order mark", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, {
        "crlf.txt": "const a = 1;\r\nconst b = 2\r\n",
        "bom.txt": "\uFEFFimport x from 'y'\nimport z from 'w'\n"
      })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(yield* call(Grep.make(), { pattern: ";$" }, context), "crlf.txt:1: const a = 1;")
      assert.strictEqual(yield* call(Grep.make(), { pattern: "2(?!\\s)" }, context), "crlf.txt:2: const b = 2")
      assert.strictEqual(
        yield* call(Grep.make(), { pattern: "^import" }, context),
        "bom.txt:1: import x from 'y'\nbom.txt:2: import z from 'w'"
      )
    })
  )

  it.scoped("TL-1 a POSIX class, which JavaScript reads as a plain set, gets its remedy when nothing matches", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "a.txt": "abc 123\n" })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(
        yield* call(Grep.make(), { pattern: "^[[:digit:]]+" }, context),
        "No lines match /^[[:digit:]]+/. (POSIX classes such as [[:alpha:]] are not JavaScript: use [A-Za-z], \\d, \\s or \\w)"
      )
    })
  )

  it.scoped("TL-1 a lookahead is tested against each line alone, as without the whole-file pass", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "a.txt": "foo\nbar\n", "b.txt": "foo bar\n" })
      const { context } = yield* makeContext(dir)
      // In the whole text "foo" is followed by a newline; in its line, by nothing.
      assert.strictEqual(yield* call(Grep.make(), { pattern: "foo(?!\\s)" }, context), "a.txt:1: foo")
      assert.strictEqual(yield* call(Grep.make(), { pattern: "(?<!o )bar$" }, context), "a.txt:2: bar")
    })
  )

  it.scoped.skipIf(process.platform !== "linux")("TL-1 a file that reports size 0 (/proc) is read to its end", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const { context } = yield* makeContext(dir, { approveExternal: true })
      assert.match(
        yield* call(Grep.make(), { pattern: "^Name:", path: "/proc/self/status" }, context),
        /^\/proc\/self\/status:1: Name:\s+\S/
      )
    })
  )

  it.scoped("TL-1 rejects an invalid regular expression", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const { context } = yield* makeContext(dir)
      assert.match(
        yield* callFails(Grep.make(), { pattern: "a(b" }, context),
        /^Invalid regular expression: \/a\(b\/: Unterminated group \(the pattern is a JavaScript regular expression; escape/
      )
      assert.match(
        yield* callFails(Grep.make(), { pattern: "(?i)load" }, context),
        /\(inline flags such as \(\?i\) are not JavaScript: leave them out and set case_insensitive\)$/
      )
    })
  )

  it.scoped("TL-6 a catastrophic regular expression is stopped by interruption and its search thread is gone", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "evil.txt": catastrophic.text })
      const { context } = yield* makeContext(dir)
      const before = liveSearchWorkers()
      const fiber = yield* Effect.fork(Grep.make().execute({ pattern: catastrophic.pattern }, context))
      yield* searching(before)
      // Before TL-6 the match ran on the main thread: this interruption never returned.
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(liveSearchWorkers(), before)
    })
  )

  it.scoped("TL-6 a search running past grep's own timeout is stopped and explained", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "evil.txt": catastrophic.text })
      const { context } = yield* makeContext(dir)
      const before = liveSearchWorkers()
      const fiber = yield* Effect.fork(
        Effect.flip(Grep.make({ timeoutMs: 5_000 }).execute({ pattern: catastrophic.pattern }, context))
      )
      yield* searching(before)
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber)
      assert.include(
        error.message,
        "grep stopped after 5 s without finishing, 0 files searched: the pattern may backtrack"
      )
      assert.strictEqual(liveSearchWorkers(), before)
    })
  )

  it.scoped("TL-6 a timeout says how many files were searched before it", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const plain = Object.fromEntries(
        Array.from({ length: 256 }, (_, i) => [`a${String(i).padStart(3, "0")}.txt`, "b\n"])
      )
      yield* writeFiles(dir, { ...plain, "z.txt": catastrophic.text })
      const { context } = yield* makeContext(dir)
      const before = liveSearchWorkers()
      const fiber = yield* Effect.fork(
        Effect.flip(Grep.make({ timeoutMs: 5_000 }).execute({ pattern: catastrophic.pattern }, context))
      )
      yield* searching(before)
      // The first batch of 256 files answers at once; the second, with z.txt, never does.
      yield* realSleep(1_500)
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber)
      assert.include(error.message, "grep stopped after 5 s without finishing, 256 files searched:")
    })
  )

  it.scoped("TL-6 results, order, caps and skipped files are the same across the search thread's batches", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const files: Record<string, string> = {}
      for (let i = 0; i < 600; i++) files[`f${String(i).padStart(3, "0")}.txt`] = `skip\nhit ${i}\n`
      yield* writeFiles(dir, files)
      const { context } = yield* makeContext(dir)
      const tool = Grep.make({ maxResults: 1_000 })
      const all = (yield* call(tool, { pattern: "^hit" }, context)).split("\n")
      assert.strictEqual(all.length, 600)
      assert.strictEqual(all[0], "f000.txt:2: hit 0")
      assert.strictEqual(all[599], "f599.txt:2: hit 599")
      const capped = yield* call(tool, { pattern: "^hit", max_results: 300 }, context)
      assert.isTrue(
        capped.endsWith("f299.txt:2: hit 299\n[stopped at 300 matching lines; narrow the pattern, path or glob]")
      )
    })
  )

  it.scoped("TL-6 files too large count only up to where the search stopped", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "a.txt": "x".repeat(100), "b.txt": "hit\nhit\n", "c.txt": "y".repeat(100) })
      const { context } = yield* makeContext(dir)
      const tool = Grep.make({ maxFileBytes: 50 })
      assert.strictEqual(
        yield* call(tool, { pattern: "hit", max_results: 1 }, context),
        "b.txt:1: hit\n[stopped at 1 matching lines; narrow the pattern, path or glob]\n[1 file(s) over 0 MiB not searched]"
      )
      assert.strictEqual(
        yield* call(tool, { pattern: "hit" }, context),
        "b.txt:1: hit\nb.txt:2: hit\n[2 file(s) over 0 MiB not searched]"
      )
    })
  )

  it.scoped("TL-6 a glob whose braces explode is refused, and a pathological one matches in linear time", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { [`${"a".repeat(200)}.txt`]: "hit\n" })
      const { context } = yield* makeContext(dir)
      assert.include(
        yield* callFails(Grep.make(), { pattern: "hit", glob: "{a,b}".repeat(12) }, context),
        "expands to more than 1000 alternatives"
      )
      // As a regular expression this is ^[^/]*a[^/]*a…b$: it backtracks for ages on 200 a's.
      assert.strictEqual(
        yield* call(Grep.make(), { pattern: "hit", glob: `${"*a".repeat(20)}*b` }, context),
        "No lines match /hit/."
      )
    })
  )
})
