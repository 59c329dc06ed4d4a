// TL-5: the workspace boundary is checked on real paths, for every tool, and through the real
// runner's external-directory approval.

import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Fake from "@alisio/providers/FakeProvider"
import * as Interaction from "@alisio/runtime/Interaction"
import { builtinTools } from "@alisio/runtime/tools/BuiltinTools"
import * as Edit from "@alisio/runtime/tools/Edit"
import * as Glob from "@alisio/runtime/tools/Glob"
import * as Grep from "@alisio/runtime/tools/Grep"
import * as Ls from "@alisio/runtime/tools/Ls"
import * as Read from "@alisio/runtime/tools/Read"
import * as Write from "@alisio/runtime/tools/Write"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { assertContract, baseOptions, collect, ofType, runnerLayer } from "../helpers/harness.js"
import { call, callFails, makeContext, readText, tempDir, writeFiles } from "./context.js"

const symlink = (target: string, link: string) => Effect.promise(() => fs.symlink(target, link))
const exists = (file: string) =>
  Effect.promise(() =>
    fs.lstat(file).then(
      () => true,
      () => false
    )
  )

/** A workspace holding `escape` → a folder outside, `leak.txt` → a file outside, and inside files. */
const escapingWorkspace = Effect.gen(function* () {
  const outside = yield* tempDir
  const dir = yield* tempDir
  yield* writeFiles(outside, { "secret.txt": "hidden token\n" })
  yield* writeFiles(dir, { "inside.txt": "plain token\n" })
  yield* symlink(outside, path.join(dir, "escape"))
  yield* symlink(path.join(outside, "secret.txt"), path.join(dir, "leak.txt"))
  return { outside, dir, secret: path.join(outside, "secret.txt") }
})

