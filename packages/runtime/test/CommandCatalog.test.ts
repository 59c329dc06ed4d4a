import * as path from "node:path"
import { CommandError, parseSlashCommand } from "@alisio/domain/Command"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import { type CatalogCommand, CommandCatalog, closeMatches, editDistance } from "@alisio/runtime/CommandCatalog"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { catalogLayer, contextOptions, foldersIn, write } from "./helpers/catalog.js"
import { tempDir } from "./helpers/tempDir.js"

/** A builtin plugin registering commands that clash with a core command and with a template. */
const clashing = definePlugin({
  id: "clash",
  version: "1.0.0",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    yield* api.commands.register({
      name: "model",
      description: "the plugin's model",
      execute: () => Effect.succeed("plugin model")
    })
    yield* api.commands.register({
      name: "review",
      description: "the plugin's review",
      execute: (args) => Effect.succeed(`plugin review ${args}`)
    })
    yield* api.commands.register({
      name: "panel",
      description: "only in the terminal",
      surfaces: ["tui"],
      execute: () => Effect.succeed("panel")
    })
    yield* api.commands.register({ name: "broken", description: "fails", execute: () => Effect.fail("no luck") })
  })
})

/** A workspace with a template clashing with the plugin, one clashing with a skill, and a skill. */
const withFiles = Effect.map(tempDir, (root) => {
  const folders = foldersIn(root)
  write(path.join(folders.config, "prompts", "review.md"), "Review $ARGUMENTS")
  write(path.join(folders.config, "prompts", "explain.md"), "Explain $1")
  write(path.join(folders.config, "prompts", "skill", "pdf.md"), "A template named skill:pdf")
  write(
    path.join(folders.config, "skills", "pdf", "SKILL.md"),
    "---\nname: pdf\ndescription: PDF files\n---\nUse pdftotext."
  )
  return folders
})

const catalogOf = (folders: ReturnType<typeof foldersIn>) =>
  catalogLayer({ context: contextOptions(folders), host: { plugins: [clashing] } })

const errorOf = <A>(effect: Effect.Effect<A, CommandError>) =>
  Effect.map(Effect.flip(effect), (error) => {
    assert.isTrue(Schema.is(CommandError)(error))
    return error
  })

