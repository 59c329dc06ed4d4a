// End-to-end: MCP servers in the built `alisio` (MCP-1): the SDK fixture server and the reference
// "everything" server from npm, a pasted Claude Code block, `mcp list|get|add|remove`, project
// trust, failures, and signals during a call (no orphan process).

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { decodeRunEvent, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { type CliSandbox, cliBin, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, type Reply, startOpenAiServer } from "./support/openaiServer.js"

const fixture = fileURLToPath(new URL("../packages/runtime/test/fixtures/mcp/server.mjs", import.meta.url))
// The reference server as npm installs it: its bin, which runs it with node.
const everything = fileURLToPath(new URL("../node_modules/.bin/mcp-server-everything", import.meta.url))

const parseJsonl = (stdout: string): ReadonlyArray<KnownRunEvent> =>
  stdout
    .trim()
    .split("\n")
    .filter((line) => line !== "")
    .flatMap((line) => {
      const decoded = decodeRunEvent(JSON.parse(line))
      return Either.isRight(decoded) && decoded.right._tag === "Known" ? [decoded.right.event] : []
    })

const ofType = <K extends KnownRunEvent["type"]>(events: ReadonlyArray<KnownRunEvent>, type: K) =>
  events.filter((event): event is Extract<KnownRunEvent, { type: K }> => event.type === type)

const trace = (dir: string, file: string): ReadonlyArray<string> =>
  existsSync(join(dir, file))
    ? readFileSync(join(dir, file), "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : []

/** Whether a process runs; a zombie nobody reaps (PID 1 in some containers) counts as gone. */
const running = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

const waitUntil = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms
  while (!check() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 25))
  return check()
}

// What a Claude Code user has in ~/.claude.json or a project's .mcp.json, pasted as it is into
// config.yaml (JSON is YAML), below a comment of their own.
const pastedConfig = (workspace: string) => `# Alisio settings
# The block below comes straight from Claude Code.
"mcpServers": {
    "fixture": {
      "type": "stdio",
      "command": "node",
      "args": ["${fixture}"],
      "env": { "MCP_FIXTURE_DIR": "${workspace}" }
    },
    "everything": {
      "command": "${everything}",
      "args": ["stdio"]
    }
  }
`

