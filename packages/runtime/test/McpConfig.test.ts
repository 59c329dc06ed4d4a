// MCP servers in the configuration: the shape Claude Code and Cursor users already write, a
// project's .mcp.json (trusted only), ${VAR} expansion, timeouts; results as the model reads them.
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Config from "@alisio/runtime/Config"
import { expandServer, expandText } from "@alisio/runtime/internal/mcp/expand"
import { toToolResult } from "@alisio/runtime/internal/mcp/results"
import { timeoutsOf } from "@alisio/runtime/internal/mcp/serverConfig"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { tempDir } from "./helpers/tempDir.js"

const parse = (text: string) => Either.getOrThrow(Config.parse(text, "config.yaml"))
const parseError = (text: string) =>
  Either.match(Config.parse(text, "config.yaml"), {
    onLeft: (error) => error.message,
    onRight: () => "parsed"
  })

// A block as Claude Code's settings and Cursor's mcp.json hold it: JSON, which is YAML too.
const claudeBlock = `"mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "\${GITHUB_TOKEN}" }
    },
    "linear": { "type": "sse", "url": "https://mcp.linear.app/sse" },
    "docs": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer \${DOCS_TOKEN}" } },
    "cursor-style": { "url": "http://127.0.0.1:3000/mcp" }
  }`

