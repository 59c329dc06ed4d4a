// Slash commands typed in capitals (CMD-1) and templates added, removed or renamed while a catalog
// lives, as in an interactive session (CMD-2), or edited: real folders in a temp directory.
import * as fs from "node:fs"
import * as path from "node:path"
import { parseSlashCommand } from "@alisio/domain/Command"
import { CommandCatalog } from "@alisio/runtime/CommandCatalog"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { catalogLayer, contextOptions, foldersIn, write } from "./helpers/catalog.js"
import { tempDir } from "./helpers/tempDir.js"

const parsed = (text: string) => Option.getOrUndefined(parseSlashCommand(text))

/** A folder or file last changed an hour ago (or `ago` ms): what a change now makes of its time cannot be the same. */
const settle = (folder: string, ago = 3_600_000) => {
  const past = new Date(Date.now() - ago)
  fs.utimesSync(folder, past, past)
}

const names = (catalog: CommandCatalog["Type"]) =>
  Effect.map(catalog.list(), (listings) => listings.filter((l) => l.source === "template").map((l) => l.name))

describe("CommandCatalog as it changes", () => {
  it("CMD-1 `/Upper x` reads as /upper typed in capitals; a path or a lower-case name reads as before", () => {
    assert.deepStrictEqual(parsed("/Upper x y"), { name: "upper", args: "x y", folded: true })
    assert.deepStrictEqual(parsed("/REVIEW"), { name: "review", args: "", folded: true })
    assert.deepStrictEqual(parsed("/Skill:PDF a.pdf"), { name: "skill:pdf", args: "a.pdf", folded: true })
    assert.deepStrictEqual(parsed("/upper x"), { name: "upper", args: "x" })
    assert.isUndefined(parsed("/Users/ada/notes.md: summarise"))
    assert.isUndefined(parsed("/usr/bin is a path"))
    assert.isUndefined(parsed("/Ümlaut x"))
  })

  it.scoped(
    "CMD-2 a template added, renamed or removed after the folders were read is seen at once, without reload",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        const prompts = path.join(folders.config, "prompts")
        write(path.join(prompts, "first.md"), "First $ARGUMENTS")
        settle(prompts)
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          assert.deepStrictEqual(yield* names(catalog), ["first"])

          // Added at the top and in a sub-folder read before: resolved by name, and listed.
          write(path.join(prompts, "second.md"), "Second $ARGUMENTS")
          const second = yield* catalog.execute("second", "now")
          assert.deepStrictEqual(second, { _tag: "Prompt", prompt: "Second now" })
          fs.mkdirSync(path.join(prompts, "team"))
          settle(prompts)
          settle(path.join(prompts, "team"))
          yield* names(catalog)
          write(path.join(prompts, "team", "check.md"), "Check it")
          assert.deepStrictEqual(yield* names(catalog), ["first", "second", "team:check"])

          // A folder that did not exist when read (the project's, the user's first template).
          const claude = path.join(folders.home, ".claude", "commands")
          write(path.join(claude, "later.md"), "Later")
          assert.strictEqual((yield* catalog.resolve("later")).source, "template")

          fs.renameSync(path.join(prompts, "first.md"), path.join(prompts, "renamed.md"))
          fs.rmSync(path.join(prompts, "team", "check.md"))
          assert.deepStrictEqual(yield* names(catalog), ["renamed", "second", "later"])
          const gone = yield* Effect.flip(catalog.resolve("first"))
          assert.strictEqual(gone.reason, "unknown")
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
      })
  )

  it.scoped("CMD-2 a template's description edited after the folders were read shows in the list at once", () =>
    Effect.gen(function* () {
      const folders = foldersIn(yield* tempDir)
      const prompts = path.join(folders.config, "prompts")
      const file = path.join(prompts, "review.md")
      write(file, "---\ndescription: Old words\n---\nReview $ARGUMENTS")
      const hourAgo = new Date(Date.now() - 3_600_000)
      const keep = () => fs.utimesSync(prompts, hourAgo, hourAgo)
      settle(file)
      keep()
      yield* Effect.gen(function* () {
        const catalog = yield* CommandCatalog
        const described = Effect.map(catalog.list(), (all) => all.find((l) => l.name === "review")?.description)
        assert.strictEqual(yield* described, "Old words")

        // Longer: its size changes, its folder's time does not.
        write(file, "---\ndescription: Reviews a change\n---\nReview $ARGUMENTS")
        settle(file, 1_800_000)
        keep()
        assert.strictEqual(yield* described, "Reviews a change")

        // As long as before: only its time says it changed.
        write(file, "---\ndescription: Reviews the diff.\n---\nReview $ARGUMENTS")
        settle(file, 900_000)
        keep()
        assert.strictEqual(yield* described, "Reviews the diff.")
      }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
    })
  )
})
