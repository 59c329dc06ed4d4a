import { execFileSync } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type { ConfigError } from "@alisio/domain/Errors"
import * as Config from "@alisio/runtime/Config"
import * as Paths from "@alisio/runtime/Paths"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { tempDir } from "./helpers/tempDir.js"

const writeFile = (file: string, text: string) =>
  Effect.promise(async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, text)
  })

/** A workspace with a global and a project config file. */
const setup = (files: { readonly global?: string; readonly project?: string }) =>
  Effect.gen(function* () {
    const dir = yield* tempDir
    const globalFile = path.join(dir, "home", "config.yaml")
    const projectFile = Paths.projectConfigFile(path.join(dir, "work"))
    if (files.global !== undefined) yield* writeFile(globalFile, files.global)
    if (files.project !== undefined) yield* writeFile(projectFile, files.project)
    return { globalFile, projectFile }
  })

const load = (sources: Config.ConfigSources) => Config.make(sources).pipe(Effect.provide(NodeFileSystem.layer))

const loadError = (sources: Config.ConfigSources): Effect.Effect<ConfigError> =>
  load(sources).pipe(
    Effect.flip,
    Effect.orDieWith(() => new Error("the configuration loaded"))
  )

const parseError = (text: string): ConfigError => {
  const result = Config.parse(text, "config.yaml")
  if (Either.isRight(result)) throw new Error(`parsed: ${text}`)
  return result.left
}

const globalYaml = `
# Alisio configuration
providers:
  openai:
    apiKey: sk-secret
    api: responses
    headers: { X-Team: core }
  local:
    baseURL: http://127.0.0.1:11434/v1
    apiKeyEnv: LOCAL_KEY
    outputTokensParam: max_tokens
    models:
      qwen3: { contextWindow: 32768, maxOutputTokens: 8192, reasoningEfforts: [low, high] }
defaultModel: openai/gpt-4o
limits:
  maxTurns: 20
  timeoutMs: 600000
approvals:
  write: approve
  external: deny
builtinPlugins:
  memory:
    enabled: false
    maxEntries: 100
plugins:
  - npm:alisio-plugin-a
  - source: ./plugins/b.js
    config: { level: 2 }
mcpServers:
  files:
    command: npx
    args: [-y, server-files]
    env: { ROOT: /tmp }
  docs:
    url: https://127.0.0.1:9000/mcp
    headers: { Authorization: Bearer x }
`

