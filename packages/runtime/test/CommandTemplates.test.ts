import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { CommandCatalog, expandTemplate } from "@alisio/runtime/CommandCatalog"
import { SystemContext } from "@alisio/runtime/SystemContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { catalogLayer, contextOptions, foldersIn, write } from "./helpers/catalog.js"
import { tempDir } from "./helpers/tempDir.js"

const prompts = (folder: string, file: string) => path.join(folder, "prompts", file)

describe("prompt templates", () => {
  it("CMD-1 $ARGUMENTS is every argument, $1…$9 one word each (quotes keep spaces); missing ones are empty", () => {
    assert.strictEqual(
      expandTemplate("Compare $1 with $2 ($3). All: $ARGUMENTS", `a.ts "b c.ts"`),
      `Compare a.ts with b c.ts (). All: a.ts "b c.ts"`
    )
    assert.strictEqual(expandTemplate("Fix $1 and $10", "x"), "Fix x and x0")
    assert.strictEqual(expandTemplate("\n  Summarise the diff.\n", ""), "Summarise the diff.")
  })

  it("CMD-1 a template with no placeholder gets its arguments after it, as Claude Code does", () => {
    assert.strictEqual(
      expandTemplate("Review the change.", "focus on tests"),
      "Review the change.\n\nARGUMENTS: focus on tests"
    )
  })

  it.scoped("CMD-1 front matter gives the description and argument hint; the body, read when run, is the prompt", () =>
    Effect.gen(function* () {
      const folders = foldersIn(yield* tempDir)
      const file = prompts(folders.config, "review.md")
      write(
        file,
        "---\ndescription: Review a file\nargument-hint: <file>\nmodel: ignored-by-alisio\n---\nReview $1 now.\n"
      )
      write(prompts(folders.config, "plain.md"), "# Explain the architecture\n\nIn detail.\n")
      yield* Effect.gen(function* () {
        const catalog = yield* CommandCatalog
        const review = yield* catalog.resolve("review")
        assert.deepInclude(review, {
          description: "Review a file",
          argumentHint: "<file>",
          from: file,
          source: "template"
        })
        assert.strictEqual((yield* catalog.resolve("plain")).description, "Explain the architecture")
        assert.deepStrictEqual(yield* catalog.execute("review", "src/x.ts"), {
          _tag: "Prompt",
          prompt: "Review src/x.ts now."
        })
        fs.writeFileSync(file, "---\ndescription: Review a file\n---\nLook at $1 again.\n")
        assert.deepStrictEqual(yield* catalog.execute("review", "y.ts"), {
          _tag: "Prompt",
          prompt: "Look at y.ts again."
        })
        assert.deepStrictEqual(yield* catalog.diagnostics, [])
      }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
    })
  )

  it.scoped("CMD-1 a template linked to a pipe is passed over instead of blocking the catalog", () =>
    Effect.gen(function* () {
      const folders = foldersIn(yield* tempDir)
      write(prompts(folders.config, "plain.md"), "# Explain the architecture\n")
      const fifo = path.join(folders.config, "queue")
      execFileSync("mkfifo", [fifo])
      fs.symlinkSync(fifo, prompts(folders.config, "piped.md"))
      yield* Effect.gen(function* () {
        const catalog = yield* CommandCatalog
        assert.strictEqual((yield* catalog.resolve("plain")).description, "Explain the architecture")
        assert.deepStrictEqual(yield* catalog.execute("plain", ""), {
          _tag: "Prompt",
          prompt: "# Explain the architecture"
        })
      }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
    })
  )

  it.scoped("CMD-1 broken front matter: a diagnostic naming the file and the field; the template is still used", () =>
    Effect.gen(function* () {
      const folders = foldersIn(yield* tempDir)
      const yaml = prompts(folders.config, "yaml.md")
      const list = prompts(folders.config, "list.md")
      const open = prompts(folders.config, "open.md")
      write(yaml, "---\ndescription: Check: the tests\nargument-hint: [a\n---\nCheck the tests.\n")
      write(list, "---\ndescription: [one, two]\n---\nA list.\n")
      write(open, "---\ndescription: never closed\nThe body.\n")
      yield* Effect.gen(function* () {
        const catalog = yield* CommandCatalog
        const diagnostics = yield* catalog.diagnostics
        const about = (file: string) => diagnostics.filter((d) => d.file === file).map((d) => d.message)
        assert.match(
          about(yaml)[0]!,
          /^its front matter is not valid YAML \(.+\); it was read line by line as `key: value` \(the template is still used\)$/
        )
        assert.deepStrictEqual(about(list), [
          "the front matter field `description` should be text, not a list; it is ignored (the template is still used)"
        ])
        assert.deepStrictEqual(about(open), [
          "its front matter has no closing `---` line, so the whole file is the text (the template is still used)"
        ])
        // Still listed and usable: the line-by-line reading keeps what it can.
        assert.deepInclude(yield* catalog.resolve("yaml"), { description: "Check: the tests", argumentHint: "[a" })
        assert.strictEqual((yield* catalog.resolve("list")).description, "A list.")
        assert.deepStrictEqual(yield* catalog.execute("yaml", ""), { _tag: "Prompt", prompt: "Check the tests." })
        const whole = yield* catalog.execute("open", "")
        assert.deepStrictEqual(whole, { _tag: "Prompt", prompt: "---\ndescription: never closed\nThe body." })
      }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
    })
  )

  it.scoped(
    "CMD-1 a file in a sub-folder (up to three deep) is named with `:`; a file name that is no command name is skipped with a diagnostic",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        write(prompts(folders.config, path.join("Frontend", "Component.md")), "Make a component")
        // Sub-folders up to three deep, as the docs say; deeper ones are not looked into.
        write(prompts(folders.config, path.join("a", "b", "c", "three.md")), "three deep")
        write(prompts(folders.config, path.join("a", "b", "c", "d", "four.md")), "four deep")
        write(prompts(folders.config, "has space.md"), "x")
        write(prompts(folders.config, "notes.txt"), "not markdown")
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const templates = (yield* catalog.list()).filter((l) => l.source === "template").map((l) => l.name)
          assert.deepStrictEqual(templates, ["frontend:component", "a:b:c:three"])
          assert.deepStrictEqual(yield* catalog.diagnostics, [
            {
              file: prompts(folders.config, "has space.md"),
              message:
                '"has space" is not a command name (lower-case letters, digits, "-", "_"); the template is skipped'
            }
          ])
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
      })
  )

  it.scoped(
    "CMD-1 a project's templates (.alisio/prompts, .claude/commands) only when it is trusted, and then before the user's",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        const project = path.join(folders.workspace, ".alisio", "prompts", "review.md")
        const claude = path.join(folders.workspace, ".claude", "commands", "review.md")
        const user = prompts(folders.config, "review.md")
        const userClaude = path.join(folders.home, ".claude", "commands", "mine.md")
        write(project, "project review")
        write(claude, "claude review")
        write(user, "user review")
        write(userClaude, "my own command")
        const sources = Effect.gen(function* () {
          const listings = (yield* (yield* CommandCatalog).list()).filter((l) => l.source === "template")
          return { listings, untrusted: (yield* SystemContext).untrusted }
        })
        const untrusted = yield* sources.pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
        assert.deepStrictEqual(
          untrusted.listings.map((l) => [l.name, l.from, l.shadowedBy?.from]),
          [
            ["review", user, undefined],
            ["mine", userClaude, undefined]
          ]
        )
        assert.deepStrictEqual(untrusted.untrusted, [path.dirname(project), path.dirname(claude)])
        const trusted = yield* sources.pipe(
          Effect.provide(catalogLayer({ context: contextOptions(folders, { trustProject: true }) }))
        )
        assert.deepStrictEqual(
          trusted.listings.map((l) => [l.name, l.from, l.shadowedBy?.from]),
          [
            ["review", project, undefined],
            ["review", claude, project],
            ["review", user, project],
            ["mine", userClaude, undefined]
          ]
        )
        assert.deepStrictEqual(trusted.untrusted, [])
      })
  )

  it.scoped(
    "CMD-1 a template that is empty, binary or past 256 KiB fails with one line naming the file; nothing empty or cut is sent",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        const empty = prompts(folders.config, "empty.md")
        const binary = prompts(folders.config, "binary.md")
        const huge = prompts(folders.config, "huge.md")
        write(empty, "---\ndescription: Nothing yet\n---\n")
        write(binary, "Read \u0000\u0001 this")
        write(huge, `Review:\n${"line of text\n".repeat(30_000)}`)
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const failure = (name: string, args = "") =>
            Effect.flip(catalog.execute(name, args)).pipe(Effect.map((error) => [error.reason, error.message]))
          assert.deepStrictEqual(yield* failure("empty"), [
            "failed",
            `${empty} has no text to send after its front matter; write the prompt in it, or give /empty arguments.`
          ])
          assert.deepStrictEqual(yield* catalog.execute("empty", "just this"), { _tag: "Prompt", prompt: "just this" })
          assert.deepStrictEqual(yield* failure("binary"), [
            "failed",
            `${binary} was not sent: it holds NUL bytes, so it is not text.`
          ])
          assert.deepStrictEqual(yield* failure("huge", "x"), [
            "failed",
            `${huge} was not sent: it is 381 KiB, over the 256 KiB a template may hold (keep long text in a file the template names).`
          ])
          const diagnostics = (yield* catalog.diagnostics).map((d) => [path.basename(d.file), d.message])
          assert.deepStrictEqual(diagnostics, [
            ["binary.md", "it holds NUL bytes, so it is not text; running it fails"],
            [
              "huge.md",
              "it is 381 KiB, over the 256 KiB a template may hold (keep long text in a file the template names); running it fails"
            ]
          ])
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
      })
  )

  it.scoped("CMD-1 a multi-line or very long description or argument hint is listed on one line, cut", () =>
    Effect.gen(function* () {
      const folders = foldersIn(yield* tempDir)
      write(
        prompts(folders.config, "multi.md"),
        `---\ndescription: |\n  line one\n  line two\nargument-hint: "<a>\\n<b>"\n---\nBody.\n`
      )
      write(prompts(folders.config, "long.md"), `---\ndescription: ${"word ".repeat(1000)}\n---\nBody.\n`)
      yield* Effect.gen(function* () {
        const catalog = yield* CommandCatalog
        assert.deepInclude(yield* catalog.resolve("multi"), {
          description: "line one line two",
          argumentHint: "<a> <b>"
        })
        const long = (yield* catalog.resolve("long")).description
        assert.strictEqual(long.length, 1024)
        assert.isTrue(long.endsWith("…"))
      }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
    })
  )

  it.scoped("CMD-1 a folder linking back to one it is in is not read again (no /loop:loop:… copies)", () =>
    Effect.gen(function* () {
      const folders = foldersIn(yield* tempDir)
      write(prompts(folders.config, "review.md"), "Review it.")
      write(prompts(folders.config, path.join("team", "deploy.md")), "Deploy it.")
      fs.symlinkSync(path.join(folders.config, "prompts"), prompts(folders.config, "loop"))
      fs.symlinkSync("..", prompts(folders.config, path.join("team", "up")))
      yield* Effect.gen(function* () {
        const catalog = yield* CommandCatalog
        const templates = (yield* catalog.list()).filter((l) => l.source === "template").map((l) => l.name)
        assert.deepStrictEqual(templates, ["review", "team:deploy"])
      }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
    })
  )

  it.scoped(
    "CMD-1 front matter whose YAML aliases blow up (billion laughs) or nest past the stack is a diagnostic, never a crash",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        const levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        for (let level = 1; level < 10; level++) {
          const name = String.fromCharCode(97 + level)
          const previous = String.fromCharCode(96 + level)
          levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(", ")}]`)
        }
        const bomb = `---\n${levels.join("\n")}\ndescription: Laughs\n---\nLaugh.\n`
        const template = prompts(folders.config, "laughs.md")
        const skill = path.join(folders.config, "skills", "laughs", "SKILL.md")
        const deep = prompts(folders.config, "deep.md")
        write(template, bomb)
        write(skill, bomb)
        write(deep, `---\ndescription: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n---\nDeep.\n`)
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          assert.deepInclude(yield* catalog.resolve("laughs"), { description: "Laughs" })
          assert.deepInclude(yield* catalog.resolve("skill:laughs"), { description: "Laughs" })
          assert.deepStrictEqual(yield* catalog.execute("laughs", ""), { _tag: "Prompt", prompt: "Laugh." })
          assert.deepStrictEqual(yield* catalog.execute("deep", ""), { _tag: "Prompt", prompt: "Deep." })
          const diagnostics = yield* catalog.diagnostics
          for (const file of [template, skill, deep]) {
            const about = diagnostics.find((d) => d.file === file)?.message ?? ""
            assert.match(about, /^its front matter is not valid YAML \(/, file)
          }
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
      })
  )

  it.scoped(
    "CMD-1 /skill:<id> replaces $ARGUMENTS only: the shell in a skill's instructions ($1 of awk) reaches the model whole",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        write(
          path.join(folders.config, "skills", "columns", "SKILL.md"),
          "---\ndescription: Columns\n---\nRun `awk '{print $1, $2}' $ARGUMENTS`.\n"
        )
        write(
          path.join(folders.config, "skills", "sum", "SKILL.md"),
          "---\ndescription: Sum\n---\nRun `awk '{s += $1}'`.\n"
        )
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const prompt = (name: string, args: string) =>
            Effect.map(catalog.execute(name, args), (output) =>
              output._tag === "Prompt" ? output.prompt.split("\n\n").slice(1).join("\n\n") : ""
            )
          assert.strictEqual(yield* prompt("skill:columns", "data.txt"), "Run `awk '{print $1, $2}' data.txt`.")
          assert.strictEqual(yield* prompt("skill:sum", ""), "Run `awk '{s += $1}'`.")
          assert.strictEqual(yield* prompt("skill:sum", "a.txt"), "Run `awk '{s += $1}'`.\n\nARGUMENTS: a.txt")
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
      })
  )
})
