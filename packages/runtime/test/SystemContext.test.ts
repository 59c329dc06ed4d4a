import * as fs from "node:fs"
import * as path from "node:path"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import type { ToolContext } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import { CommandCatalog } from "@alisio/runtime/CommandCatalog"
import { Runner } from "@alisio/runtime/Runner"
import { formatDiagnostic, SystemContext } from "@alisio/runtime/SystemContext"
import { Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { allot } from "../src/internal/context/instructions.js"
import { catalogLayer, contextOptions, foldersIn, write } from "./helpers/catalog.js"
import { tempDir } from "./helpers/tempDir.js"

/** A repository with AGENTS.md at its root, CLAUDE.md alone in `packages`, both in `packages/app`. */
const repository = (root: string) => {
  const folders = foldersIn(root)
  const repo = path.join(folders.workspace, "repo")
  const app = path.join(repo, "packages", "app")
  fs.mkdirSync(path.join(repo, ".git"), { recursive: true })
  write(path.join(folders.config, "AGENTS.md"), "USER rules")
  write(path.join(folders.workspace, "AGENTS.md"), "ABOVE the repository")
  write(path.join(repo, "AGENTS.md"), "ROOT rules")
  write(path.join(repo, "packages", "CLAUDE.md"), "PACKAGES rules from CLAUDE.md")
  write(path.join(app, "AGENTS.md"), "APP rules")
  write(path.join(app, "CLAUDE.md"), "APP rules for Claude only")
  return { folders, repo, app }
}

const build = Effect.flatMap(SystemContext, (context) => context.build({ prompt: "hi", model: "fake-model" }))

describe("SystemContext", () => {
  it.scoped(
    "CTX-2 instructions: the user's first, then AGENTS.md from the repository root down to the workspace, each under its file",
    () =>
      Effect.gen(function* () {
        const { app, folders, repo } = repository(yield* tempDir)
        const built = yield* build.pipe(
          Effect.provide(catalogLayer({ context: contextOptions(folders, { cwd: app }) }))
        )
        const instructions = built.parts.filter((part) => part.kind === "instructions")
        assert.deepStrictEqual(
          instructions.map((part) => [part.name, part.source, part.text]),
          [
            [path.join(folders.config, "AGENTS.md"), "user", "USER rules"],
            [path.join(repo, "AGENTS.md"), "project", "ROOT rules"],
            [
              path.join(repo, "packages", "CLAUDE.md"),
              "project (CLAUDE.md: the folder has no AGENTS.md)",
              "PACKAGES rules from CLAUDE.md"
            ],
            [path.join(app, "AGENTS.md"), "project", "APP rules"]
          ]
        )
        const at = (text: string) => built.text.indexOf(text)
        assert.isTrue(built.text.startsWith("You are Alisio"))
        assert.isTrue(
          at("USER rules") < at("ROOT rules") &&
            at("ROOT rules") < at("PACKAGES rules") &&
            at("PACKAGES rules") < at("APP rules")
        )
        assert.include(built.text, `## ${path.join(repo, "AGENTS.md")}\nROOT rules`)
        assert.notInclude(built.text, "ABOVE the repository")
        assert.notInclude(built.text, "for Claude only")
        assert.deepStrictEqual(built.notices, [])
      })
  )

  it.scoped(
    "CTX-2 outside a repository only the workspace's own file is read; the user's CLAUDE.md of ~/.claude stands in for a missing <config>/AGENTS.md",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        const inner = path.join(folders.workspace, "inner")
        write(path.join(folders.workspace, "AGENTS.md"), "OUTER")
        write(path.join(inner, "AGENTS.md"), "INNER")
        write(path.join(folders.home, ".claude", "CLAUDE.md"), "CLAUDE USER")
        const built = yield* build.pipe(
          Effect.provide(catalogLayer({ context: contextOptions(folders, { cwd: inner }) }))
        )
        assert.deepStrictEqual(
          built.parts.filter((part) => part.kind === "instructions").map((part) => [part.name, part.text]),
          [
            [path.join(folders.home, ".claude", "CLAUDE.md"), "CLAUDE USER"],
            [path.join(inner, "AGENTS.md"), "INNER"]
          ]
        )
        const instructions = yield* Effect.flatMap(SystemContext, (context) => context.instructions).pipe(
          Effect.provide(catalogLayer({ context: contextOptions(folders, { cwd: inner }) }))
        )
        assert.isUndefined(instructions.repositoryRoot)
      })
  )

  it.scoped("CTX-2 the cap: short files stay whole, a long one is cut at a line, and the notice names it", () =>
    Effect.gen(function* () {
      const folders = foldersIn(yield* tempDir)
      fs.mkdirSync(path.join(folders.workspace, ".git"))
      const long = Array.from({ length: 400 }, (_, i) => `rule ${i}: keep it short`).join("\n")
      write(path.join(folders.config, "AGENTS.md"), "USER short")
      write(path.join(folders.workspace, "AGENTS.md"), long)
      const context = contextOptions(folders, { instructionsCapBytes: 2000 })
      const built = yield* build.pipe(Effect.provide(catalogLayer({ context })))
      const [user, project] = built.parts.filter((part) => part.kind === "instructions")
      assert.strictEqual(user!.text, "USER short")
      assert.isAtMost(Buffer.byteLength(project!.text), 2000 - "USER short".length)
      assert.isTrue(long.startsWith(project!.text))
      assert.match(project!.text, /keep it short$/)
      assert.deepStrictEqual(built.notices, [
        `The instruction files pass the 2.0 KiB limit, so ${path.join(folders.workspace, "AGENTS.md")} was cut to ${(
          Buffer.byteLength(project!.text) / 1024
        ).toFixed(1)} KiB of ${(long.length / 1024).toFixed(1)} KiB.`
      ])
      assert.include(built.text, `[${built.notices[0]}]`)
    })
  )

  it.scoped(
    "CTX-2 a project's instruction file linking outside the repository is left unread, with a notice; links inside are read",
    () =>
      Effect.gen(function* () {
        const { app, folders, repo } = repository(yield* tempDir)
        const secret = path.join(folders.home, ".ssh", "id_rsa")
        write(secret, "PRIVATE KEY")
        fs.rmSync(path.join(repo, "AGENTS.md"))
        fs.symlinkSync(secret, path.join(repo, "AGENTS.md"))
        fs.rmSync(path.join(app, "AGENTS.md"))
        fs.symlinkSync("CLAUDE.md", path.join(app, "AGENTS.md"))
        const built = yield* build.pipe(
          Effect.provide(catalogLayer({ context: contextOptions(folders, { cwd: app }) }))
        )
        assert.notInclude(built.text, "PRIVATE KEY")
        assert.deepStrictEqual(
          built.parts.filter((part) => part.kind === "instructions").map((part) => part.text),
          ["USER rules", "PACKAGES rules from CLAUDE.md", "APP rules for Claude only"]
        )
        assert.deepStrictEqual(built.notices, [
          `${path.join(repo, "AGENTS.md")} was left unread: it links to ${fs.realpathSync(secret)}, outside the repository.`
        ])
      })
  )

  it.scoped(
    "CTX-2 instruction text reaches the model without escape sequences or hidden controls; a file with NUL bytes is left unread",
    () =>
      Effect.gen(function* () {
        const { app, folders, repo } = repository(yield* tempDir)
        write(path.join(repo, "AGENTS.md"), "ROOT\u0007 rules \u001b[2Jcleared\u202e reversed\r\nnext line\tend")
        write(path.join(app, "AGENTS.md"), "\u0089PNG\r\n\u001a\n\u0000\u0000\u0000\rIHDR")
        const built = yield* build.pipe(
          Effect.provide(catalogLayer({ context: contextOptions(folders, { cwd: app }) }))
        )
        assert.deepStrictEqual(
          built.parts.filter((part) => part.kind === "instructions").map((part) => part.text),
          ["USER rules", "ROOT rules cleared reversed\r\nnext line\tend", "PACKAGES rules from CLAUDE.md"]
        )
        assert.deepStrictEqual(built.notices, [
          `${path.join(app, "AGENTS.md")} was left unread: it holds NUL bytes, so it is not text.`
        ])
      })
  )

  it.scoped("CMD-1 a skill whose front matter runs past what is read says so, not that it never closes", () =>
    Effect.gen(function* () {
      const folders = foldersIn(yield* tempDir)
      const file = path.join(folders.config, "skills", "long", "SKILL.md")
      write(file, `---\nname: long\ndescription: ${"d".repeat(20_000)}\n---\nThe body.\n`)
      const diagnostics = yield* Effect.map(SystemContext, (context) => context.skills).pipe(
        Effect.map((skills) => skills.diagnostics.map((d) => d.message)),
        Effect.provide(catalogLayer({ context: contextOptions(folders) }))
      )
      assert.strictEqual(diagnostics[0], "its front matter does not end within the first 16 KiB, so it was not read")
      assert.notInclude(diagnostics.join("\n"), "no closing")
    })
  )

  it("CTX-2 the cap is shared: smaller files whole, the rest split evenly among the larger", () => {
    assert.deepStrictEqual(allot([100, 5000, 200], 1000), [100, 700, 200])
    assert.deepStrictEqual(allot([900, 900], 1000), [500, 500])
    assert.deepStrictEqual(allot([10, 20], 1000), [10, 20])
  })

  it.scoped(
    "CTX-2 an untrusted project's instructions are read, but its skills and templates are not, so no skill tool is offered",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        write(path.join(folders.workspace, "AGENTS.md"), "PROJECT rules")
        write(
          path.join(folders.workspace, ".alisio", "skills", "deploy", "SKILL.md"),
          "---\ndescription: Deploys\n---\nRun it."
        )
        const seen = yield* Effect.gen(function* () {
          const built = yield* build
          const tools = (yield* (yield* Tools).entries).map((entry) => entry.tool.name)
          return { built, tools, untrusted: (yield* SystemContext).untrusted }
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
        assert.include(seen.built.text, "PROJECT rules")
        assert.notInclude(seen.built.text, "# Skills")
        assert.notInclude(seen.tools, "skill")
        assert.deepStrictEqual(seen.untrusted, [path.join(folders.workspace, ".alisio", "skills")])
      })
  )

  it.scoped(
    "CTX-2 skills: names and descriptions go into the context; the skill tool (core, read) loads a body when the model calls it",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        write(
          path.join(folders.config, "skills", "pdf", "SKILL.md"),
          "---\nname: pdf\ndescription: Extract text from PDF files\n---\nRun pdftotext -layout, then read the text.\n"
        )
        write(
          path.join(folders.workspace, ".claude", "skills", "pdf", "SKILL.md"),
          "---\ndescription: The project's pdf\n---\nProject way."
        )
        write(path.join(folders.workspace, ".agents", "skills", "Bad Name!", "SKILL.md"), "---\ndescription: x\n---\nx")
        write(path.join(folders.home, ".claude", "skills", "notes", "SKILL.md"), "Take notes.")
        const script: Fake.Script = [
          Fake.callTools({ id: "c1", name: "skill", args: { name: "notes" } }),
          Fake.answer("done")
        ]
        yield* Effect.gen(function* () {
          const context = yield* SystemContext
          const built = yield* build
          assert.include(built.text, "# Skills")
          assert.include(built.text, "- pdf: The project's pdf")
          assert.include(built.text, "- notes: (no description)")
          assert.notInclude(built.text, "Project way.")
          assert.deepStrictEqual(
            context.skills.shadowed.map(({ by, skill }) => [skill.file, by.file]),
            [
              [
                path.join(folders.config, "skills", "pdf", "SKILL.md"),
                path.join(folders.workspace, ".claude", "skills", "pdf", "SKILL.md")
              ]
            ]
          )
          assert.deepStrictEqual(
            context.skills.diagnostics.map((d) => [
              path.basename(path.dirname(d.file)),
              d.message.split(" (")[0]!.split(";")[0]
            ]),
            [
              ["Bad Name!", "neither the field `name` nor the folder's name is a skill name"],
              ["notes", "the front matter has no `description`: the model sees only the skill's name"]
            ]
          )
          const entry = (yield* (yield* Tools).entries).find((e) => e.tool.name === "skill")
          assert.deepStrictEqual([entry?.origin, entry?.tool.effect], [{ _tag: "Core" }, "read"])

          const outcome = yield* (yield* Runner).run({
            cwd: folders.workspace,
            prompt: "take notes",
            model: "fake-model",
            system: built.text
          })
          assert.strictEqual(outcome.status, "completed")
          const requests = yield* (yield* Fake.FakeProvider).requests
          assert.include(requests[0]!.tools?.map((t) => t.name) ?? [], "skill")
          const result = JSON.stringify(requests[1]!.messages.at(-1))
          assert.include(result, "Take notes.")
          assert.include(result, path.join(folders.home, ".claude", "skills", "notes"))
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders, { trustProject: true }), script })))
      })
  )

  it.scoped("CTX-2 each part is named: the base prompt, each instruction file, the skills, each plugin's context", () =>
    Effect.gen(function* () {
      const folders = foldersIn(yield* tempDir)
      write(path.join(folders.workspace, "AGENTS.md"), "PROJECT")
      write(path.join(folders.config, "skills", "pdf", "SKILL.md"), "---\ndescription: PDFs\n---\nx")
      const weather = definePlugin({
        id: "weather",
        version: "1.0.0",
        setup: Effect.flatMap(PluginApi, (api) =>
          api.context.provide((input) => Effect.succeed(`Sunny. Prompt: ${input.prompt}`))
        )
      })
      const built = yield* build.pipe(
        Effect.provide(catalogLayer({ context: contextOptions(folders), host: { plugins: [weather] } }))
      )
      assert.deepStrictEqual(
        built.parts.map((part) => [part.kind, part.name]),
        [
          ["base", "Alisio's base prompt"],
          ["instructions", path.join(folders.workspace, "AGENTS.md")],
          ["skills", "skills"],
          ["plugin", "plugin weather"]
        ]
      )
      assert.strictEqual(built.parts[3]!.text, "Sunny. Prompt: hi")
      assert.isTrue(built.text.endsWith("Context from the plugin weather:\nSunny. Prompt: hi"))
    })
  )

  it.scoped(
    "CMD-1 a skill whose SKILL.md holds NUL bytes or no instructions fails naming the file, through /skill:<id> and the skill tool",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        const binary = path.join(folders.config, "skills", "binary", "SKILL.md")
        const empty = path.join(folders.config, "skills", "empty", "SKILL.md")
        write(binary, "---\ndescription: Binary\n---\nRun \u0000\u0001 it.\n")
        write(empty, "---\ndescription: Empty\n---\n")
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const failure = (name: string) => Effect.map(Effect.flip(catalog.execute(name, "")), (e) => e.message)
          assert.strictEqual(yield* failure("skill:binary"), `${binary} holds NUL bytes, so it is not text.`)
          assert.strictEqual(yield* failure("skill:empty"), `${empty} has no instructions after its front matter.`)
          const tool = (yield* (yield* Tools).entries).find((entry) => entry.tool.name === "skill")!.tool
          const context = { cwd: folders.workspace } as unknown as ToolContext
          const toolFailure = (name: string) =>
            Effect.map(Effect.flip(tool.execute({ name }, context)), (e) => (e as { message: string }).message)
          assert.strictEqual(
            yield* toolFailure("binary"),
            `The skill "binary" cannot be used: ${binary} holds NUL bytes, so it is not text.`
          )
          assert.strictEqual(
            yield* toolFailure("x".repeat(100_000)),
            `No skill is named "${"x".repeat(100)}…". The skills are: binary, empty.`
          )
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
      })
  )

  it.scoped(
    "CTX-2 a notice or a skill's diagnostic about a file named with an escape sequence or a line break is one line without it",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        const named = "\u001b]0;owned\u0007odd\nname"
        write(path.join(folders.config, "skills", named, "SKILL.md"), "---\nname: odd\n---\nNo description.\n")
        const workspace = path.join(folders.workspace, named)
        write(path.join(folders.home, "secret"), "SECRET")
        fs.mkdirSync(workspace, { recursive: true })
        fs.symlinkSync(path.join(folders.home, "secret"), path.join(workspace, "AGENTS.md"))
        const seen = yield* Effect.gen(function* () {
          const context = yield* SystemContext
          return { built: yield* build, diagnostics: context.skills.diagnostics.map(formatDiagnostic) }
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders, { cwd: workspace }) })))
        const shown = [...seen.built.notices, ...seen.diagnostics]
        assert.strictEqual(shown.length, 2)
        for (const line of shown) {
          assert.include(line, "odd name")
          for (const unsafe of ["\u001b", "\u0007", "\n"]) assert.notInclude(line, unsafe)
        }
      })
  )

  it.scoped(
    "CMD-1 many skills with long descriptions share a budget in the system context: short ones whole, long ones cut",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        for (let index = 0; index < 100; index++) {
          const id = `skill-${String(index).padStart(3, "0")}`
          write(
            path.join(folders.config, "skills", id, "SKILL.md"),
            `---\ndescription: ${index === 0 ? "Short one." : `Long ${"words ".repeat(200)}`}\n---\nDo it.\n`
          )
        }
        const built = yield* build.pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
        const skills = built.parts.find((part) => part.kind === "skills")!.text
        assert.isAtMost(skills.length, 16 * 1024 + 100 * 20 + 300)
        const lines = skills.split("\n").filter((line) => line.startsWith("- "))
        assert.strictEqual(lines.length, 100)
        assert.strictEqual(lines[0], "- skill-000: Short one.")
        assert.match(lines[99]!, /^- skill-099: Long words .*…$/)
      })
  )

  it.scoped(
    "CTX-2 an AGENTS.md saved as UTF-16 with its byte order mark (Windows PowerShell's >) is read as text, as is such a template",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        const utf16le = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")])
        const utf16be = (text: string) => {
          const bytes = Buffer.from(text, "utf16le").swap16()
          return Buffer.concat([Buffer.from([0xfe, 0xff]), bytes])
        }
        fs.writeFileSync(path.join(folders.workspace, "AGENTS.md"), utf16le("Use tabs — ünïcode 😀.\r\n"))
        fs.mkdirSync(path.join(folders.config, "prompts"))
        fs.writeFileSync(
          path.join(folders.config, "prompts", "review.md"),
          utf16be("---\ndescription: Révise\n---\nReview $1.\n")
        )
        const seen = yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          return {
            built: yield* build,
            listing: yield* catalog.resolve("review"),
            prompt: yield* catalog.execute("review", "a.ts")
          }
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
        assert.deepStrictEqual(seen.built.notices, [])
        assert.deepStrictEqual(
          seen.built.parts.filter((part) => part.kind === "instructions").map((part) => part.text),
          ["Use tabs — ünïcode 😀."]
        )
        assert.strictEqual(seen.listing.description, "Révise")
        assert.deepStrictEqual(seen.prompt, { _tag: "Prompt", prompt: "Review a.ts." })
      })
  )
})