describe("Config", () => {
  it.scoped("CFG-1 loads the global file: providers, model, limits, approvals, plugins, MCP servers", () =>
    Effect.gen(function* () {
      const { globalFile, projectFile } = yield* setup({ global: globalYaml })
      const loaded = yield* load({ globalFile, projectFile, trustProject: false })
      assert.deepStrictEqual(loaded.warnings, [])
      assert.deepStrictEqual(loaded.files, [globalFile])
      const { config } = loaded
      const openai = config.providers?.openai
      assert.strictEqual(Redacted.value(openai!.apiKey!), "sk-secret")
      assert.strictEqual(String(openai!.apiKey), "<redacted>")
      assert.strictEqual(openai!.api, "responses")
      assert.deepStrictEqual(config.providers?.local, {
        baseURL: "http://127.0.0.1:11434/v1",
        apiKeyEnv: "LOCAL_KEY",
        outputTokensParam: "max_tokens",
        models: { qwen3: { contextWindow: 32768, maxOutputTokens: 8192, reasoningEfforts: ["low", "high"] } }
      })
      assert.strictEqual(config.defaultModel, "openai/gpt-4o")
      assert.deepStrictEqual(config.limits, { maxTurns: 20, timeoutMs: 600000 })
      assert.deepStrictEqual(config.builtinPlugins, { memory: { enabled: false, maxEntries: 100 } })
      assert.deepStrictEqual(config.plugins, [
        "npm:alisio-plugin-a",
        { source: "./plugins/b.js", config: { level: 2 } }
      ])
      assert.deepStrictEqual(config.mcpServers, {
        files: { type: "stdio", command: "npx", args: ["-y", "server-files"], env: { ROOT: "/tmp" } },
        docs: { type: "http", url: "https://127.0.0.1:9000/mcp", headers: { Authorization: "Bearer x" } }
      })
      assert.deepStrictEqual(config.approvals, { write: "approve", external: "deny" })
    })
  )

  it.scoped("CFG-1 missing and empty files are an empty configuration", () =>
    Effect.gen(function* () {
      const missing = yield* setup({})
      assert.deepStrictEqual(yield* load({ ...missing, trustProject: true }), {
        config: {},
        warnings: [],
        files: [],
        layers: []
      })
      const empty = yield* setup({ global: "# nothing yet\n", project: "" })
      const loaded = yield* load({ ...empty, trustProject: true })
      assert.deepStrictEqual(loaded.config, {})
      assert.deepStrictEqual(loaded.files, [empty.globalFile, empty.projectFile])
    })
  )

  it.scoped("CFG-1 an untrusted project file is reported once and ignored, even when invalid", () =>
    Effect.gen(function* () {
      const files = yield* setup({ global: "limits: { maxTurns: 5 }\n", project: "limits: { maxTurns: [oops\n" })
      const loaded = yield* load({ ...files, trustProject: false })
      assert.deepStrictEqual(loaded.config, { limits: { maxTurns: 5 } })
      assert.deepStrictEqual(loaded.warnings, [
        `${files.projectFile} is ignored: project configuration applies only with --trust-project`
      ])
    })
  )

  it.scoped("CFG-1 a trusted project file overrides the global one key by key", () =>
    Effect.gen(function* () {
      const files = yield* setup({
        global: globalYaml,
        project: [
          "providers:",
          "  openai: { apiKeyEnv: PROJECT_KEY, headers: { X-Project: p } }",
          "defaultModel: local/qwen3",
          "limits: { maxTurns: 50 }",
          "approvals: { external: ask }",
          "builtinPlugins: { memory: { enabled: true } }",
          "plugins: [npm:alisio-plugin-a, ./project-plugin.js]",
          "mcpServers:",
          "  files: { url: http://127.0.0.1:8000/mcp }"
        ].join("\n")
      })
      const { config, files: applied } = yield* load({ ...files, trustProject: true })
      assert.deepStrictEqual(applied, [files.globalFile, files.projectFile])
      const openai = config.providers?.openai
      assert.strictEqual(Redacted.value(openai!.apiKey!), "sk-secret")
      assert.strictEqual(openai!.apiKeyEnv, "PROJECT_KEY")
      assert.deepStrictEqual(openai!.headers, { "X-Team": "core", "X-Project": "p" })
      assert.strictEqual(config.defaultModel, "local/qwen3")
      assert.deepStrictEqual(config.limits, { maxTurns: 50, timeoutMs: 600000 })
      assert.deepStrictEqual(config.approvals, { write: "approve", external: "ask" })
      assert.deepStrictEqual(config.builtinPlugins, { memory: { enabled: true, maxEntries: 100 } })
      assert.deepStrictEqual(config.plugins, [
        "npm:alisio-plugin-a",
        { source: "./plugins/b.js", config: { level: 2 } },
        "./project-plugin.js"
      ])
      assert.deepStrictEqual(config.mcpServers?.files, { type: "http", url: "http://127.0.0.1:8000/mcp" })
      assert.strictEqual(config.mcpServers?.docs?.type, "http")
    })
  )

  it.scoped("CFG-1 flags override the files", () =>
    Effect.gen(function* () {
      const files = yield* setup({ global: globalYaml })
      const flags: Config.ConfigFlags = {
        model: "local/qwen3",
        limits: { maxTurns: 3, timeoutMs: undefined },
        approvals: { write: "deny" },
        disablePlugins: ["subagents"],
        plugins: ["./flag-plugin.js"]
      }
      const { config } = yield* load({ ...files, trustProject: false, flags })
      assert.strictEqual(config.defaultModel, "local/qwen3")
      assert.deepStrictEqual(config.limits, { maxTurns: 3, timeoutMs: 600000 })
      assert.deepStrictEqual(config.approvals, { write: "deny", external: "deny" })
      assert.deepStrictEqual(config.builtinPlugins, {
        memory: { enabled: false, maxEntries: 100 },
        subagents: { enabled: false }
      })
      assert.strictEqual(config.plugins?.at(-1), "./flag-plugin.js")
      assert.deepStrictEqual(Config.merge({}, {}), {})
    })
  )

  it.scoped("CFG-1 a bad file fails naming the file, the line, the key path and what was expected", () =>
    Effect.gen(function* () {
      const files = yield* setup({ global: "# limits\nlimits:\n  maxTurns: -3\n  timeoutMs: 1000\n" })
      const error = yield* loadError({ ...files, trustProject: false })
      assert.strictEqual(error._tag, "ConfigError")
      assert.strictEqual(error.message, `${files.globalFile}:3:13: limits.maxTurns: expected a positive number, got -3`)
      assert.strictEqual(error.file, files.globalFile)
      assert.strictEqual(error.path, "limits.maxTurns")
      assert.strictEqual(error.line, 3)
      const project = yield* setup({ project: "approvals:\n  write: sometimes\n" })
      const projectError = yield* loadError({ ...project, trustProject: true })
      assert.strictEqual(
        projectError.message,
        `${project.projectFile}:2:10: approvals.write: expected "approve", "ask" or "deny", got "sometimes"`
      )
    })
  )

  it.scoped("CFG-1 a trusted project's config linked to a pipe fails in one line instead of waiting for ever", () =>
    Effect.gen(function* () {
      const files = yield* setup({})
      const fifo = path.join(path.dirname(files.globalFile), "queue")
      yield* Effect.promise(() => fs.mkdir(path.dirname(files.projectFile), { recursive: true }))
      yield* Effect.promise(() => fs.mkdir(path.dirname(fifo), { recursive: true }))
      execFileSync("mkfifo", [fifo])
      yield* Effect.promise(() => fs.symlink(fifo, files.projectFile))
      const error = yield* loadError({ ...files, trustProject: true })
      assert.strictEqual(error.message, `${files.projectFile}: not a regular file; a configuration file must be one`)
    })
  )

  it("CFG-1 explains each kind of mistake in one line, every mistake of a file at once", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["limits:\n  maxTurns: ten\n", 'config.yaml:2:13: limits.maxTurns: expected a number, got "ten"'],
      ["limits:\n  maxTurns:\n", "config.yaml:2:12: limits.maxTurns: expected a number, got an empty value"],
      ["limits: 5\n", "config.yaml:1:9: limits: expected a mapping (key: value), got 5"],
      [
        "defaultModel: gpt-4o\n",
        'config.yaml:1:15: defaultModel: expected "provider/model", e.g. "openai/gpt-4o", got "gpt-4o"'
      ],
      ["providers:\n  openai:\n    apiKey: 3\n", "config.yaml:3:13: providers.openai.apiKey: expected a string, got 3"],
      [
        "builtinPlugins:\n  memory:\n    enabled: yes\n",
        'config.yaml:3:14: builtinPlugins.memory.enabled: expected true or false, got "yes"'
      ],
      [
        "plugins:\n  - ./a.js\n  - 3\n",
        "config.yaml:3:5: plugins[1]: expected a string or a mapping (key: value), got 3"
      ],
      ["mcpServers:\n  github:\n    type: http\n", 'config.yaml:2:3: mcpServers.github: required key "url" is missing'],
      [
        "mcpServers:\n  x:\n    type: ws\n",
        'config.yaml:3:11: mcpServers.x.type: expected "stdio", "http" or "sse", got "ws"'
      ],
      ["- a\n", "config.yaml:1:1: expected a mapping of settings (key: value), got a list"],
      [
        "limits:\n  maxTurns: 0\napprovals:\n  read: no\n",
        'config.yaml:2:13: limits.maxTurns: expected a positive number, got 0\nconfig.yaml:4:9: approvals.read: expected "approve", "ask" or "deny", got "no"'
      ]
    ]
    for (const [text, message] of cases) {
      assert.strictEqual(parseError(text).message, message)
    }
  })

  it("CFG-1 a YAML syntax error names the line and column", () => {
    const error = parseError("limits:\n  maxTurns: a: b\n")
    assert.strictEqual(
      error.message,
      "config.yaml:2:13: invalid YAML: Nested mappings are not allowed in compact mappings"
    )
    assert.strictEqual(error.line, 2)
    assert.strictEqual(
      parseError("limits:\n\tmaxTurns: 1\n").message,
      "config.yaml:2:1: invalid YAML: Tabs are not allowed as indentation"
    )
  })

  it("CFG-1 a setting given twice names its path and both lines", () => {
    assert.strictEqual(parseError("a: 1\na: 2\n").message, "config.yaml:2:1: a is set twice (lines 1 and 2): keep one")
    const error = parseError(
      "providers:\n  openai:\n    baseURL: http://a/v1\n    apiKey: k\n    baseURL: http://b/v1\n"
    )
    assert.strictEqual(
      error.message,
      "config.yaml:5:5: providers.openai.baseURL is set twice (lines 3 and 5): keep one"
    )
    assert.strictEqual(error.line, 5)
    assert.strictEqual(
      parseError("mcpServers:\n  a.b: { command: x }\n  a.b: { command: y }\n").message,
      'config.yaml:3:3: mcpServers["a.b"] is set twice (lines 2 and 3): keep one'
    )
  })

  it.scoped("CFG-1 unknown keys are warnings with their line, not failures, naming the key a typo meant", () =>
    Effect.gen(function* () {
      const files = yield* setup({
        global: [
          "limits:\n  maxTurns: 4\n  maxTurn: 5\nthemes: dark\nmcpServers:\n  a: { url: http://127.0.0.1/mcp, token: t }",
          "  b: { command: node, arg: [x] }",
          "defaultModle: openai/x",
          "providers:\n  local: { baseUrl: http://127.0.0.1/v1 }\n"
        ].join("\n")
      })
      const loaded = yield* load({ ...files, trustProject: false })
      assert.deepStrictEqual(loaded.config, {
        limits: { maxTurns: 4 },
        mcpServers: { a: { type: "http", url: "http://127.0.0.1/mcp" }, b: { type: "stdio", command: "node" } },
        providers: { local: {} }
      })
      assert.deepStrictEqual(loaded.warnings, [
        `${files.globalFile}:3:3: unknown key limits.maxTurn is ignored (did you mean maxTurns?)`,
        `${files.globalFile}:4:1: unknown key themes is ignored`,
        `${files.globalFile}:6:35: unknown key mcpServers.a.token is ignored`,
        `${files.globalFile}:7:23: unknown key mcpServers.b.arg is ignored (did you mean args?)`,
        `${files.globalFile}:8:1: unknown key defaultModle is ignored (did you mean defaultModel?)`,
        `${files.globalFile}:10:12: unknown key providers.local.baseUrl is ignored (did you mean baseURL?)`
      ])
    })
  )

  it.scoped("TL-8 CFG-1 shell.environment: the policy of bash's environment, merged and validated", () =>
    Effect.gen(function* () {
      const files = yield* setup({
        global: ["shell:", "  environment:", "    inherit: core", "    exclude: [AWS_*]", "    set: { CI: '1' }"].join(
          "\n"
        ),
        project: "shell:\n  environment:\n    includeOnly: [PATH, HOME]\n    ignoreDefaultExcludes: true\n"
      })
      const { config } = yield* load({ ...files, trustProject: true })
      assert.deepStrictEqual(config.shell, {
        environment: {
          inherit: "core",
          exclude: ["AWS_*"],
          set: { CI: "1" },
          includeOnly: ["PATH", "HOME"],
          ignoreDefaultExcludes: true
        }
      })
      assert.strictEqual(
        parseError("shell:\n  environment:\n    inherit: some\n").message,
        'config.yaml:3:14: shell.environment.inherit: expected "all", "core" or "none", got "some"'
      )
    })
  )

  it.effect("CFG-1 layer provides the loaded configuration; layerTest a given one", () =>
    Effect.gen(function* () {
      const fromTest = yield* Config.AlisioConfig.pipe(Effect.provide(Config.layerTest({ defaultModel: "fake/m" })))
      assert.deepStrictEqual(fromTest, { config: { defaultModel: "fake/m" }, warnings: [], files: [], layers: [] })
      const dir = yield* Effect.scoped(
        Effect.gen(function* () {
          const files = yield* setup({ global: "defaultModel: openai/gpt-4o\n" })
          const layer = Config.layer({ ...files, trustProject: false }).pipe(Layer.provide(NodeFileSystem.layer))
          return yield* Config.AlisioConfig.pipe(Effect.provide(layer))
        })
      )
      assert.strictEqual(dir.config.defaultModel, "openai/gpt-4o")
    })
  )
})

