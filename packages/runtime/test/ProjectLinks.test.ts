import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { CommandCatalog } from "@alisio/runtime/CommandCatalog"
import * as ProjectInstructions from "@alisio/runtime/ProjectInstructions"
import { SystemContext } from "@alisio/runtime/SystemContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { catalogLayer, contextOptions, foldersIn, write } from "./helpers/catalog.js"
import { tempDir } from "./helpers/tempDir.js"

const skillFile = (description: string, body: string) => `---\ndescription: ${description}\n---\n${body}\n`

/** A trusted project whose templates and skills link out to the person's secrets, and one that links inside. */
const linkedProject = (root: string) => {
  const folders = foldersIn(root)
  const secret = path.join(folders.home, ".ssh", "id_rsa")
  write(secret, "PRIVATE KEY")
  write(path.join(folders.home, "team", "deploy.md"), "TEAM PROMPT")
  write(path.join(folders.home, "secret-skill", "SKILL.md"), skillFile("SECRET SKILL", "STOLEN STEPS"))
  write(path.join(folders.home, "shared", "mine.md"), "MY OWN PROMPT")
  write(path.join(folders.workspace, "notes", "review.md"), "REVIEW FROM NOTES")
  const prompts = path.join(folders.workspace, ".alisio", "prompts")
  const skills = path.join(folders.workspace, ".alisio", "skills")
  fs.mkdirSync(prompts, { recursive: true })
  fs.mkdirSync(path.join(skills, "keyfile"), { recursive: true })
  fs.mkdirSync(path.join(folders.config, "prompts"), { recursive: true })
  fs.symlinkSync(secret, path.join(prompts, "leak.md"))
  fs.symlinkSync(path.join(folders.home, "team"), path.join(prompts, "team"))
  fs.symlinkSync(path.join(folders.workspace, "notes", "review.md"), path.join(prompts, "review.md"))
  fs.symlinkSync(path.join(folders.home, "secret-skill"), path.join(skills, "stolen"))
  fs.symlinkSync(secret, path.join(skills, "keyfile", "SKILL.md"))
  write(path.join(skills, "fine", "SKILL.md"), skillFile("A project skill", "FINE STEPS"))
  fs.symlinkSync(path.join(folders.home, "shared", "mine.md"), path.join(folders.config, "prompts", "mine.md"))
  return { folders, secret: fs.realpathSync(secret), prompts, skills }
}

