// End-to-end: the configuration as a person sees it with the built `alisio` — the effective
// settings with where each comes from, the files, and the JSON Schemas of config.yaml and of the
// run events (CFG-1, EV-1).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import { ConfigPaths, ConfigReport } from "alisio/ConfigCommand"
import * as Schema from "effect/Schema"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { compileSchema } from "./support/jsonSchema.js"
import { type OpenAiTestServer, type Reply, startOpenAiServer } from "./support/openaiServer.js"
import { ok } from "./support/sessions.js"

const committed = (file: string): unknown =>
  JSON.parse(readFileSync(fileURLToPath(new URL(`../docs/schemas/${file}`, import.meta.url)), "utf8"))

const write = (file: string, text: string) => {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

describe("alisio config (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let sandbox: CliSandbox | undefined
  const setup = async (replies: ReadonlyArray<Reply> = []) => {
    server = await startOpenAiServer({ replies })
    sandbox = makeSandbox(server.baseURL)
    return { server, sandbox }
  }
  beforeEach(() => {
    server = undefined
    sandbox = undefined
  })
  afterEach(async () => {
    await server?.close()
    sandbox?.cleanup()
  })

  it("CFG-1 alisio config names where each value comes from: default, global file, project file, environment, flag", async () => {
    const { sandbox } = await setup()
    const globalFile = join(sandbox.home, "config.yaml")
    const projectFile = join(sandbox.workspace, ".alisio", "config.yaml")
    write(globalFile, "defaultModel: openai/test-model\nlimits:\n  maxTurns: 50\n  firstTokenRetries: 2\n")
    write(projectFile, "limits:\n  firstTokenRetries: 3\napprovals:\n  write: approve\n")

    const trusted = ok(await sandbox.run(["config", "--json", "--trust-project", "--timeout", "30s"]))
    const report = Schema.decodeUnknownSync(ConfigReport)(JSON.parse(trusted.stdout))
    const source = (path: string) => {
      const setting = report.settings.find((s) => s.path === path)
      return setting === undefined ? undefined : [setting.value, setting.source, setting.detail]
    }
    assert.deepStrictEqual(source("defaultModel"), ["openai/test-model", "global", globalFile])
    assert.deepStrictEqual(source("limits.maxTurns"), [50, "global", globalFile])
    assert.deepStrictEqual(source("limits.firstTokenRetries"), [3, "project", projectFile])
    assert.deepStrictEqual(source("approvals.write"), ["approve", "project", projectFile])
    assert.deepStrictEqual(source("approvals.external"), ["ask", "default", undefined])
    assert.deepStrictEqual(source("limits.streamIdleTimeoutMs"), [120000, "default", undefined])
    assert.deepStrictEqual(source("limits.timeoutMs"), [30000, "flag", "--timeout"])
    assert.deepStrictEqual(source("providers.openai.baseURL"), [
      sandbox.env.OPENAI_BASE_URL,
      "environment",
      "OPENAI_BASE_URL"
    ])
    assert.deepStrictEqual(source("providers.openai.apiKey"), ["<redacted>", "environment", "OPENAI_API_KEY"])
    assert.notInclude(trusted.stdout, "test-key", "secrets never printed")
    assert.deepStrictEqual(report.files.project, { path: projectFile, exists: true, applies: true })

    const untrusted = ok(await sandbox.run(["config"]))
    assert.include(
      untrusted.stderr,
      `${projectFile} is ignored: project configuration applies only with --trust-project`
    )
    const lines = untrusted.stdout.split("\n")
    assert.strictEqual(lines[0], "# global config   ~/home/config.yaml")
    assert.strictEqual(
      lines[1],
      "# project config  ~/workspace/.alisio/config.yaml (ignored: --trust-project applies it)"
    )
    const line = (path: string) => lines.find((text) => text.startsWith(`${path} `))?.replace(/ {2,}/g, " | ")
    assert.strictEqual(line("limits.firstTokenRetries"), "limits.firstTokenRetries | 2 | global file")
    assert.strictEqual(line("approvals.write"), "approvals.write | ask | default")
    assert.strictEqual(
      line("providers.openai.apiKey"),
      "providers.openai.apiKey | <redacted> | environment OPENAI_API_KEY"
    )
    assert.strictEqual(line("defaultModel"), "defaultModel | openai/test-model | global file")

    write(globalFile, "limits:\n  maxTurns: many\n")
    const broken = await sandbox.run(["config"])
    assert.strictEqual(broken.code, 2)
    assert.strictEqual(broken.stderr, `alisio: ${globalFile}:2:13: limits.maxTurns: expected a number, got "many"\n`)
  })

  it("CFG-1 config set changes one setting and keeps the file as written; a wrong key or value changes nothing; get and unset", async () => {
    const { sandbox } = await setup([
      { kind: "tool", id: "c1", name: "ls", args: { path: "." } },
      { kind: "text", text: "a second turn" }
    ])
    const globalFile = join(sandbox.home, "config.yaml")
    const written = "# mine, keep me\ndefaultModel: openai/test-model # and me\n"
    write(globalFile, written)
    const refused = async (args: ReadonlyArray<string>) => {
      const before = readFileSync(globalFile, "utf8")
      const result = await sandbox.run(["config", ...args])
      assert.strictEqual(result.code, 2, result.stderr)
      assert.strictEqual(readFileSync(globalFile, "utf8"), before, "the file is unchanged")
      return result.stderr
    }

    assert.strictEqual(
      await refused(["set", "limits.maxTurn", "5"]),
      "alisio: limits.maxTurn is not a setting of config.yaml (did you mean limits.maxTurns?); `alisio config` lists them\n"
    )
    assert.strictEqual(
      await refused(["set", "limits.maxTurns", "many"]),
      `alisio: limits.maxTurns: expected a number, got "many" (${globalFile} is unchanged)\n`
    )
    assert.include(await refused(["set", "mcpServers.docs.comand", "node"]), "did you mean mcpServers.docs.command?")
    // YAML that reads with a warning (an unknown tag) is taken as the text it is, and said nothing of.
    assert.strictEqual(
      await refused(["set", "defaultModel", "!tag openai/x"]),
      `alisio: defaultModel: expected "provider/model", e.g. "openai/gpt-4o", got "!tag openai/x" (${globalFile} is unchanged)\n`
    )

    const set = ok(await sandbox.run(["config", "set", "limits.maxTurns", "1"]))
    assert.strictEqual(set.stderr, "alisio: limits.maxTurns = 1 in ~/home/config.yaml\n")
    // A setting in milliseconds takes a duration as --timeout does, and is written as milliseconds.
    const timeout = ok(await sandbox.run(["config", "set", "limits.timeoutMs", "2m"]))
    assert.strictEqual(timeout.stderr, "alisio: limits.timeoutMs = 120000 (2m) in ~/home/config.yaml\n")
    assert.strictEqual(ok(await sandbox.run(["config", "get", "limits.timeoutMs"])).stdout, "120000\n")
    assert.include(
      await refused(["set", "limits.timeoutMs", "soon"]),
      'limits.timeoutMs: expected a number, got "soon"'
    )
    ok(await sandbox.run(["config", "unset", "limits.timeoutMs"]))
    ok(await sandbox.run(["config", "set", "providers.openai.apiKey", "sk-secret"]))
    assert.include(
      await refused(["set", "mcpServers.docs.args", "[--stdio, -v]"]),
      'mcpServers.docs: required key "command" is missing'
    )
    ok(await sandbox.run(["config", "set", "mcpServers.docs.command", "node"]))
    ok(await sandbox.run(["config", "set", "mcpServers.docs.args", "[--stdio, -v]"]))
    const secret = ok(await sandbox.run(["config", "set", "providers.openai.headers", "{X-Team: core}"]))
    assert.notInclude(secret.stderr, "sk-secret")
    assert.strictEqual(
      readFileSync(globalFile, "utf8"),
      `${written}limits:\n  maxTurns: 1\nproviders:\n  openai:\n    apiKey: sk-secret\n    headers:\n      X-Team: core\nmcpServers:\n  docs:\n    command: node\n    args:\n      - --stdio\n      - -v\n`
    )
    ok(await sandbox.run(["config", "unset", "mcpServers.docs"]))

    assert.strictEqual(ok(await sandbox.run(["config", "get", "limits.maxTurns"])).stdout, "1\n")
    assert.strictEqual(ok(await sandbox.run(["config", "get", "approvals.write"])).stdout, "ask\n", "a default")
    assert.match(ok(await sandbox.run(["config", "get", "limits"])).stdout, /^limits\.maxTurns +1 +global file$/m)
    const unset = await sandbox.run(["config", "get", "limits.maxOutputTokens"])
    assert.strictEqual(unset.code, 1)
    assert.include(unset.stderr, "limits.maxOutputTokens is not set")

    // The setting applies: one turn, then the run stops.
    const run = await sandbox.run(["run", "--json", "list the files"])
    assert.include(run.stdout, '"type":"turns_exceeded"')
    assert.notInclude(run.stdout, "a second turn")

    const removed = ok(await sandbox.run(["config", "unset", "limits.maxTurns"]))
    assert.strictEqual(removed.stderr, "alisio: limits.maxTurns removed from ~/home/config.yaml\n")
    assert.notInclude(readFileSync(globalFile, "utf8"), "limits:", "a mapping left empty goes too")
    assert.strictEqual(ok(await sandbox.run(["config", "get", "limits.maxTurns"])).stdout, "100\n")
    assert.include(ok(await sandbox.run(["config", "unset", "limits.maxTurns"])).stderr, "was not set")

    const nowhere = await sandbox.run(["config", "set", "--project", "--cwd", "gone", "approvals.write", "approve"])
    assert.strictEqual(nowhere.code, 2)
    assert.strictEqual(nowhere.stderr, "alisio: --cwd gone: no such folder\n")
    assert.isFalse(existsSync(join(sandbox.workspace, "gone")), "no folder is made for it")
    const project = ok(await sandbox.run(["config", "set", "--project", "approvals.write", "approve"]))
    assert.include(project.stderr, "applies with --trust-project")
    assert.strictEqual(
      readFileSync(join(sandbox.workspace, ".alisio", "config.yaml"), "utf8"),
      "approvals:\n  write: approve\n"
    )
  }, 90_000)

  it("CFG-1 config set, unset and models use keep flow-style YAML and every untouched setting byte for byte", async () => {
    const { sandbox } = await setup()
    const file = join(sandbox.home, "config.yaml")
    const untouched = [
      "# my settings, as I like them\n",
      "plugins: [./plugins/a, ./plugins/b]   # mine\n",
      "builtinPlugins:\n    memory: {enabled: false}\n    subagents: { enabled: true }\n",
      "mcpServers: {gh: {command: gh, args: [mcp, --stdio]}}\n",
      "providers:\n    local: {baseURL: 'http://127.0.0.1:1/v1', models: {qwen3-coder: {contextWindow: 32768}, deepseek-coder-v2-lite-instruct: {maxOutputTokens: 8192}}}\n"
    ]
    const limits = "limits: {maxTurns: 5, timeoutMs: 60000}\n"
    write(file, `${untouched[0]}${untouched[1]}${limits}${untouched[2]}${untouched[3]}${untouched[4]}`)
    const keeps = (what: string) => {
      const text = readFileSync(file, "utf8")
      for (const part of untouched) assert.include(text, part, `${what}:\n${text}`)
      return text
    }

    ok(await sandbox.run(["config", "set", "limits.maxTurns", "9"]), "config set")
    assert.include(keeps("config set"), "limits: {maxTurns: 9, timeoutMs: 60000}\n")
    ok(await sandbox.run(["config", "set", "defaultModel", "openai/test-model"]), "config set defaultModel")
    assert.isTrue(keeps("a new key").endsWith("{maxOutputTokens: 8192}}}\ndefaultModel: openai/test-model\n"))
    ok(await sandbox.run(["models", "use", "openai/test-model"]), "models use")
    ok(await sandbox.run(["config", "unset", "limits.timeoutMs"]), "config unset")
    assert.include(keeps("config unset"), "limits: {maxTurns: 9}\n")
    ok(await sandbox.run(["config", "unset", "limits.maxTurns"]), "config unset of the last")
    assert.strictEqual(
      keeps("the last limit unset"),
      `${untouched.join("")}defaultModel: openai/test-model\n`,
      "nothing but the edits changed"
    )
  })

  it("CFG-1 alisio config path: the files, whether they exist, and whether the project's applies", async () => {
    const { sandbox } = await setup()
    const text = ok(await sandbox.run(["config", "path"])).stdout
    assert.strictEqual(
      text,
      [
        `global   ${join(sandbox.home, "config.yaml")}  (not found)`,
        `project  ${join(sandbox.workspace, ".alisio", "config.yaml")}  (not found)`,
        `state    ${join(sandbox.home, "state")}`,
        ""
      ].join("\n")
    )
    write(join(sandbox.workspace, ".alisio", "config.yaml"), "limits: { maxTurns: 5 }\n")
    const decode = Schema.decodeUnknownSync(ConfigPaths)
    const ignored = decode(JSON.parse(ok(await sandbox.run(["config", "path", "--json"])).stdout))
    assert.deepStrictEqual([ignored.project.exists, ignored.project.applies], [true, false])
    const trusted = decode(JSON.parse(ok(await sandbox.run(["config", "path", "--json", "--trust-project"])).stdout))
    assert.deepStrictEqual([trusted.project.exists, trusted.project.applies], [true, true])
    assert.include(ok(await sandbox.run(["config", "path"])).stdout, "(ignored: --trust-project applies it)")
  })

  it("CFG-1 alisio config schema prints the committed JSON Schema of config.yaml, a valid draft-07 schema", async () => {
    const { sandbox } = await setup()
    const printed = JSON.parse(ok(await sandbox.run(["config", "schema"])).stdout) as Record<string, unknown>
    assert.deepStrictEqual(printed, committed("config.schema.json"))
    assert.strictEqual(printed.$schema, "http://json-schema.org/draft-07/schema#")
    const validate = compileSchema(printed)
    assert.isTrue(validate({ defaultModel: "openai/test-model", limits: { maxTurns: 5 } }))
    assert.isFalse(validate({ limits: { maxTurns: -1 } }))
  })

  it("EV-1 alisio events schema prints the committed schema of run events; every line of run --json validates", async () => {
    const { sandbox } = await setup([
      { kind: "tool", id: "call_1", name: "ls", args: { path: "." } },
      { kind: "text", text: "listed", chunks: 3 }
    ])
    const printed = JSON.parse(ok(await sandbox.run(["events", "schema"])).stdout) as unknown
    assert.deepStrictEqual(printed, committed("run-event.schema.json"))
    const validate = compileSchema(printed)
    const run = ok(await sandbox.run(["run", "--json", "-m", "openai/test-model", "list the files"]))
    const lines = run.stdout.split("\n").filter((line) => line !== "")
    assert.isAbove(lines.length, 5)
    for (const line of lines) assert.isTrue(validate(JSON.parse(line)), `${line}: ${JSON.stringify(validate.errors)}`)
  })
})