describe("workspace boundary", () => {
  it.scoped("TL-5 every tool asks for the real path of a link leading outside; denied, nothing leaks", () =>
    Effect.gen(function* () {
      const { outside, dir, secret } = yield* escapingWorkspace
      const test = yield* makeContext(dir)
      const denied = (tool: Parameters<typeof callFails>[0], args: unknown) => callFails(tool, args, test.context)
      assert.strictEqual(yield* denied(Read.make(), { path: "leak.txt" }), `access to ${secret} was denied`)
      assert.strictEqual(yield* denied(Read.make(), { path: "escape/secret.txt" }), `access to ${secret} was denied`)
      assert.strictEqual(yield* denied(Ls.make(), { path: "escape" }), `access to ${outside} was denied`)
      assert.strictEqual(
        yield* denied(Grep.make(), { pattern: "token", path: "escape" }),
        `access to ${outside} was denied`
      )
      assert.strictEqual(yield* denied(Glob.make(), { pattern: "escape/*.txt" }), `access to ${outside} was denied`)
      const newFile = path.join(outside, "new.txt")
      assert.strictEqual(
        yield* denied(Write.make(), { path: "escape/new.txt", content: "x" }),
        `access to ${newFile} was denied`
      )
      assert.strictEqual(
        yield* denied(Edit.make(), { path: "leak.txt", old_string: "hidden", new_string: "shown" }),
        `access to ${secret} was denied`
      )
      assert.isFalse(yield* exists(newFile))
      assert.strictEqual(yield* readText(secret), "hidden token\n")
      const approved = yield* makeContext(dir, { approveExternal: true })
      assert.strictEqual(yield* call(Read.make(), { path: "leak.txt" }, approved.context), "     1\thidden token")
    })
  )

  it.scoped("TL-1 a path holding a NUL character is refused plainly by every tool that takes a path", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "f.txt": "hi\n" })
      const { context } = yield* makeContext(dir)
      const refused = '"f\\u0000.txt" holds a NUL character (\\u0000), which no file path can contain'
      assert.strictEqual(yield* callFails(Read.make(), { path: "f\0.txt" }, context), refused)
      assert.strictEqual(yield* callFails(Write.make(), { path: "f\0.txt", content: "x" }, context), refused)
      assert.strictEqual(
        yield* callFails(Edit.make(), { path: "f\0.txt", old_string: "hi", new_string: "x" }, context),
        refused
      )
      assert.strictEqual(yield* callFails(Ls.make(), { path: "f\0.txt" }, context), refused)
      assert.strictEqual(yield* callFails(Grep.make(), { pattern: "hi", path: "f\0.txt" }, context), refused)
      assert.strictEqual(yield* readText(path.join(dir, "f.txt")), "hi\n")
    })
  )

  it.scoped(
    "TL-1 a missing path says what the model slipped in: a newline, a space at an end, Windows separators",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        yield* writeFiles(dir, { "sub/f.txt": "hi\n" })
        const { context } = yield* makeContext(dir)
        assert.strictEqual(
          yield* callFails(Read.make(), { path: "sub/f.txt\n" }, context),
          '"sub/f.txt\\n" does not exist: the path holds a control character (a newline, a tab); leave it out'
        )
        assert.strictEqual(
          yield* callFails(Edit.make(), { path: " sub/f.txt", old_string: "hi", new_string: "x" }, context),
          '" sub/f.txt" does not exist: the path starts or ends with a space; leave it out'
        )
        assert.strictEqual(
          yield* callFails(Ls.make(), { path: "sub\\" }, context),
          "sub\\ does not exist; folders are separated by /, as in sub/"
        )
        assert.strictEqual(
          yield* callFails(Grep.make(), { pattern: "hi", path: "sub\\f.txt" }, context),
          "sub\\f.txt does not exist; folders are separated by /, as in sub/f.txt"
        )
      })
  )

  it.scoped("TL-1 a path too long for the file system is said so in a line, not echoed twice whole", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const { context } = yield* makeContext(dir)
      const long = `${"a".repeat(300)}/${"b".repeat(5000)}`
      const shown = `${long.slice(0, 120)}…${long.slice(-60)}`
      const says = `${shown}: a name in this path is too long (file systems allow 255 bytes a name and 4096 a path); use shorter names`
      assert.strictEqual(yield* callFails(Read.make(), { path: long }, context), says)
      assert.strictEqual(yield* callFails(Write.make(), { path: long, content: "x" }, context), says)
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "c".repeat(300), content: "x" }, context),
        `${"c".repeat(120)}…${"c".repeat(60)}: a name in this path is too long (file systems allow 255 bytes a name and 4096 a path); use shorter names`
      )
    })
  )

  it.scoped("TL-1 a name holding a newline is listed quoted, as one entry the model can pass back", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "d/a\n  b.txt": "hello\n", "d/c.txt": "" })
      const { context } = yield* makeContext(dir)
      assert.strictEqual(yield* call(Ls.make(), { path: "d" }, context), 'd/\n  "a\\n  b.txt"\n  c.txt')
      assert.strictEqual(yield* call(Glob.make(), { pattern: "d/a*" }, context), '"d/a\\n  b.txt"')
      assert.strictEqual(yield* call(Grep.make(), { pattern: "hello" }, context), '"d/a\\n  b.txt":1: hello')
      const named = JSON.parse('"d/a\\n  b.txt"') as string
      assert.strictEqual(yield* call(Read.make(), { path: named }, context), "     1\thello")
    })
  )

  it.scoped("TL-1 a file:// URL names its path; one naming another host is refused", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* writeFiles(dir, { "f.txt": "hi\n" })
      const { context } = yield* makeContext(dir)
      const url = `file://${path.join(dir, "f.txt")}`
      assert.strictEqual(yield* call(Read.make(), { path: url }, context), "     1\thi")
      assert.strictEqual(
        yield* callFails(Read.make(), { path: "file://server/share/f.txt" }, context),
        '"file://server/share/f.txt" is a URL no local path matches; give a file path instead'
      )
    })
  )

  it.scoped("TL-5 walking tools list a link leading outside but never enter or read it", () =>
    Effect.gen(function* () {
      const { outside, dir, secret } = yield* escapingWorkspace
      const test = yield* makeContext(dir)
      assert.strictEqual(yield* call(Grep.make(), { pattern: "token" }, test.context), "inside.txt:1: plain token")
      assert.strictEqual(yield* call(Glob.make(), { pattern: "**/*" }, test.context), "escape\ninside.txt\nleak.txt")
      assert.strictEqual(
        yield* call(Ls.make(), { recursive: true }, test.context),
        `./\n  escape -> ${outside}\n  inside.txt\n  leak.txt -> ${secret}`
      )
      assert.deepStrictEqual(yield* Ref.get(test.externalRequests), [])
    })
  )

  it.scoped("TL-5 a dangling link is followed to the path it names, a new file to its nearest parent", () =>
    Effect.gen(function* () {
      const outside = yield* tempDir
      const dir = yield* tempDir
      const target = path.join(outside, "later.txt")
      yield* symlink(path.relative(dir, target), path.join(dir, "dangling"))
      yield* symlink("sub/made.txt", path.join(dir, "inward"))
      const test = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "dangling", content: "x" }, test.context),
        `access to ${target} was denied`
      )
      assert.isFalse(yield* exists(target))
      // Inside, a dangling link and a path below missing folders need no approval.
      assert.strictEqual(
        yield* call(Write.make(), { path: "inward", content: "in\n" }, test.context),
        "Created inward (1 line, 3 B)."
      )
      assert.strictEqual(yield* readText(path.join(dir, "sub", "made.txt")), "in\n")
      yield* call(Write.make(), { path: "a/b/c.txt", content: "" }, test.context)
      assert.deepStrictEqual(yield* Ref.get(test.externalRequests), [target])
      const approved = yield* makeContext(dir, { approveExternal: true })
      yield* call(Write.make(), { path: "dangling", content: "through\n" }, approved.context)
      assert.strictEqual(yield* readText(target), "through\n")
      assert.isTrue((yield* Effect.promise(() => fs.lstat(path.join(dir, "dangling")))).isSymbolicLink())
    })
  )

  it.scoped("TL-5 write and edit through a link to a file outside change that file once approved; the link stays", () =>
    Effect.gen(function* () {
      const { dir, secret } = yield* escapingWorkspace
      const link = path.join(dir, "leak.txt")
      const denied = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "leak.txt", content: "planted\n" }, denied.context),
        `access to ${secret} was denied`
      )
      assert.strictEqual(yield* readText(secret), "hidden token\n")
      const approved = yield* makeContext(dir, { approveExternal: true })
      yield* call(Write.make(), { path: "leak.txt", content: "one token\n" }, approved.context)
      yield* call(Edit.make(), { path: "leak.txt", old_string: "one", new_string: "two" }, approved.context)
      assert.strictEqual(yield* readText(secret), "two token\n")
      assert.deepStrictEqual(yield* Ref.get(approved.externalRequests), [secret, secret])
      assert.isTrue((yield* Effect.promise(() => fs.lstat(link))).isSymbolicLink())
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(path.dirname(secret))), ["secret.txt"])
      // write creates the file a dangling link names (TL-5 above); read and edit say the link dangles.
      yield* symlink("missing.txt", path.join(dir, "dangling"))
      assert.strictEqual(
        yield* callFails(Edit.make(), { path: "dangling", old_string: "a", new_string: "b" }, approved.context),
        "dangling is a symlink to missing.txt, which does not exist; edit changes existing files: write creates it through the link"
      )
      assert.strictEqual(
        yield* callFails(Read.make(), { path: "dangling" }, approved.context),
        "dangling is a symlink to missing.txt, which does not exist"
      )
      assert.isFalse(yield* exists(path.join(dir, "missing.txt")))
    })
  )

  it.scoped("TL-5 a chain of links is followed to its end; a loop is an error, never a hang", () =>
    Effect.gen(function* () {
      const outside = yield* tempDir
      const dir = yield* tempDir
      yield* writeFiles(outside, { "end.txt": "end\n" })
      yield* writeFiles(dir, { "ok.txt": "token\n" })
      yield* symlink(path.join(outside, "end.txt"), path.join(outside, "hop"))
      yield* symlink(path.join(outside, "hop"), path.join(dir, "first"))
      yield* symlink("loop-b", path.join(dir, "loop-a"))
      yield* symlink("loop-a", path.join(dir, "loop-b"))
      const test = yield* makeContext(dir)
      assert.strictEqual(
        yield* callFails(Read.make(), { path: "first" }, test.context),
        `access to ${path.join(outside, "end.txt")} was denied`
      )
      assert.strictEqual(
        yield* callFails(Read.make(), { path: "loop-a" }, test.context),
        "loop-a: too many levels of symbolic links (a link loop)"
      )
      assert.strictEqual(
        yield* callFails(Write.make(), { path: "loop-a/x.txt", content: "" }, test.context),
        "loop-a/x.txt: too many levels of symbolic links (a link loop)"
      )
      assert.strictEqual(yield* call(Grep.make(), { pattern: "token" }, test.context), "ok.txt:1: token")
      assert.include(
        yield* call(Ls.make(), { recursive: true }, test.context),
        "  loop-a -> loop-b\n  loop-b -> loop-a"
      )
    })
  )

  it.scoped("TL-5 a workspace reached through a symlink is compared by its real path", () =>
    Effect.gen(function* () {
      const parent = yield* tempDir
      const real = path.join(parent, "real")
      yield* writeFiles(real, { "file.txt": "mine\n" })
      yield* writeFiles(parent, { "sibling.txt": "not mine\n" })
      const via = path.join(parent, "via")
      yield* symlink(real, via)
      const test = yield* makeContext(via)
      assert.strictEqual(yield* call(Read.make(), { path: "file.txt" }, test.context), "     1\tmine")
      assert.strictEqual(yield* call(Read.make(), { path: path.join(real, "file.txt") }, test.context), "     1\tmine")
      yield* call(Write.make(), { path: "new.txt", content: "" }, test.context)
      assert.deepStrictEqual(yield* Ref.get(test.externalRequests), [])
      assert.include(yield* callFails(Read.make(), { path: "../sibling.txt" }, test.context), "was denied")
      assert.deepStrictEqual(yield* Ref.get(test.externalRequests), [path.join(parent, "sibling.txt")])
    })
  )
})

