import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { formatDiagnostic } from "@alisio/plugin-subagents/AgentDefinition"
import { discoverAgents } from "@alisio/plugin-subagents/AgentDiscovery"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { tempDir } from "./support/subagentsHost.js"

const agent = (dir: string, file: string, description: string) => {
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, file), `---\ndescription: ${description}\n---\nPrompt of ${description}.\n`)
}

const layout = Effect.gen(function* () {
  const root = yield* tempDir
  const cwd = path.join(root, "project")
  const configHome = path.join(root, "config")
  const homeDir = path.join(root, "home")
  agent(path.join(cwd, ".alisio", "agents"), "dup.md", "from .alisio")
  agent(path.join(cwd, ".claude", "agents"), "dup.md", "from .claude")
  writeFileSync(
    path.join(cwd, ".claude", "agents", "code-reviewer.md"),
    readFileSync(fileURLToPath(new URL("./fixtures/claude-code/code-reviewer.md", import.meta.url)))
  )
  agent(path.join(configHome, "agents"), "mine.md", "from config")
  agent(path.join(configHome, "agents"), "explore.md", "my own explore")
  agent(path.join(homeDir, ".claude", "agents"), "personal.md", "from ~/.claude")
  agent(path.join(homeDir, ".claude", "agents"), "mine.md", "shadowed by config")
  agent(path.join(configHome, "plugins", "some-plugin", "agents"), "plugged.md", "from a plugin")
  agent(path.join(configHome, "plugins", "node_modules", "@scope", "pkg", "agents"), "scoped.md", "from a package")
  // The loaded external plugins' folders, in load order.
  const pluginRoots = [
    path.join(configHome, "plugins", "some-plugin"),
    path.join(configHome, "plugins", "node_modules", "@scope", "pkg")
  ]
  return { cwd, configHome, homeDir, pluginRoots }
})

describe("agent discovery", () => {
  it.scoped("CH-4 an agent file linked to a pipe is passed over; the others are found", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const agents = path.join(root, "config", "agents")
      agent(agents, "real.md", "a real one")
      execFileSync("mkfifo", [path.join(root, "queue")])
      symlinkSync(path.join(root, "queue"), path.join(agents, "piped.md"))
      const found = yield* discoverAgents({
        cwd: path.join(root, "project"),
        configHome: path.join(root, "config"),
        homeDir: path.join(root, "home"),
        pluginRoots: [],
        trustProject: false
      })
      assert.deepStrictEqual(
        found.agents.filter((a) => a.source === "user").map((a) => a.name),
        ["real"]
      )
    })
  )

  it.scoped(
    "CH-4 first found wins: the trusted project, <config>/agents, ~/.claude/agents, plugins, then builtins",
    () =>
      Effect.gen(function* () {
        const where = yield* layout
        const found = yield* discoverAgents({ ...where, trustProject: true })
        assert.deepStrictEqual(
          found.agents.map((a) => `${a.name}:${a.source}`),
          [
            "dup:project",
            "code-reviewer:project-claude",
            "explore:user",
            "mine:user",
            "personal:user-claude",
            "plugged:plugin",
            "scoped:plugin",
            "general:builtin",
            "plan:builtin"
          ]
        )
        assert.strictEqual(found.agents.find((a) => a.name === "dup")?.description, "from .alisio")
        assert.deepStrictEqual(
          found.shadowed.map((a) => `${a.name}:${a.source}`),
          ["dup:project-claude", "mine:user-claude", "explore:builtin"]
        )
        assert.deepStrictEqual(found.diagnostics, [])
      })
  )

  it.scoped("CH-4 an untrusted project's agent folders are not read, and the person is told", () =>
    Effect.gen(function* () {
      const where = yield* layout
      const found = yield* discoverAgents({ ...where, trustProject: false })
      assert.isFalse(found.agents.some((a) => a.source === "project" || a.source === "project-claude"))
      assert.deepStrictEqual(found.diagnostics.map(formatDiagnostic), [
        `${path.join(where.cwd, ".alisio", "agents")}: 1 agent file is not read: the project is not trusted (--trust-project)`,
        `${path.join(where.cwd, ".claude", "agents")}: 2 agent files are not read: the project is not trusted (--trust-project)`
      ])
    })
  )
})