describe("Paths", () => {
  it("CFG-1 ALISIO_HOME holds config and state", () => {
    assert.deepStrictEqual(Paths.resolve({ ALISIO_HOME: "/data/alisio", XDG_CONFIG_HOME: "/x", home: "/home/u" }), {
      configHome: "/data/alisio",
      stateHome: "/data/alisio/state",
      globalConfigFile: "/data/alisio/config.yaml"
    })
  })

  it("CFG-1 otherwise the XDG folders, defaulting to ~/.config and ~/.local/state", () => {
    assert.deepStrictEqual(Paths.resolve({ XDG_CONFIG_HOME: "/cfg", XDG_STATE_HOME: "/st", home: "/home/u" }), {
      configHome: "/cfg/alisio",
      stateHome: "/st/alisio",
      globalConfigFile: "/cfg/alisio/config.yaml"
    })
    const defaults = {
      configHome: "/home/u/.config/alisio",
      stateHome: "/home/u/.local/state/alisio",
      globalConfigFile: "/home/u/.config/alisio/config.yaml"
    }
    assert.deepStrictEqual(Paths.resolve({ home: "/home/u" }), defaults)
    assert.deepStrictEqual(Paths.resolve({ ALISIO_HOME: "", XDG_CONFIG_HOME: "relative", home: "/home/u" }), defaults)
    assert.strictEqual(Paths.projectConfigFile("/work/app"), "/work/app/.alisio/config.yaml")
  })

  it.effect("CFG-1 make reads the environment through the ConfigProvider", () =>
    Effect.gen(function* () {
      const paths = yield* Paths.make.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["ALISIO_HOME", "/tmp/alisio-home"]])))
      )
      assert.strictEqual(paths.stateHome, "/tmp/alisio-home/state")
      const xdg = yield* Paths.make.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["XDG_STATE_HOME", "/var/state"]])))
      )
      assert.strictEqual(xdg.stateHome, "/var/state/alisio")
      assert.strictEqual(xdg.configHome, path.join(os.homedir(), ".config", "alisio"))
    })
  )
})