describe("workspace boundary through the runner", () => {
  const readThroughLink = (readOnly: boolean) =>
    Effect.gen(function* () {
      const { dir, secret } = yield* escapingWorkspace
      const events = yield* collect({ ...baseOptions, cwd: dir, readOnly }).pipe(
        Effect.provide(
          runnerLayer({
            tools: builtinTools(),
            script: [
              Fake.callTools(
                { id: "c1", name: "read", args: { path: "escape/secret.txt" } },
                { id: "c2", name: "grep", args: { pattern: "token", path: "leak.txt" } }
              ),
              Fake.answer("done")
            ],
            interaction: Interaction.layerHeadless({ approveAll: false })
          })
        )
      )
      assertContract(events)
      const requested = ofType(events, "approval_requested")
      assert.deepStrictEqual(
        requested.map((event) => [event.data.kind, event.data.path]),
        [
          ["external_directory", secret],
          ["external_directory", secret]
        ]
      )
      const completed = ofType(events, "tool_call_completed")
      assert.deepStrictEqual(
        completed.map((event) => event.data.status),
        ["error", "error"]
      )
      for (const event of completed) {
        assert.include(event.data.result, "outside the workspace")
        assert.notInclude(event.data.result, "hidden")
      }
    })

  it.scoped("TL-5 a link leading outside needs the external-directory approval that ../x needs", () =>
    readThroughLink(false)
  )

  it.scoped("TL-5 TL-2 read-only runs cannot read through a link leading outside either", () => readThroughLink(true))

  it.scoped("TL-5 write through a link leading outside is refused without approval", () =>
    Effect.gen(function* () {
      const { dir, outside } = yield* escapingWorkspace
      const events = yield* collect({ ...baseOptions, cwd: dir }).pipe(
        Effect.provide(
          runnerLayer({
            tools: builtinTools(),
            script: [
              Fake.callTools({ id: "c1", name: "write", args: { path: "escape/planted.txt", content: "x" } }),
              Fake.answer("done")
            ],
            // The person allows the write tool, not the access outside.
            interaction: Interaction.layerScripted({ approve: (request) => Effect.succeed(request.kind === "tool") })
          })
        )
      )
      assertContract(events)
      assert.deepStrictEqual(
        ofType(events, "approval_requested").map((event) => event.data.kind),
        ["tool", "external_directory"]
      )
      assert.isFalse(yield* exists(path.join(outside, "planted.txt")))
    })
  )
})