describe("a trusted project's files that link out of it", () => {
  it.scoped(
    "CTX-2 a trusted project's template or skill linking outside the project is not read: a warning names it and where it points",
    () =>
      Effect.gen(function* () {
        const { folders, prompts, secret, skills } = linkedProject(yield* tempDir)
        const workspace = fs.realpathSync(folders.workspace)
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const context = yield* SystemContext
          const failure = (name: string) => Effect.flip(catalog.execute(name, ""))

          const leak = yield* failure("leak")
          assert.strictEqual(leak.reason, "failed")
          assert.include(leak.message, path.join(prompts, "leak.md"))
          assert.include(leak.message, `links to ${secret}, outside the project (${workspace})`)
          assert.notInclude(leak.message, "PRIVATE KEY")
          assert.strictEqual((yield* failure("team:deploy")).reason, "unknown")
          assert.deepStrictEqual(yield* catalog.execute("review", ""), { _tag: "Prompt", prompt: "REVIEW FROM NOTES" })
          // The person's own templates may link anywhere.
          assert.deepStrictEqual(yield* catalog.execute("mine", ""), { _tag: "Prompt", prompt: "MY OWN PROMPT" })

          const listed = yield* catalog.list()
          assert.notInclude(JSON.stringify(listed), "PRIVATE KEY")
          assert.notInclude(JSON.stringify(listed), "SECRET SKILL")
          const diagnostics = (yield* catalog.diagnostics).map((d) => [d.file, d.message])
          assert.deepInclude(diagnostics, [
            path.join(prompts, "team"),
            `it links to ${path.join(folders.home, "team")}, outside the project (${workspace}), so it is not read`
          ])
          assert.deepInclude(diagnostics, [
            path.join(prompts, "leak.md"),
            `it links to ${secret}, outside the project (${workspace}), so it is not read; running /leak fails`
          ])
          assert.deepInclude(diagnostics, [
            path.join(skills, "stolen", "SKILL.md"),
            `it links to ${path.join(folders.home, "secret-skill", "SKILL.md")}, outside the project (${workspace}), so the skill is not read`
          ])
          assert.deepInclude(diagnostics, [
            path.join(skills, "keyfile", "SKILL.md"),
            `it links to ${secret}, outside the project (${workspace}), so the skill is not read`
          ])

          assert.deepStrictEqual(
            context.skills.skills.map((skill) => skill.id),
            ["fine"]
          )
          assert.strictEqual((yield* failure("skill:stolen")).reason, "unknown")
          const built = yield* context.build({ prompt: "hi", model: "fake-model" })
          for (const leaked of ["PRIVATE KEY", "SECRET SKILL", "STOLEN STEPS", "TEAM PROMPT"]) {
            assert.notInclude(built.text, leaked)
          }
          assert.include(built.text, "A project skill")
        }).pipe(
          Effect.provide(catalogLayer({ context: contextOptions(folders, { trustProject: true }) })),
          Effect.scoped
        )
      })
  )

  it.scoped("CTX-2 a project's template or skill relinked outside after it was listed fails when run", () =>
    Effect.gen(function* () {
      const { folders, prompts, secret, skills } = linkedProject(yield* tempDir)
      yield* Effect.gen(function* () {
        const catalog = yield* CommandCatalog
        yield* catalog.resolve("review")
        yield* catalog.resolve("skill:fine")
        fs.rmSync(path.join(prompts, "review.md"))
        fs.symlinkSync(secret, path.join(prompts, "review.md"))
        fs.rmSync(path.join(skills, "fine", "SKILL.md"))
        fs.symlinkSync(secret, path.join(skills, "fine", "SKILL.md"))
        const review = yield* Effect.flip(catalog.execute("review", ""))
        assert.include(review.message, `${path.join(prompts, "review.md")} was not sent: it links to ${secret}`)
        const skill = yield* Effect.flip(catalog.execute("skill:fine", ""))
        assert.include(skill.message, `it links to ${secret}`)
        assert.notInclude(`${review.message}${skill.message}`, "PRIVATE KEY")
      }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders, { trustProject: true }) })), Effect.scoped)
    })
  )

  it.scoped(
    "CTX-2 a home folder that is a git repository (dotfiles) is not the project: a project under it linking to ~/.ssh is refused",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir
        const folders = foldersIn(root)
        const git = (cwd: string) => execFileSync("git", ["init", "-q", cwd], { stdio: "ignore" })
        git(folders.home)
        const secret = path.join(folders.home, ".ssh", "id_rsa")
        write(secret, "PRIVATE KEY")
        write(path.join(folders.home, "AGENTS.md"), "DOTFILES NOTES")
        // A project folder of its own under ~, not a repository, and one that is its own repository.
        const loose = path.join(folders.home, "proj")
        const prompts = path.join(loose, ".alisio", "prompts")
        fs.mkdirSync(prompts, { recursive: true })
        fs.symlinkSync(secret, path.join(prompts, "leak.md"))
        fs.symlinkSync(secret, path.join(loose, "AGENTS.md"))
        const repo = path.join(folders.home, "work", "repo")
        git(repo)
        write(path.join(repo, "shared", "review.md"), "REVIEW FROM THE REPOSITORY")
        const inner = path.join(repo, "app")
        fs.mkdirSync(path.join(inner, ".alisio", "prompts"), { recursive: true })
        fs.symlinkSync(path.join(repo, "shared", "review.md"), path.join(inner, ".alisio", "prompts", "review.md"))
        fs.symlinkSync(secret, path.join(inner, ".alisio", "prompts", "leak.md"))

        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const context = yield* SystemContext
          const leak = yield* Effect.flip(catalog.execute("leak", ""))
          assert.include(leak.message, `links to ${secret}, outside the project (${loose})`)
          assert.notInclude(leak.message, "PRIVATE KEY")
          const built = yield* context.build({ prompt: "hi", model: "fake-model" })
          assert.notInclude(built.text, "PRIVATE KEY")
          assert.notInclude(built.text, "DOTFILES NOTES")
        }).pipe(
          Effect.provide(catalogLayer({ context: contextOptions(folders, { cwd: loose, trustProject: true }) })),
          Effect.scoped
        )

        // A repository of its own under the home repository is still the project, its root the boundary.
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          assert.deepStrictEqual(yield* catalog.execute("review", ""), {
            _tag: "Prompt",
            prompt: "REVIEW FROM THE REPOSITORY"
          })
          const leak = yield* Effect.flip(catalog.execute("leak", ""))
          assert.include(leak.message, `links to ${secret}, outside the project (${repo})`)
        }).pipe(
          Effect.provide(catalogLayer({ context: contextOptions(folders, { cwd: inner, trustProject: true }) })),
          Effect.scoped
        )

        // Without a home given, HOME is the home folder.
        const saved = process.env.HOME
        process.env.HOME = folders.home
        try {
          const read = yield* ProjectInstructions.make({ configHome: folders.config }).read(loose)
          assert.strictEqual(read.repositoryRoot, undefined)
          assert.deepStrictEqual(read.files, [])
          assert.include(read.notice, `it links to ${secret}, outside the workspace`)
        } finally {
          process.env.HOME = saved
        }
      })
  )
})