describe("MCP servers (end to end)", () => {
  let server: OpenAiTestServer | undefined
  const chats = () => server!.requests.filter((request) => request.path.endsWith("/chat/completions"))
  let sandbox: CliSandbox | undefined
  const setup = async (replies: ReadonlyArray<Reply>, config?: (workspace: string) => string) => {
    server = await startOpenAiServer({ replies })
    sandbox = makeSandbox(server.baseURL)
    mkdirSync(sandbox.home, { recursive: true })
    if (config !== undefined) writeFileSync(join(sandbox.home, "config.yaml"), config(sandbox.workspace))
    return sandbox
  }
  afterEach(async () => {
    // A failed test must not leave its servers behind.
    for (const file of ["server.pid", "child.pid"]) {
      for (const pid of sandbox === undefined ? [] : trace(sandbox.workspace, file)) {
        try {
          process.kill(Number(pid), "SIGKILL")
        } catch {
          // Already gone, as it should be.
        }
      }
    }
    await server?.close()
    sandbox?.cleanup()
    server = undefined
    sandbox = undefined
  })

  it("MCP-1 a pasted Claude Code mcpServers block: the tools appear in `alisio mcp list` and work in a run", async () => {
    const cli = await setup(
      [
        { kind: "tool", id: "call_1", name: "mcp__fixture__echo", args: { text: "pasted" } },
        { kind: "tool", id: "call_2", name: "mcp__everything__get-sum", args: { a: 2, b: 3 } },
        { kind: "text", text: "both answered" }
      ],
      pastedConfig
    )
    const listed = await cli.run(["mcp", "list"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.match(listed.stdout, /^fixture\s+stdio\s+connected\s+11 tools\s/m)
    assert.match(listed.stdout, /^everything\s+stdio\s+connected\s+\d+ tools\s/m)

    const result = await cli.run(["run", "--json", "-m", "openai/test-model", "use the servers"])
    assert.strictEqual(result.code, 0, result.stderr)
    const events = parseJsonl(result.stdout)
    assert.deepStrictEqual(
      ofType(events, "tool_call_completed").map((event) => [event.data.name, event.data.status, event.data.result]),
      [
        ["mcp__fixture__echo", "completed", "echo: pasted"],
        ["mcp__everything__get-sum", "completed", "The sum of 2 and 3 is 5."]
      ]
    )
    assert.strictEqual(ofType(events, "run_completed")[0]?.data.text, "both answered")
    // The model was offered the servers' tools with their own schemas.
    const offered = (chats()[0]!.body.tools ?? []) as ReadonlyArray<{
      readonly function: { readonly name: string; readonly parameters: unknown }
    }>
    const echo = offered.find((tool) => tool.function.name === "mcp__fixture__echo")
    assert.deepStrictEqual(echo?.function.parameters, {
      type: "object",
      properties: { text: { type: "string", description: "What to echo" } },
      required: ["text"]
    })
    assert.notMatch(result.stderr, /fixture server ready/, "a server's stderr goes to its log, not the terminal")
    assert.include(readFileSync(join(cli.home, "state", "mcp", "fixture.log"), "utf8"), "fixture server ready")
  })

  it("MCP-1 a server's escape sequences never reach the terminal through `alisio mcp list` or `mcp get`", async () => {
    const cli = await setup(
      [],
      (workspace) =>
        `mcpServers:\n  fixture:\n    command: node\n    args: ["${fixture}"]\n    env: { MCP_FIXTURE_DIR: "${workspace}", MCP_FIXTURE_HOSTILE: "1" }\n`
    )
    const listed = await cli.run(["mcp", "list"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.match(listed.stdout, /^fixture\s+stdio\s+connected\s+12 tools\s/m)
    const shown = await cli.run(["mcp", "get", "fixture"])
    assert.strictEqual(shown.code, 0, shown.stderr)
    assert.include(shown.stdout, "Clears the screen and sets the title")
    for (const output of [listed.stdout, shown.stdout]) {
      assert.notInclude(output, "\u001b", "no escape sequence")
      assert.notInclude(output, "\u0007", "no bell")
    }
  })

  it('MCP-1 CMD-1 a server\'s prompt is a command: in `alisio commands list`, and `alisio run "/mcp__fixture__greet …"` sends its text', async () => {
    const cli = await setup(
      [{ kind: "text", text: "Hello, Ada!" }],
      (workspace) =>
        `mcpServers:\n  fixture:\n    command: node\n    args: ["${fixture}"]\n    env: { MCP_FIXTURE_DIR: "${workspace}" }\n`
    )
    const listed = await cli.run(["commands", "list"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.match(
      listed.stdout,
      /^\/mcp__fixture__greet <name> \[mood\]\s+mcp\s+Greets someone {2}· MCP server fixture$/m
    )

    const result = await cli.run(["run", "--json", "-m", "openai/test-model", "/mcp__fixture__greet Ada very cheerful"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(ofType(parseJsonl(result.stdout), "run_completed")[0]?.data.text, "Hello, Ada!")
    const sent = chats()[0]!.body.messages as ReadonlyArray<{ readonly role: string; readonly content: unknown }>
    assert.include(
      JSON.stringify(sent.filter((message) => message.role === "user")),
      "Say hello to Ada, very cheerful."
    )

    const missing = await cli.run(["run", "-m", "openai/test-model", "/mcp__fixture__greet"])
    assert.strictEqual(missing.code, 2)
    assert.include(missing.stderr, "/mcp__fixture__greet needs name: give it after the command.")
    assert.strictEqual(chats().length, 1, "no request for a prompt that could not be filled in")
  })

  const fixtureConfig = (workspace: string) =>
    `mcpServers:\n  fixture:\n    command: node\n    args: ["${fixture}"]\n    env: { MCP_FIXTURE_DIR: "${workspace}" }\n`

  it("MCP-1 `alisio run` attaches an @<server>:<uri> resource: the model's request holds its text and image", async () => {
    const cli = await setup([{ kind: "text", text: "42 apples it is" }], fixtureConfig)
    const prompt = "How many apples in @fixture:memo://one? See @fixture:img://pixel. Mail ops@fixture:25 too."
    const result = await cli.run(["run", "--json", "-m", "openai/test-model", prompt])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(ofType(parseJsonl(result.stdout), "run_completed")[0]?.data.text, "42 apples it is")
    const sent = chats()[0]!.body.messages as ReadonlyArray<{ readonly role: string; readonly content: unknown }>
    const user = JSON.stringify(sent.filter((message) => message.role === "user"))
    assert.include(user, JSON.stringify(prompt).slice(1, -1), "the user's text keeps the mentions as written")
    assert.include(user, "[MCP resource memo://one from the server fixture (text/plain)]\\nthe memo's text: 42 apples")
    assert.include(user, "data:image/png;base64,iVBORw0KGgo", "the image resource went as an image")
    assert.notInclude(user, "fixture:25 from the server", "a word that is no server's mention stays text")
  })

  it("MCP-1 an @<server>:<uri> that cannot be read fails the run before any request, one line, nothing stored", async () => {
    const cli = await setup([{ kind: "text", text: "never asked" }], fixtureConfig)
    const result = await cli.run(["run", "--json", "-m", "openai/test-model", "read @fixture:memo://missing please"])
    assert.strictEqual(result.code, 2, result.stderr)
    assert.strictEqual(
      result.stderr,
      "alisio: Cannot attach @fixture:memo://missing: the MCP server fixture refused: Resource memo://missing not found\n"
    )
    assert.strictEqual(result.stdout, "")
    assert.strictEqual(chats().length, 0, "no request reached the model")
    const listed = await cli.run(["sessions", "list", "--all", "--json"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.strictEqual(listed.stdout, "", "no session or run was stored")
  })

  it("MCP-1 the reference everything server from npm: listed, and called through `alisio run --json`", async () => {
    const cli = await setup(
      [
        { kind: "tool", id: "call_1", name: "mcp__everything__echo", args: { message: "from alisio" } },
        { kind: "tool", id: "call_2", name: "mcp__everything__get-tiny-image", args: {} },
        { kind: "text", text: "done" }
      ],
      () => `mcpServers:\n  everything:\n    command: ${everything}\n    args: [stdio]\n`
    )
    const listed = await cli.run(["mcp", "get", "everything", "--json"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    const detail = JSON.parse(listed.stdout) as {
      readonly status: string
      readonly tools: ReadonlyArray<{ readonly name: string; readonly effect: string }>
      readonly prompts: ReadonlyArray<string>
    }
    assert.strictEqual(detail.status, "connected")
    assert.deepStrictEqual(
      detail.tools.find((tool) => tool.name === "mcp__everything__echo"),
      {
        name: "mcp__everything__echo",
        serverName: "echo",
        effect: "read",
        description: "Echoes back the input string"
      } as never
    )
    assert.include(detail.prompts, "mcp__everything__simple-prompt")

    const result = await cli.run(["run", "--json", "-m", "openai/test-model", "echo it"])
    assert.strictEqual(result.code, 0, result.stderr)
    const completed = ofType(parseJsonl(result.stdout), "tool_call_completed")
    assert.deepStrictEqual(
      completed.map((event) => [event.data.status, event.data.result]),
      [
        ["completed", "Echo: from alisio"],
        ["completed", "Here's the image you requested:\n\nThe image above is the MCP logo."]
      ]
    )
    // The image went to the model as an image.
    const third = JSON.stringify(chats()[2]!.body.messages)
    assert.include(third, "data:image/png;base64,")
  })

  it("MCP-1 TL-2 a tool without readOnlyHint: denied without --yes, run with --yes, hidden by --read-only", async () => {
    const cli = await setup(
      [
        { kind: "tool", id: "call_1", name: "mcp__fixture__write_note", args: { note: "no" } },
        { kind: "text", text: "denied" },
        { kind: "tool", id: "call_2", name: "mcp__fixture__write_note", args: { note: "yes" } },
        { kind: "text", text: "written" },
        { kind: "text", text: "read only" }
      ],
      (workspace) =>
        `mcpServers:\n  fixture:\n    command: node\n    args: ["${fixture}"]\n    env: { MCP_FIXTURE_DIR: "${workspace}" }\n`
    )
    const statusOf = (stdout: string) =>
      ofType(parseJsonl(stdout), "tool_call_completed").map((event) => [event.data.name, event.data.status])
    const denied = await cli.run(["run", "--json", "-m", "openai/test-model", "write a note"])
    assert.strictEqual(denied.code, 0, denied.stderr)
    assert.deepStrictEqual(statusOf(denied.stdout), [["mcp__fixture__write_note", "denied"]])
    assert.deepStrictEqual(trace(cli.workspace, "notes.txt"), [])

    const approved = await cli.run(["run", "--json", "--yes", "-m", "openai/test-model", "write a note"])
    assert.strictEqual(approved.code, 0, approved.stderr)
    assert.deepStrictEqual(statusOf(approved.stdout), [["mcp__fixture__write_note", "completed"]])
    assert.deepStrictEqual(trace(cli.workspace, "notes.txt"), ["yes"])

    const readOnly = await cli.run(["run", "--json", "--read-only", "-m", "openai/test-model", "look only"])
    assert.strictEqual(readOnly.code, 0, readOnly.stderr)
    const offered = (
      (chats().at(-1)!.body.tools ?? []) as ReadonlyArray<{ readonly function: { readonly name: string } }>
    ).map((tool) => tool.function.name)
    assert.include(offered, "mcp__fixture__echo")
    assert.notInclude(offered, "mcp__fixture__write_note")
  })

  it("MCP-1 a project's .mcp.json never starts its command without --trust-project", async () => {
    const cli = await setup([
      { kind: "text", text: "untrusted" },
      { kind: "text", text: "trusted" }
    ])
    const marker = join(cli.workspace, "started-by-mcp-json")
    writeFileSync(
      join(cli.workspace, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          project: { command: "node", args: ["-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`] }
        }
      })
    )
    const untrusted = await cli.run(["run", "--json", "-m", "openai/test-model", "hello"])
    assert.strictEqual(untrusted.code, 0, untrusted.stderr)
    assert.isFalse(existsSync(marker), "the project's command did not run")
    assert.include(untrusted.stderr, ".mcp.json is ignored: a project's MCP servers start only with --trust-project")
    const listed = await cli.run(["mcp", "list"])
    assert.isFalse(existsSync(marker), "`mcp list` without trust did not run it either")
    assert.include(listed.stderr, "No MCP servers are configured")

    // The same file with trust: the command runs (it is no MCP server, so it fails to start).
    const trusted = await cli.run(["run", "--json", "--trust-project", "-m", "openai/test-model", "hello"])
    assert.strictEqual(trusted.code, 0, trusted.stderr)
    assert.isTrue(existsSync(marker), "with trust, the command ran")
    const failed = ofType(parseJsonl(trusted.stdout), "mcp_server_failed")
    assert.deepStrictEqual(
      failed.map((event) => [event.data.server, event.data.stage]),
      [["project", "start"]]
    )
  })

  it("MCP-1 a server that cannot start: one stderr line, an mcp_server_failed event, and the run completes", async () => {
    const cli = await setup([{ kind: "text", text: "fine without it" }], () =>
      [
        "mcpServers:",
        "  github:",
        "    command: npx",
        `    env: { GITHUB_TOKEN: '\${ALISIO_TEST_UNSET_TOKEN}' }`,
        ""
      ].join("\n")
    )
    const result = await cli.run(["run", "--json", "-m", "openai/test-model", "hello"])
    assert.strictEqual(result.code, 0, result.stderr)
    const lines = result.stderr.split("\n").filter((line) => line.includes("MCP server"))
    assert.deepStrictEqual(lines, [
      `alisio: warning: MCP server github did not start: \${ALISIO_TEST_UNSET_TOKEN} is not set: set it in the environment, or give a default as \${NAME:-value}`
    ])
    const events = parseJsonl(result.stdout)
    assert.strictEqual(ofType(events, "mcp_server_failed")[0]?.data.server, "github")
    assert.strictEqual(ofType(events, "run_completed")[0]?.data.text, "fine without it")
  })

  it("MCP-1 --version, --help and sessions never start a server", async () => {
    const cli = await setup([], (workspace) =>
      [
        "mcpServers:",
        "  eager:",
        "    command: node",
        `    args: ["-e", "require('fs').writeFileSync('${join(workspace, "started")}', '')"]`,
        ""
      ].join("\n")
    )
    for (const args of [["--version"], ["--help"], ["run", "--help"], ["sessions", "list"], ["mcp", "--help"]]) {
      const result = await cli.run(args)
      assert.strictEqual(result.code, 0, `${args.join(" ")}: ${result.stderr}`)
    }
    assert.isFalse(existsSync(join(cli.workspace, "started")))
  })

  it("MCP-1 `alisio run`'s build holds none of the MCP SDK: it is in a file of its own, without Effect", () => {
    // Its text would be read and held by every run, server or not. esbuild marks where each
    // bundled module starts with a comment naming its path.
    const bundled = (file: string) =>
      new Set(
        Array.from(
          readFileSync(join(dirname(cliBin), file), "latin1").matchAll(
            /^\/\/ [./]*node_modules\/\.pnpm\/([^/@]+|@[^/+]+\+[^/@]+)@/gm
          ),
          (match) => match[1] ?? ""
        )
      )
    const thirdParty = [
      "@modelcontextprotocol+sdk",
      "zod",
      "zod-to-json-schema",
      "ajv",
      "ajv-formats",
      "fast-uri",
      "eventsource"
    ]
    const run = bundled("run.cjs")
    assert.isTrue(run.has("effect"), "the markers are read")
    assert.deepStrictEqual(
      thirdParty.filter((name) => run.has(name)),
      []
    )
    const mcp = bundled("run-mcp.cjs")
    assert.includeMembers([...mcp], thirdParty)
    assert.deepStrictEqual(
      [...mcp].filter((name) => name === "effect" || name.startsWith("@effect+")),
      []
    )
  })

  it("MCP-1 the MCP SDK is never loaded by --version or a run without servers; a run with one loads it", async () => {
    const cli = await setup([
      { kind: "text", text: "plain" },
      { kind: "text", text: "with a server" }
    ])
    // `alisio run` is one file (its build), so which of its modules ran is not a question of files
    // loaded: zod, which only the SDK brings, marks `globalThis` when its core is evaluated. A
    // preload notes at exit whether it was.
    const marks = join(cli.workspace, "zod.txt")
    const probe = join(cli.workspace, "probe.cjs")
    writeFileSync(
      probe,
      `process.on("exit", () => require("node:fs").appendFileSync(${JSON.stringify(marks)}, String(globalThis.__zod_globalConfig !== undefined) + "\\n"))\n`
    )
    // Added to what the suite runs with (on Node 24 in CI, a preload that picks its SQLite build).
    const env = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${probe}`.trim() }
    const sdkLoaded = () => {
      const seen = trace(cli.workspace, "zod.txt")
      rmSync(marks, { force: true })
      assert.strictEqual(seen.length, 1, "the probe saw the CLI exit")
      return seen[0] === "true"
    }
    const version = await cli.run(["--version"], { env })
    assert.strictEqual(version.code, 0, version.stderr)
    assert.isFalse(sdkLoaded(), "--version")
    const plain = await cli.run(["run", "-m", "openai/test-model", "hello"], { env })
    assert.strictEqual(plain.code, 0, plain.stderr)
    assert.isFalse(sdkLoaded(), "a run without MCP servers")
    writeFileSync(
      join(cli.home, "config.yaml"),
      `mcpServers:\n  fixture:\n    command: node\n    args: ["${fixture}"]\n    env: { MCP_FIXTURE_DIR: "${cli.workspace}" }\n`
    )
    const withServer = await cli.run(["run", "-m", "openai/test-model", "hello"], { env })
    assert.strictEqual(withServer.code, 0, withServer.stderr)
    assert.isTrue(sdkLoaded(), "a run with a server loads the SDK")
  })

  it("MCP-1 `mcp add` and `mcp remove` edit the global config.yaml, comments kept; a failed server makes `mcp list` exit 1", async () => {
    const cli = await setup([], () => "# mine, keep me\ndefaultModel: openai/test-model # and me\n")
    const added = await cli.run(["mcp", "add", "fixture", "-e", `MCP_FIXTURE_DIR=\${HOME}`, "--", "node", fixture])
    assert.strictEqual(added.code, 0, added.stderr)
    const remote = await cli.run([
      "mcp",
      "add",
      "docs",
      "--url",
      "https://127.0.0.1:9/mcp",
      "--transport",
      "sse",
      "--header",
      `Authorization: Bearer \${DOCS_TOKEN}`
    ])
    assert.strictEqual(remote.code, 0, remote.stderr)
    const file = join(cli.home, "config.yaml")
    assert.strictEqual(
      readFileSync(file, "utf8"),
      [
        "# mine, keep me",
        "defaultModel: openai/test-model # and me",
        "mcpServers:",
        "  fixture:",
        "    command: node",
        "    args:",
        `      - ${fixture}`,
        "    env:",
        `      MCP_FIXTURE_DIR: \${HOME}`,
        "  docs:",
        "    type: sse",
        "    url: https://127.0.0.1:9/mcp",
        "    headers:",
        `      Authorization: Bearer \${DOCS_TOKEN}`,
        ""
      ].join("\n")
    )
    const listed = await cli.run(["mcp", "list", "--json"])
    assert.strictEqual(listed.code, 1, "a server failed to start: a script checking `mcp list` must see it")
    const reports = listed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { readonly name: string; readonly status: string; readonly error?: string })
    assert.deepStrictEqual(
      reports.map((report) => [report.name, report.status]),
      [
        ["fixture", "connected"],
        ["docs", "failed"]
      ]
    )
    const shown = await cli.run(["mcp", "get", "docs"])
    assert.include(shown.stdout, `header     Authorization: Bearer \${DOCS_TOKEN}`)
    assert.strictEqual(shown.code, 1)
    const working = await cli.run(["mcp", "get", "fixture"])
    assert.strictEqual(working.code, 0, working.stderr)
    const again = await cli.run(["mcp", "add", "fixture", "--", "node"])
    assert.strictEqual(again.code, 2)
    assert.include(again.stderr, "already in")
    for (const url of ["not a url", "ftp://127.0.0.1/mcp"]) {
      const bad = await cli.run(["mcp", "add", "other", "--url", url])
      assert.strictEqual(bad.code, 2, url)
      assert.include(bad.stderr, `--url ${url} is not an http:// or https:// address`)
    }
    assert.notInclude(readFileSync(file, "utf8"), "other:", "nothing was added")
    const removed = await cli.run(["mcp", "remove", "docs"])
    assert.strictEqual(removed.code, 0, removed.stderr)
    await cli.run(["mcp", "remove", "fixture"])
    assert.strictEqual(readFileSync(file, "utf8"), "# mine, keep me\ndefaultModel: openai/test-model # and me\n")
  }, 90_000)

  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    it(`MCP-1 CLI-2 ${signal} during a slow MCP call: run cancelled, the server told, no orphan process`, async () => {
      const cli = await setup(
        [
          { kind: "tool", id: "call_1", name: "mcp__fixture__slow", args: { child: true } },
          { kind: "text", text: "never reached" }
        ],
        (workspace) =>
          `mcpServers:\n  fixture:\n    command: node\n    args: ["${fixture}"]\n    env: { MCP_FIXTURE_DIR: "${workspace}" }\n`
      )
      const running_ = cli.start(["run", "--json", "-m", "openai/test-model", "wait for it"])
      assert.isTrue(
        await waitUntil(
          () => trace(cli.workspace, "slow.txt").length > 0 && trace(cli.workspace, "child.pid").length > 0
        ),
        `the slow call began: ${running_.stderr()}`
      )
      const pids = [...trace(cli.workspace, "server.pid"), ...trace(cli.workspace, "child.pid")].map(Number)
      for (const pid of pids) assert.isTrue(running(pid), `${pid} runs before the signal`)
      running_.child.kill(signal)
      const result = await running_.done
      assert.strictEqual(result.code, 130, result.stderr)
      const events = parseJsonl(result.stdout)
      assert.strictEqual(events.at(-1)?.type, "run_cancelled")
      assert.deepStrictEqual(
        trace(cli.workspace, "cancelled.txt"),
        trace(cli.workspace, "slow.txt").map((line) => line.replace("started ", "")),
        "the server got notifications/cancelled for the call"
      )
      for (const pid of pids) assert.isTrue(await waitUntil(() => !running(pid), 3_000), `pid ${pid} is gone`)
    })
  }
})
