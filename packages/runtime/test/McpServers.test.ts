// MCP servers through their life, on the real SDK fixture server (no mocks): registration through
// ToolOrigins, failures as diagnostics, restarts, ${VAR} expansion, filters, logs, prompts, close.
import { readFileSync, statSync } from "node:fs"
import { ToolCallId } from "@alisio/domain/Ids"
import { RUNNING_LIMIT_BYTES } from "@alisio/runtime/internal/mcp/logFile"
import { McpServers } from "@alisio/runtime/McpServers"
import { Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { fixtureServer, mcpWorld, running, stdioFixture, traceOf } from "./helpers/mcp.js"

const toolsNamed = (prefix: string) =>
  Effect.map(
    Effect.flatMap(Tools, (tools) => tools.entries),
    (entries) => entries.filter((entry) => entry.tool.name.startsWith(prefix))
  )

/** Calls a registered tool as a run would, outside a run: arguments as the model sent them. */
const callTool = (name: string, args: unknown) =>
  Effect.gen(function* () {
    const tools = yield* Tools
    const tool = (yield* tools.all).find((each) => each.name === name)
    if (tool === undefined) return yield* Effect.dieMessage(`no tool ${name}`)
    const progress: Array<string> = []
    const result = yield* Effect.either(
      tool.execute(args, {
        sessionId: "s" as never,
        runId: "r" as never,
        toolCallId: ToolCallId.make("c1"),
        cwd: "/",
        readOnly: false,
        progress: (text) => Effect.sync(() => void progress.push(text)),
        approveExternalPath: () => Effect.void,
        askUser: () => Effect.succeed("")
      }) as Effect.Effect<
        { readonly content: ReadonlyArray<{ readonly _tag: string; readonly text?: string }> },
        { readonly message: string }
      >
    )
    return { result, progress }
  })

const textOf = (
  result: Either.Either<
    { readonly content: ReadonlyArray<{ readonly _tag: string; readonly text?: string }> },
    { readonly message: string }
  >
) =>
  Either.match(result, {
    onLeft: (error) => `error: ${error.message}`,
    onRight: (ok) => ok.content.map((part) => part.text ?? `[${part._tag}]`).join("")
  })

describe("McpServers", () => {
  it.scopedLive("MCP-1 a stdio server's tools are registered as mcp__<server>__<tool>, effect from readOnlyHint", () =>
    Effect.gen(function* () {
      const { context } = yield* mcpWorld({ fixture: stdioFixture() })
      yield* Effect.gen(function* () {
        const tools = yield* Tools
        assert.deepStrictEqual(yield* toolsNamed("mcp__"), [], "nothing starts before a run needs tools")
        const mcp = yield* McpServers
        yield* mcp.ready
        const entries = yield* toolsNamed("mcp__fixture__")
        const byName = new Map(entries.map((entry) => [entry.tool.name, entry]))
        assert.strictEqual(byName.get("mcp__fixture__echo")?.tool.effect, "read")
        assert.strictEqual(byName.get("mcp__fixture__write_note")?.tool.effect, "external")
        assert.deepStrictEqual(byName.get("mcp__fixture__echo")?.origin, { _tag: "McpServer", server: "fixture" })
        // MCP allows dots in names; models do not: they become "_".
        assert.isTrue(byName.has("mcp__fixture__dotted_name"))
        assert.deepStrictEqual(byName.get("mcp__fixture__echo")?.tool.parameters, {
          type: "object",
          properties: { text: { type: "string", description: "What to echo" } },
          required: ["text"]
        })
        const [report] = yield* mcp.status
        assert.strictEqual(report?.status, "connected")
        assert.strictEqual(report?.tools.length, entries.length)
        assert.isTrue((yield* tools.all).length >= entries.length)
      }).pipe(Effect.provide(context))
    })
  )

  it.scopedLive("MCP-1 servers start concurrently, once, and each call reaches its own server", () =>
    Effect.gen(function* () {
      const { context, world } = yield* mcpWorld({ one: stdioFixture(), two: stdioFixture() })
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        yield* Effect.all([mcp.ready, mcp.ready, mcp.ready], { concurrency: "unbounded" })
        yield* mcp.ready
        assert.strictEqual(world.trace("starts.txt").length, 2, "each server started once")
        assert.strictEqual(textOf((yield* callTool("mcp__one__echo", { text: "a" })).result), "echo: a")
        assert.strictEqual(textOf((yield* callTool("mcp__two__echo", { text: "b" })).result), "echo: b")
      }).pipe(Effect.provide(context))
    })
  )

  it.scopedLive(
    "MCP-1 two servers whose names become one (a.b, a_b): the first written is kept, the other refused, said once and listed as failed",
    () =>
      Effect.gen(function* () {
        const { context, world } = yield* mcpWorld({
          "a.b": stdioFixture(),
          a_b: stdioFixture(),
          "A-B": stdioFixture()
        })
        yield* Effect.gen(function* () {
          const mcp = yield* McpServers
          yield* mcp.ready
          assert.strictEqual(world.trace("starts.txt").length, 2, "a.b and A-B started, a_b did not")
          assert.isAbove((yield* toolsNamed("mcp__a_b__")).length, 0)
          assert.deepStrictEqual(world.diagnostics, [
            "MCP server a_b did not start: its name and a.b's both give tools named mcp__a_b__*, so only a.b starts: rename one of them in mcpServers"
          ])
          assert.deepStrictEqual(
            (yield* mcp.status).map((report) => [report.name, report.status]),
            [
              ["a.b", "connected"],
              ["a_b", "failed"],
              ["A-B", "connected"]
            ]
          )
          const refused = (yield* mcp.status)[1]!
          assert.match(refused.error ?? "", /only a\.b starts: rename one of them/)
          assert.deepStrictEqual(refused.tools, [])
        }).pipe(Effect.provide(context))
      })
  )

  it.scopedLive("MCP-1 a server that cannot start is a diagnostic and its tools are absent; the others work", () =>
    Effect.gen(function* () {
      const { context, world } = yield* mcpWorld({
        missing: { type: "stdio", command: "alisio-no-such-mcp-server" },
        broken: {
          type: "stdio",
          command: process.execPath,
          args: ["-e", "process.stderr.write('GITHUB_TOKEN is required\\n'); process.exit(2)"]
        },
        fixture: stdioFixture()
      })
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        yield* mcp.ready
        assert.deepStrictEqual(yield* toolsNamed("mcp__missing"), [])
        assert.deepStrictEqual(yield* toolsNamed("mcp__broken"), [])
        assert.isAbove((yield* toolsNamed("mcp__fixture")).length, 0)
        const failures = yield* mcp.failures
        const byServer = new Map(failures.map((failure) => [failure.server, failure]))
        assert.include(
          byServer.get("missing")?.message ?? "",
          'cannot run "alisio-no-such-mcp-server": no such command'
        )
        assert.strictEqual(byServer.get("broken")?.stage, "start")
        assert.include(
          byServer.get("broken")?.message ?? "",
          "exited with code 2 before answering: GITHUB_TOKEN is required"
        )
        assert.strictEqual(world.diagnostics.length, 2, world.diagnostics.join("\n"))
        assert.match(
          world.diagnostics.join("\n"),
          /MCP server broken did not start: exited with code 2 .*\(log: .*broken\.log\)/
        )
        const status = new Map((yield* mcp.status).map((report) => [report.name, report]))
        assert.strictEqual(status.get("missing")?.status, "failed")
        assert.strictEqual(status.get("fixture")?.status, "connected")
        // A failed server is not tried again at every turn.
        yield* mcp.ready
        assert.strictEqual((yield* mcp.failures).length, 2)
      }).pipe(Effect.provide(context))
    })
  )

  it.live(
    "MCP-1 a server that does not answer within its start-up timeout fails naming the way out (each run waits for it), and its process is stopped",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { context, world } = yield* mcpWorld({
            mute: {
              type: "stdio",
              command: process.execPath,
              args: [
                "-e",
                "require('fs').writeFileSync(process.env.MCP_FIXTURE_DIR + '/mute.pid', String(process.pid)); setInterval(() => {}, 1000)"
              ],
              env: { MCP_FIXTURE_DIR: `\${MCP_FIXTURE_DIR}` },
              timeout: { startup: "300ms" }
            }
          })
          yield* Effect.gen(function* () {
            const mcp = yield* McpServers
            yield* mcp.ready
            const [failure] = yield* mcp.failures
            assert.strictEqual(
              failure?.message,
              "it did not answer within 300ms, which each run waits for it; check its command and log, or set enabled: false (or a shorter timeout) in its settings"
            )
            const pid = Number(world.trace("mute.pid")[0])
            assert.isFalse(running(pid), "the silent server was stopped")
          }).pipe(Effect.provide(context))
        })
      )
  )

  it.scopedLive(
    `MCP-1 \${VAR} and \${VAR:-default} expand in env and args; a variable without a value stops the start`,
    () =>
      Effect.gen(function* () {
        const { context, world } = yield* mcpWorld(
          {
            expanded: stdioFixture({
              args: [`\${FIXTURE_PATH}`],
              env: { GREETING: `\${FIXTURE_GREETING}`, FALLBACK: `\${FIXTURE_UNSET:-plan b}` }
            }),
            needs: stdioFixture({ env: { TOKEN: `\${FIXTURE_TOKEN_UNSET}` } })
          },
          { env: { FIXTURE_GREETING: "hello", FIXTURE_PATH: fixtureServer } }
        )
        yield* Effect.gen(function* () {
          const mcp = yield* McpServers
          yield* mcp.ready
          assert.strictEqual(
            textOf((yield* callTool("mcp__expanded__env", { name: "GREETING" })).result),
            "GREETING=hello"
          )
          assert.strictEqual(
            textOf((yield* callTool("mcp__expanded__env", { name: "FALLBACK" })).result),
            "FALLBACK=plan b"
          )
          // Not inherited unless configured: a key in Alisio's environment stays out of servers.
          assert.strictEqual(
            textOf((yield* callTool("mcp__expanded__env", { name: "FIXTURE_GREETING" })).result),
            "FIXTURE_GREETING=(unset)"
          )
          const [failure] = yield* mcp.failures
          assert.strictEqual(failure?.server, "needs")
          assert.include(failure?.message ?? "", `\${FIXTURE_TOKEN_UNSET} is not set`)
          assert.strictEqual(world.trace("starts.txt").length, 1, "the server missing a variable was never started")
        }).pipe(Effect.provide(context))
      })
  )

  it.scopedLive("MCP-1 enabled: false, allowedTools and disabledTools", () =>
    Effect.gen(function* () {
      const { context, world } = yield* mcpWorld({
        off: stdioFixture({ enabled: false }),
        only: stdioFixture({ allowedTools: ["echo", "mcp__only__fail"] }),
        less: stdioFixture({ disabledTools: ["write_note", "dotted.name"] })
      })
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        yield* mcp.ready
        assert.strictEqual(world.trace("starts.txt").length, 2)
        assert.deepStrictEqual(yield* toolsNamed("mcp__off"), [])
        assert.deepStrictEqual((yield* toolsNamed("mcp__only__")).map((entry) => entry.tool.name).sort(), [
          "mcp__only__echo",
          "mcp__only__fail"
        ])
        const less = (yield* toolsNamed("mcp__less__")).map((entry) => entry.tool.name)
        assert.notInclude(less, "mcp__less__write_note")
        assert.notInclude(less, "mcp__less__dotted_name")
        assert.include(less, "mcp__less__echo")
        const off = (yield* mcp.status).find((report) => report.name === "off")
        assert.strictEqual(off?.status, "disabled")
      }).pipe(Effect.provide(context))
    })
  )

  it.scopedLive("MCP-1 a server that dies is restarted once on the next call; dying again removes its tools", () =>
    Effect.gen(function* () {
      const { context, world } = yield* mcpWorld({ fixture: stdioFixture() })
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        yield* mcp.ready
        const first = textOf((yield* callTool("mcp__fixture__crash", {})).result)
        assert.match(first, /went away during the call \(it exited with code 3: fixture crashing on purpose\)/)
        yield* Effect.sleep(100)
        const [died] = yield* mcp.failures
        assert.deepStrictEqual([died?.stage, died?.willRestart], ["closed", true])
        assert.isAbove((yield* toolsNamed("mcp__fixture__")).length, 0, "its tools stay for the restart")
        assert.strictEqual(textOf((yield* callTool("mcp__fixture__echo", { text: "again" })).result), "echo: again")
        assert.strictEqual(world.trace("starts.txt").length, 2, "started again once")
        yield* callTool("mcp__fixture__crash", {})
        yield* Effect.sleep(100)
        yield* mcp.ready
        const last = (yield* mcp.failures).at(-1)
        assert.deepStrictEqual([last?.stage, last?.willRestart], ["closed", false])
        assert.deepStrictEqual(yield* toolsNamed("mcp__fixture__"), [], "gone for good")
        assert.strictEqual(world.trace("starts.txt").length, 2, "no third start")
        assert.match(world.diagnostics.join("\n"), /MCP server fixture stopped: .*its tools are no longer offered/)
      }).pipe(Effect.provide(context))
    })
  )

  it.scopedLive("MCP-1 a server's stderr goes to its private log file, not the terminal", () =>
    Effect.gen(function* () {
      const { context, world } = yield* mcpWorld({ fixture: stdioFixture() })
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        yield* mcp.ready
        const [report] = yield* mcp.status
        const log = report!.log!
        assert.strictEqual(log, `${world.logFolder}/fixture.log`)
        assert.include(traceOf(world.logFolder, "fixture.log").join("\n"), "fixture server ready")
        assert.strictEqual(statSync(log).mode & 0o777, 0o600)
        assert.strictEqual(statSync(world.logFolder).mode & 0o777, 0o700)
      }).pipe(Effect.provide(context))
    })
  )

  it.scopedLive("MCP-1 a server writing 30 MB to stderr keeps its log bounded and its tools working", () =>
    Effect.gen(function* () {
      const { context, world } = yield* mcpWorld({ fixture: stdioFixture({ env: { MCP_FIXTURE_STDERR_MB: "30" } }) })
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        yield* mcp.ready
        assert.strictEqual(
          textOf((yield* callTool("mcp__fixture__echo", { text: "still here" })).result),
          "echo: still here"
        )
        const log = `${world.logFolder}/fixture.log`
        assert.isAtMost(statSync(log).size, RUNNING_LIMIT_BYTES)
        assert.isAtMost(statSync(`${log}.1`).size, RUNNING_LIMIT_BYTES)
        const latest = readFileSync(log, "utf8")
        assert.match(latest, /^\[[^\]]+\] the log reached 4 MB: what came before is in fixture\.log\.1$/m)
        assert.include(latest, "fixture flood done", "the latest output is kept")
        assert.strictEqual(statSync(log).mode & 0o777, 0o600)
      }).pipe(Effect.provide(context))
    })
  )

  it.scopedLive("MCP-1 closing stops every server and what it started, in its own session too", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const { context, world } = yield* Scope.extend(mcpWorld({ fixture: stdioFixture() }), scope)
      const pids = yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        yield* mcp.ready
        // A call still running when everything closes, with a grandchild that left the session.
        yield* Effect.fork(callTool("mcp__fixture__slow", { child: true }))
        for (let waited = 0; world.trace("child.pid").length === 0 && waited < 10_000; waited += 20)
          yield* Effect.sleep(20)
        return [Number(world.trace("server.pid")[0]), Number(world.trace("child.pid")[0])]
      }).pipe(Effect.provide(context))
      for (const pid of pids) assert.isTrue(running(pid), `${pid} runs before the close`)
      yield* Scope.close(scope, Exit.void)
      for (const pid of pids) assert.isFalse(running(pid), `${pid} is gone after the close`)
    })
  )

  it.scopedLive("MCP-1 prompts are listed as mcp__<server>__<prompt> and filled in from the command's text", () =>
    Effect.gen(function* () {
      const { context } = yield* mcpWorld({ fixture: stdioFixture() })
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        yield* mcp.ready
        const prompts = yield* mcp.prompts
        assert.deepStrictEqual(prompts, [
          {
            name: "mcp__fixture__greet",
            server: "fixture",
            prompt: "greet",
            description: "Greets someone",
            arguments: [
              { name: "name", description: undefined, required: true },
              { name: "mood", description: undefined, required: false }
            ]
          }
        ])
        const filled = yield* mcp.getPrompt("mcp__fixture__greet", "Ada very cheerful")
        assert.strictEqual(filled.text, "Say hello to Ada, very cheerful.")
        assert.deepStrictEqual(filled.messages, [
          { role: "user", content: [{ _tag: "text", text: "Say hello to Ada, very cheerful." }] }
        ])
        const byName = yield* mcp.getPrompt("mcp__fixture__greet", { name: "Grace" })
        assert.strictEqual(byName.text, "Say hello to Grace.")
        const missing = yield* Effect.flip(mcp.getPrompt("mcp__fixture__greet", ""))
        assert.strictEqual(missing.message, "/mcp__fixture__greet needs name: give it after the command.")
        const unknown = yield* Effect.flip(mcp.getPrompt("mcp__fixture__nope", ""))
        assert.strictEqual(unknown.message, "No MCP server offers a prompt named mcp__fixture__nope.")
      }).pipe(Effect.provide(context))
    })
  )
})
