import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { CommandSource, Completion } from "../../src/tui/Completion.js"
import { FileIndex, walkFiles } from "../../src/tui/FileIndex.js"
import { historyFile, openHistory } from "../../src/tui/History.js"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { VirtualTerminal } from "./VirtualTerminal.js"

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "alisio-tui-"))

const suggest = (completion: Completion, line: string, force = false) =>
  completion.getSuggestions([line], 0, line.length, { signal: new AbortController().signal, force })

describe("TUI inputs", () => {
  it("UI-1 ST-6 history is kept per workspace under the state folder, 0600 in a 0700 folder", () => {
    const state = tempDir()
    try {
      const file = historyFile(state, "/work/project")
      assert.notStrictEqual(file, historyFile(state, "/work/other"))
      assert.notInclude(file, "project", "the workspace's path does not show in the file name")
      const first = openHistory(file)
      first.add("fix the tests")
      first.add("fix the tests")
      first.add("now the docs\nwith two lines")
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
      assert.strictEqual(fs.statSync(path.dirname(file)).mode & 0o777, 0o700)
      assert.deepStrictEqual(openHistory(file).entries, ["fix the tests", "now the docs\nwith two lines"])
    } finally {
      fs.rmSync(state, { recursive: true, force: true })
    }
  })

  it("UI-1 TL-5 @ completion walks the workspace without .gitignore'd files and never enters a link out of it", async () => {
    const root = tempDir()
    const outside = tempDir()
    try {
      fs.mkdirSync(path.join(root, "src/deep"), { recursive: true })
      fs.writeFileSync(path.join(root, "src/deep/parser.ts"), "")
      fs.writeFileSync(path.join(root, "README.md"), "")
      fs.mkdirSync(path.join(root, "dist"))
      fs.writeFileSync(path.join(root, "dist/bundle.js"), "")
      fs.writeFileSync(path.join(root, "debug.log"), "")
      fs.writeFileSync(path.join(root, ".gitignore"), "dist/\n*.log\n")
      fs.mkdirSync(path.join(root, "node_modules/x"), { recursive: true })
      fs.writeFileSync(path.join(outside, "secret.txt"), "")
      fs.symlinkSync(outside, path.join(root, "elsewhere"))
      const files = await walkFiles(root)
      assert.include(files, "src/deep/parser.ts")
      assert.include(files, "README.md")
      assert.include(files, "elsewhere", "a link is listed")
      for (const hidden of ["dist/", "dist/bundle.js", "debug.log", "node_modules/", "elsewhere/secret.txt"])
        assert.notInclude(files, hidden)
      const bounded = await walkFiles(root, { maxEntries: 2, maxDepth: 16, maxMs: 1000 })
      assert.strictEqual(bounded.length, 2)
      const completion = new Completion(() => [], new FileIndex(root), root)
      const found = await suggest(completion, "look at @parser")
      assert.deepStrictEqual(
        found?.items.map((item) => item.value),
        ["@src/deep/parser.ts"]
      )
      assert.strictEqual(found?.prefix, "@parser")
      const applied = completion.applyCompletion(["look at @parser"], 0, 15, found!.items[0]!, found!.prefix)
      assert.strictEqual(applied.lines[0], "look at @src/deep/parser.ts ")
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
      fs.rmSync(outside, { recursive: true, force: true })
    }
  })

  it("UI-1 TL-5 @ completion of a path in a folder the bounded index never reached lists that folder first; never one out of the workspace", async () => {
    const root = tempDir()
    const outside = tempDir()
    try {
      for (const folder of ["a", "b", "c"]) {
        fs.mkdirSync(path.join(root, folder, "sub"), { recursive: true })
        for (const name of ["file0400.txt", "file0453.txt", "other.txt"])
          fs.writeFileSync(path.join(root, folder, "sub", name), "")
      }
      fs.writeFileSync(path.join(outside, "file0400.txt"), "")
      fs.symlinkSync(outside, path.join(root, "elsewhere"))
      // An index that stops before c/ (a workspace of 50 000 files stops at 20 000).
      const index = new FileIndex(root, 10_000, { maxEntries: 12, maxDepth: 16, maxMs: 1000 })
      assert.notInclude(await index.list(), "c/sub/file0400.txt")
      const completion = new Completion(() => [], index, root)
      const found = await suggest(completion, "see @c/sub/file04")
      assert.deepStrictEqual(
        found?.items.slice(0, 2).map((item) => item.value),
        ["@c/sub/file0400.txt", "@c/sub/file0453.txt"]
      )
      const folder = await suggest(completion, "see @c/")
      assert.deepStrictEqual(
        folder?.items.slice(0, 1).map((item) => item.value),
        ["@c/sub/"]
      )
      for (const line of ["see @elsewhere/file", "see @../", `see @${outside}/file`]) {
        const items = (await suggest(completion, line))?.items ?? []
        assert.isFalse(
          items.some(
            (item) => item.value.includes("file0400") && !item.value.startsWith("@a/") && !item.value.startsWith("@b/")
          ),
          line
        )
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
      fs.rmSync(outside, { recursive: true, force: true })
    }
  })

  it("UI-1 TL-5 a .gitignore linked to a pipe is passed over: the walk still lists the files", async () => {
    const root = tempDir()
    try {
      fs.writeFileSync(path.join(root, "README.md"), "")
      execFileSync("mkfifo", [path.join(root, "queue")])
      fs.symlinkSync(path.join(root, "queue"), path.join(root, ".gitignore"))
      const files = await walkFiles(root)
      assert.include(files, "README.md")
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })

  it("UI-1 MCP-1 @ completion offers the running MCP servers' resources as @<server>:<uri>, before files", async () => {
    const root = tempDir()
    try {
      fs.writeFileSync(path.join(root, "memo-notes.md"), "")
      let resources = [{ server: "fixture", uri: "memo://one", name: "memo", description: "A short memo" }]
      const completion = new Completion(
        () => [],
        new FileIndex(root),
        root,
        () => resources
      )
      const found = await suggest(completion, "see @memo")
      assert.deepStrictEqual(found?.items, [
        { value: "@fixture:memo://one", label: "fixture:memo://one", description: "memo — A short memo" },
        { value: "@memo-notes.md", label: "memo-notes.md" }
      ])
      const applied = completion.applyCompletion(["see @memo"], 0, 9, found!.items[0]!, found!.prefix)
      assert.strictEqual(applied.lines[0], "see @fixture:memo://one ")
      assert.deepStrictEqual(
        (await suggest(completion, "@fixture:img"))?.items.map((item) => item.value) ?? [],
        [],
        "no such resource"
      )
      // The list is read at each suggestion: a resource that appeared is offered at once.
      resources = [...resources, { server: "fixture", uri: "img://pixel", name: "pixel", description: "A 1×1 PNG" }]
      assert.deepStrictEqual(
        (await suggest(completion, "@fixture:img"))?.items.map((item) => item.value),
        ["@fixture:img://pixel"]
      )
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })

  it("UI-1 CMD-1 / completion lists the catalog's commands with their descriptions", async () => {
    const completion = new Completion(
      () => [
        { name: "model", description: "Show or set the model", argumentHint: "[provider/model]" },
        { name: "resume", description: "Go on with an earlier session" },
        { name: "help", description: "Show the commands and keys" }
      ],
      new FileIndex(os.tmpdir()),
      os.tmpdir()
    )
    const all = await suggest(completion, "/")
    assert.deepStrictEqual(
      all?.items.map((item) => item.value),
      ["model", "resume", "help"]
    )
    const res = await suggest(completion, "/res")
    assert.deepStrictEqual(res?.items, [
      { value: "resume", label: "resume", description: "Go on with an earlier session" }
    ])
    assert.include((await suggest(completion, "/mod"))?.items[0]?.description ?? "", "[provider/model] — Show")
    assert.isNull(await suggest(completion, "/model gpt"), "arguments are not command names")
    assert.isNull(await suggest(completion, "plain text"))
  })

  it("UI-1 a / typed before the command catalog is first listed opens the list once the listing arrives", async () => {
    const root = tempDir()
    try {
      const screen = new Screen(new VirtualTerminal(60, 16), makeTheme({ color: false }))
      const source = new CommandSource()
      screen.editor.setAutocompleteProvider(new Completion(() => source.current(), new FileIndex(root), root))
      screen.editor.handleInput("/")
      screen.editor.handleInput("m")
      await new Promise((resolve) => setTimeout(resolve, 20))
      assert.notInclude(screen.editor.render(60).join("\n"), "model", "nothing listed yet")
      const listing = [
        { name: "model", description: "choose the model" },
        { name: "help", description: "what can be typed" }
      ]
      source.ready(listing, () => listing)
      await new Promise((resolve) => setTimeout(resolve, 20))
      const rows = screen.editor.render(60).join("\n")
      assert.include(rows, "model")
      assert.include(rows, "choose the model")
      screen.editor.handleInput("\x7f")
      screen.editor.handleInput("h")
      await new Promise((resolve) => setTimeout(resolve, 20))
      assert.include(screen.editor.render(60).join("\n"), "what can be typed", "asked again as typing goes on")
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })
})