describe("CommandCatalog", () => {
  it.scoped(
    "CMD-1 on a name clash builtin > plugin > template > skill; every shadowed command is listed with what holds its name",
    () =>
      Effect.gen(function* () {
        const folders = yield* withFiles
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const listings = yield* catalog.list()
          const entries = (name: string) =>
            listings.filter((l) => l.name === name).map((l) => [l.source, l.from, l.shadowedBy?.source])
          assert.deepStrictEqual(entries("model"), [
            ["builtin", "core", undefined],
            ["plugin", "plugin clash", "builtin"]
          ])
          assert.deepStrictEqual(entries("review"), [
            ["plugin", "plugin clash", undefined],
            ["template", path.join(folders.config, "prompts", "review.md"), "plugin"]
          ])
          assert.deepStrictEqual(entries("skill:pdf"), [
            ["template", path.join(folders.config, "prompts", "skill", "pdf.md"), undefined],
            ["skill", path.join(folders.config, "skills", "pdf", "SKILL.md"), "template"]
          ])
          // Sources in precedence order.
          const ranks = listings.map((l) => ["builtin", "plugin", "mcp", "template", "skill"].indexOf(l.source))
          assert.deepStrictEqual(
            ranks,
            [...ranks].sort((a, b) => a - b)
          )
          // What a name runs is the holder's.
          assert.deepStrictEqual(yield* catalog.execute("review", "x.ts"), { _tag: "Text", text: "plugin review x.ts" })
          assert.strictEqual((yield* catalog.resolve("model")).source, "builtin")
          assert.deepStrictEqual(yield* catalog.execute("explain", "parser.ts"), {
            _tag: "Prompt",
            prompt: "Explain parser.ts"
          })
        }).pipe(Effect.provide(catalogOf(folders)))
      })
  )

  it.scoped(
    "CMD-2 every command declares surfaces and execution; one is resolved only on its surfaces; surface commands are not run here",
    () =>
      Effect.gen(function* () {
        const folders = yield* withFiles
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const all = yield* catalog.list()
          for (const listing of all) {
            assert.isAbove(listing.surfaces.length, 0, listing.name)
            assert.include(["core", "surface", "prompt"], listing.execution)
          }
          const executions = new Map(all.map((l) => [l.name, l.execution]))
          assert.strictEqual(executions.get("stats"), "core")
          assert.strictEqual(executions.get("help"), "surface")
          assert.strictEqual(executions.get("explain"), "prompt")
          assert.strictEqual(executions.get("panel"), "core")

          const onApi = (yield* catalog.list("api")).map((l) => l.name)
          assert.include(onApi, "stats")
          assert.notInclude(onApi, "help")
          assert.notInclude(onApi, "panel")
          assert.strictEqual((yield* catalog.resolve("exit", "tui")).execution, "surface")
          const exit = yield* errorOf(catalog.resolve("exit", "web"))
          assert.strictEqual(exit.reason, "unavailable")
          assert.strictEqual(exit.message, "/exit is a command of tui, not of web.")
          const help = yield* errorOf(catalog.execute("help", "", { surface: "tui" }))
          assert.strictEqual(help.reason, "unavailable")
          assert.include(help.message, "handled by the interactive interface")
          assert.deepStrictEqual(yield* catalog.execute("panel", "", { surface: "tui" }), {
            _tag: "Text",
            text: "panel"
          })
          assert.strictEqual((yield* errorOf(catalog.execute("panel", "", { surface: "api" }))).reason, "unavailable")
        }).pipe(Effect.provide(catalogOf(folders)))
      })
  )

  it.scoped("CMD-1 an unknown name fails with close matches; a plugin command's failure is the command's", () =>
    Effect.gen(function* () {
      const folders = yield* withFiles
      yield* Effect.gen(function* () {
        const catalog = yield* CommandCatalog
        const stat = yield* errorOf(catalog.execute("stat", ""))
        assert.strictEqual(stat.reason, "unknown")
        assert.deepStrictEqual(stat.suggestions, ["stats"])
        assert.strictEqual(stat.message, "No command is named /stat; did you mean /stats?")
        assert.deepStrictEqual((yield* errorOf(catalog.resolve("modle"))).suggestions, ["model"])
        assert.deepStrictEqual((yield* errorOf(catalog.resolve("pdf"))).suggestions, ["skill:pdf"])
        const nothing = yield* errorOf(catalog.resolve("zzzzzz"))
        assert.deepStrictEqual(nothing.suggestions, [])
        assert.strictEqual(nothing.message, "No command is named /zzzzzz.")
        // Close matches are of the surface's commands.
        assert.notInclude((yield* errorOf(catalog.resolve("hel", "api"))).suggestions ?? [], "help")
        const broken = yield* errorOf(catalog.execute("broken", ""))
        assert.strictEqual(broken.reason, "failed")
        assert.include(broken.message, "The command broken failed: no luck")
      }).pipe(Effect.provide(catalogOf(folders)))
    })
  )

  it.scoped(
    "CMD-1 other sources join with contribute (MCP prompts): ranked after plugins, before templates, gone with their scope",
    () =>
      Effect.gen(function* () {
        const folders = yield* withFiles
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const prompt = (name: string): CatalogCommand => ({
            name,
            description: `MCP prompt ${name}`,
            source: "mcp",
            surfaces: ["tui", "web", "api"],
            execution: "prompt",
            from: "MCP server github",
            run: (args) => Effect.succeed({ _tag: "Prompt", prompt: `${name}: ${args}` })
          })
          const scope = yield* Scope.make()
          yield* Scope.extend(
            catalog.contribute({
              id: "mcp",
              commands: Effect.succeed([prompt("mcp__github__pr"), prompt("explain"), prompt("review")])
            }),
            scope
          )
          const listings = yield* catalog.list()
          const of = (name: string) =>
            listings.filter((l) => l.name === name).map((l) => [l.source, l.shadowedBy?.source])
          assert.deepStrictEqual(of("explain"), [
            ["mcp", undefined],
            ["template", "mcp"]
          ])
          assert.deepStrictEqual(of("review"), [
            ["plugin", undefined],
            ["mcp", "plugin"],
            ["template", "plugin"]
          ])
          assert.deepStrictEqual(yield* catalog.execute("mcp__github__pr", "12"), {
            _tag: "Prompt",
            prompt: "mcp__github__pr: 12"
          })
          yield* Scope.close(scope, Exit.void)
          assert.notInclude(
            (yield* catalog.list()).map((l) => l.name),
            "mcp__github__pr"
          )
          assert.strictEqual((yield* catalog.resolve("explain")).source, "template")
        }).pipe(Effect.provide(catalogOf(folders)))
      })
  )

  it("CMD-1 a slash command is `/name` with a command name and whitespace or the end after it; a path is a prompt", () => {
    const parsed = (text: string) => Option.getOrUndefined(parseSlashCommand(text))
    assert.deepStrictEqual(parsed("/review src/x.ts"), { name: "review", args: "src/x.ts" })
    assert.deepStrictEqual(parsed("/skill:pdf  a.pdf\nand more "), { name: "skill:pdf", args: "a.pdf\nand more" })
    assert.deepStrictEqual(parsed("/stats"), { name: "stats", args: "" })
    assert.deepStrictEqual(parsed("/tmp is full"), { name: "tmp", args: "is full" })
    assert.isUndefined(parsed("/usr/bin is what?"))
    assert.isUndefined(parsed("/Users/ada/notes.md: summarise"))
    assert.isUndefined(parsed(" /tmp is full"))
    assert.isUndefined(parsed("review /src"))
    assert.isUndefined(parsed("/"))
    assert.isUndefined(parsed("/-x"))
  })

  it("CMD-1 close matches: one edit per three characters, an adjacent swap is one edit, prefixes and the name after `:`", () => {
    assert.strictEqual(editDistance("modle", "model"), 1)
    assert.strictEqual(editDistance("stats", "stats"), 0)
    assert.strictEqual(editDistance("", "new"), 3)
    const names = ["stats", "sessions", "model", "skill:pdf", "greeter:hello", "compact"]
    assert.deepStrictEqual(closeMatches("sesions", names), ["sessions"])
    assert.deepStrictEqual(closeMatches("hello", names), ["greeter:hello"])
    assert.deepStrictEqual(closeMatches("comp", names), ["compact"])
    assert.deepStrictEqual(closeMatches("x", names), [])
  })
})