describe("MCP configuration", () => {
  it("MCP-1 a pasted Claude Code / Cursor mcpServers block is configuration as it is", () => {
    const { config, warnings } = parse(`# my settings\ndefaultModel: openai/gpt-4o\n${claudeBlock}\n`)
    assert.deepStrictEqual(warnings, [])
    assert.deepStrictEqual(config.mcpServers, {
      github: {
        type: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: `\${GITHUB_TOKEN}` }
      },
      linear: { type: "sse", url: "https://mcp.linear.app/sse" },
      docs: { type: "http", url: "https://example.com/mcp", headers: { Authorization: `Bearer \${DOCS_TOKEN}` } },
      "cursor-style": { type: "http", url: "http://127.0.0.1:3000/mcp" }
    })
  })

  it("MCP-1 enabled, timeout (one duration, or start-up and call apart), allowedTools, disabledTools", () => {
    const { config, warnings } = parse(
      [
        "mcpServers:",
        "  a: { command: a, enabled: false, timeout: 20s, allowedTools: [read], disabledTools: [write] }",
        "  b: { url: http://127.0.0.1/mcp, timeout: { startup: 1m, call: 5000 } }"
      ].join("\n")
    )
    assert.deepStrictEqual(warnings, [])
    const a = config.mcpServers?.a
    assert.deepStrictEqual(a, {
      type: "stdio",
      command: "a",
      enabled: false,
      timeout: "20s",
      allowedTools: ["read"],
      disabledTools: ["write"]
    })
    const defaults = { startupMs: 30_000, callMs: 600_000 }
    assert.deepStrictEqual(timeoutsOf(a?.timeout, defaults), { startupMs: 20_000, callMs: 20_000 })
    assert.deepStrictEqual(timeoutsOf(config.mcpServers?.b?.timeout, defaults), { startupMs: 60_000, callMs: 5_000 })
    assert.deepStrictEqual(timeoutsOf(undefined, defaults), defaults)
  })

  it("MCP-1 CFG-1 mistakes in a server are one line naming the place", () => {
    assert.strictEqual(
      parseError("mcpServers:\n  a: { command: a, timeout: soon }\n"),
      'config.yaml:2:29: mcpServers.a.timeout: expected a number, a duration such as "30s", "2m" or "500ms" or a mapping (key: value), got "soon"'
    )
    assert.strictEqual(
      parseError("mcpServers:\n  a: { type: sse }\n"),
      'config.yaml:2:3: mcpServers.a: required key "url" is missing'
    )
  })

  it(`MCP-1 \${VAR} and \${VAR:-default} expand; unset or empty without a default is named`, () => {
    const env = { TOKEN: "t0k", EMPTY: "" }
    assert.deepStrictEqual(expandText(`Bearer \${TOKEN}`, env), { value: "Bearer t0k", missing: [] })
    assert.deepStrictEqual(expandText(`\${EMPTY:-x}/\${NOPE:-y}`, env), { value: "x/y", missing: [] })
    assert.deepStrictEqual(expandText(`\${NOPE}-\${EMPTY}`, env).missing, ["NOPE", "EMPTY"])
    assert.strictEqual(expandText(`$TOKEN and \${ not a reference`, env).value, `$TOKEN and \${ not a reference`)
    const expanded = expandServer(
      {
        type: "stdio",
        command: `\${BIN:-node}`,
        args: [`--token=\${TOKEN}`],
        env: { KEY: `\${TOKEN}` },
        cwd: `\${HOME_DIR:-/srv}`
      },
      env
    )
    assert.deepStrictEqual(expanded, {
      _tag: "Right",
      launch: { type: "stdio", command: "node", args: ["--token=t0k"], env: { KEY: "t0k" }, cwd: "/srv" }
    })
    assert.deepStrictEqual(
      expandServer({ type: "http", url: `https://\${HOST}/mcp`, headers: { A: `\${A_TOKEN}` } }, env),
      {
        _tag: "Left",
        message: `\${HOST}, \${A_TOKEN} are not set: set them in the environment, or give a default as \${NAME:-value}`
      }
    )
  })

  it.scoped("MCP-1 a project's .mcp.json applies only with --trust-project, below the project's config.yaml", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const globalFile = path.join(dir, "home", "config.yaml")
      const work = path.join(dir, "work")
      yield* Effect.promise(async () => {
        await fs.mkdir(path.join(work, ".alisio"), { recursive: true })
        await fs.mkdir(path.dirname(globalFile), { recursive: true })
        await fs.writeFile(globalFile, "mcpServers:\n  mine: { command: mine }\n")
        await fs.writeFile(
          path.join(work, ".mcp.json"),
          JSON.stringify({ mcpServers: { team: { command: "team-server" }, shared: { command: "from-mcp-json" } } })
        )
        await fs.writeFile(
          path.join(work, ".alisio", "config.yaml"),
          "mcpServers:\n  shared: { command: from-project }\n"
        )
      })
      const load = (trustProject: boolean) =>
        Config.make({
          globalFile,
          projectFile: path.join(work, ".alisio", "config.yaml"),
          projectMcpFile: Config.projectMcpFile(work),
          trustProject
        }).pipe(Effect.provide(NodeFileSystem.layer))
      const untrusted = yield* load(false)
      assert.deepStrictEqual(Object.keys(untrusted.config.mcpServers ?? {}), ["mine"])
      assert.include(
        untrusted.warnings,
        `${path.join(work, ".mcp.json")} is ignored: a project's MCP servers start only with --trust-project`
      )
      const trusted = yield* load(true)
      assert.deepStrictEqual(trusted.config.mcpServers, {
        mine: { type: "stdio", command: "mine" },
        team: { type: "stdio", command: "team-server" },
        shared: { type: "stdio", command: "from-project" }
      })
      assert.deepStrictEqual(
        trusted.layers.map((layer) => [layer.kind, path.basename(layer.detail ?? "")]),
        [
          ["global", "config.yaml"],
          ["project", ".mcp.json"],
          ["project", "config.yaml"]
        ]
      )
    })
  )

  it.scoped("MCP-1 CFG-1 a broken .mcp.json is an error naming it", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const file = path.join(dir, ".mcp.json")
      yield* Effect.promise(() => fs.writeFile(file, '{ "mcpServers": { "x": { "args": "not a list" } } }'))
      const error = yield* Config.make({
        globalFile: path.join(dir, "none.yaml"),
        projectMcpFile: file,
        trustProject: true
      }).pipe(Effect.provide(NodeFileSystem.layer), Effect.flip)
      assert.strictEqual(
        error.message,
        `${file}:1:19: mcpServers.x: required key "command" is missing\n${file}:1:34: mcpServers.x.args: expected a list, got "not a list"`
      )
    })
  )

  it("MCP-1 a result without content blocks shows its structured content; an image alone is no empty text", () => {
    assert.deepStrictEqual(toToolResult({ content: [], structuredContent: { temperature: 21 } }), {
      content: [{ _tag: "text", text: '{\n  "temperature": 21\n}' }]
    })
    assert.deepStrictEqual(toToolResult({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }), {
      content: [{ _tag: "image", mediaType: "image/png", data: "AAAA" }]
    })
    assert.deepStrictEqual(toToolResult({ content: [], isError: true }), {
      content: [{ _tag: "text", text: "(no output)" }],
      isError: true
    })
  })
})
