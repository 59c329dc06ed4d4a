// End-to-end: the configuration as a person sees it with the built `alisio` — the effective
// settings with where each comes from, the files, and the JSON Schemas of config.yaml and of the
// run events (CFG-1, EV-1).

import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
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
