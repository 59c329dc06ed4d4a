// MCP servers that answer carelessly (fixtures/mcp/unruly.mjs, a real process): every call gets
// a bounded, truthful answer at once, never a wait until its timeout (MCP-1).
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { ToolCallId } from "@alisio/domain/Ids"
import type { McpServer } from "@alisio/runtime/Config"
import { McpServers } from "@alisio/runtime/McpServers"
import { Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import { httpFixture, mcpWorld, traceOf } from "./helpers/mcp.js"
import { makeTempDir } from "./helpers/tempDir.js"

const unruly = fileURLToPath(new URL("./fixtures/mcp/unruly.mjs", import.meta.url))
const server = (env: { readonly [name: string]: string } = {}): McpServer => ({
  type: "stdio",
  command: process.execPath,
  args: [unruly],
  env
})

/** Calls a registered tool as a run would; what the model reads of it, as text. */
const call = (name: string, args: unknown = {}) =>
  Effect.gen(function* () {
    const tool = (yield* Effect.flatMap(Tools, (tools) => tools.all)).find((each) => each.name === name)
    if (tool === undefined) return yield* Effect.dieMessage(`no tool ${name}`)
    const result = yield* Effect.either(
      tool.execute(args, {
        sessionId: "s" as never,
        runId: "r" as never,
        toolCallId: ToolCallId.make("c1"),
        cwd: "/",
        readOnly: false,
        progress: () => Effect.void,
        approveExternalPath: () => Effect.void,
        askUser: () => Effect.succeed("")
      }) as Effect.Effect<
        { readonly content: ReadonlyArray<{ readonly _tag: string; readonly text?: string }> },
        { readonly message: string }
      >
    )
    return Either.match(result, {
      onLeft: (error) => `error: ${error.message}`,
      onRight: (ok) => ok.content.map((part) => part.text ?? `[${part._tag}]`).join("|")
    })
  })

describe("MCP servers that answer carelessly", () => {
  it.scopedLive(
    "MCP-1 an answer too large to read, or one the SDK would drop, fails its call at once, saying why",
    () =>
      Effect.gen(function* () {
        // A call that waited for its timeout would fail this test by the test's own.
        const { context } = yield* mcpWorld({ unruly: server() }, { callMs: 600_000 })
        yield* Effect.gen(function* () {
          yield* Effect.flatMap(McpServers, (mcp) => mcp.ready)
          const failed = "error: The MCP server unruly failed the call: "
          assert.strictEqual(
            yield* call("mcp__unruly__oversized_sdk_order"),
            `${failed}its answer is larger than 10 MB, the most Alisio reads of one message`
          )
          assert.strictEqual(
            yield* call("mcp__unruly__oversized_id_first"),
            `${failed}its answer is larger than 10 MB, the most Alisio reads of one message`
          )
          assert.strictEqual(yield* call("mcp__unruly__fine"), "still here", "the lines after it are read")
          assert.strictEqual(
            yield* call("mcp__unruly__null_result"),
            `${failed}its answer is not valid MCP: the result is null, not an object`
          )
          assert.strictEqual(yield* call("mcp__unruly__extra_key"), "with an extra key")
          assert.strictEqual(
            yield* call("mcp__unruly__bad_error"),
            `${failed}its error answer is not valid JSON-RPC (no numeric code and message)`
          )
          assert.strictEqual(
            yield* call("mcp__unruly__code_32000"),
            "error: The MCP server unruly refused the call: quota exceeded",
            "-32000 from a server that is still there is its answer, not the connection closing"
          )
          const endless = yield* call("mcp__unruly__endless_error")
          assert.isTrue(endless.startsWith("error: The MCP server unruly refused the call: EEE"))
          assert.isAtMost(endless.length, 30_200)
          assert.strictEqual(yield* call("mcp__unruly__fine"), "still here")
        }).pipe(Effect.provide(context))
      }),
    60_000
  )

  it.scopedLive("MCP-1 a tool list with tools no model can take: the others are offered, each bad one named", () =>
    Effect.gen(function* () {
      const { context, world } = yield* mcpWorld({
        unruly: server({ UNRULY_MIXED_LIST: "1" }),
        quiet: { ...server({ UNRULY_MIXED_LIST: "1" }), disabledTools: ["string_schema", "no_schema", "bad_required"] }
      })
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        yield* mcp.ready
        const status = new Map((yield* mcp.status).map((report) => [report.name, report]))
        assert.strictEqual(status.get("unruly")?.status, "connected")
        assert.strictEqual(status.get("unruly")?.tools.length, 10)
        assert.strictEqual(
          status.get("unruly")?.error,
          '4 of its tools could not be offered: Its tool "string_schema" cannot be offered: its input schema is of type "string", not "object". Its tool "no_schema" cannot be offered: its input schema is not an object. Its tool #13 has no name. Its tool "bad_required" cannot be offered: the required of its input schema is not a list of names.'
        )
        assert.strictEqual(status.get("quiet")?.error, "1 of its tools could not be offered: Its tool #13 has no name.")
        assert.deepStrictEqual(world.diagnostics.map((line) => line.slice(0, 60)).sort(), [
          "MCP server quiet: 1 of its tools could not be offered: Its t",
          "MCP server unruly: 4 of its tools could not be offered: Its "
        ])
        assert.strictEqual(yield* call("mcp__unruly__fine"), "still here")
      }).pipe(Effect.provide(context))
    })
  )

  it.scopedLive(
    "MCP-1 a result with blocks that are not valid MCP keeps the valid ones and says what it left out",
    () =>
      Effect.gen(function* () {
        const { context } = yield* mcpWorld({ unruly: server() })
        yield* Effect.gen(function* () {
          yield* Effect.flatMap(McpServers, (mcp) => mcp.ready)
          assert.strictEqual(
            yield* call("mcp__unruly__bad_image"),
            'before\n\n[an image (image/png) that is not valid base64 was left out]\n\n[an image of type "text/html", which is not an image type, was left out]\n\nafter'
          )
          assert.strictEqual(
            yield* call("mcp__unruly__bad_blocks"),
            '[a content block of type "text" that is not valid MCP was left out]\n\n[a content block that is not valid MCP was left out]\n\n[a content block that is not valid MCP was left out]\n\nkept'
          )
        }).pipe(Effect.provide(context))
      })
  )

  it.scopedLive(
    "MCP-1 a server offering more tools than a model can take offers the first 100, naming the remedy",
    () =>
      Effect.gen(function* () {
        const { context } = yield* mcpWorld({ unruly: server({ UNRULY_MANY: "5000" }) })
        yield* Effect.gen(function* () {
          const mcp = yield* McpServers
          yield* mcp.ready
          const [report] = yield* mcp.status
          assert.strictEqual(report?.tools.length, 100)
          assert.strictEqual(
            report?.error,
            "4910 of its tools could not be offered: It offers 5010 tools, more than the 100 a server may offer (their definitions would fill the model's context): the first 100 are offered; choose the ones you need with allowedTools in its settings."
          )
        }).pipe(Effect.provide(context))
      })
  )

  it.scopedLive(
    "MCP-1 a tool's definition takes a bounded part of the context: a long description is cut, a vast schema left out",
    () =>
      Effect.gen(function* () {
        const { context } = yield* mcpWorld({ unruly: server({ UNRULY_HUGE: "1" }) })
        yield* Effect.gen(function* () {
          const mcp = yield* McpServers
          yield* mcp.ready
          const wordy = (yield* Effect.flatMap(Tools, (tools) => tools.all)).find(
            (tool) => tool.name === "mcp__unruly__wordy"
          )
          assert.strictEqual(wordy?.description, `${"w".repeat(4_000)}… [1996000 characters cut]`)
          const [report] = yield* mcp.status
          assert.strictEqual(
            report?.error,
            `1 of its tools could not be offered: Its tool "vast" cannot be offered: its input schema is 500071 characters long, more than the 30000 a tool's may take.`
          )
        }).pipe(Effect.provide(context))
      })
  )

  it.scopedLive(
    "MCP-1 TL-6 a server's schema never holds the process: a backtracking pattern is stopped, tools sharing an $id keep their own",
    () =>
      Effect.gen(function* () {
        const { context } = yield* mcpWorld({ unruly: server({ UNRULY_SCHEMAS: "1" }) })
        yield* Effect.gen(function* () {
          yield* Effect.flatMap(McpServers, (mcp) => mcp.ready)
          // `(a+)+$` on this string backtracks for longer than the universe has existed.
          assert.strictEqual(
            yield* call("mcp__unruly__backtracking", { a: `${"a".repeat(60)}!` }),
            "error: The arguments for mcp__unruly__backtracking could not be checked against its input schema within 1 s (a pattern or rule of it takes too long on them); call it with other arguments."
          )
          assert.strictEqual(yield* call("mcp__unruly__backtracking", { a: "aaa" }), "matched")
          assert.strictEqual(yield* call("mcp__unruly__same_id_a", { a: 1 }), "a called")
          assert.strictEqual(yield* call("mcp__unruly__same_id_b", { b: 1 }), "b called")
          assert.strictEqual(
            yield* call("mcp__unruly__same_id_b", { a: 1 }),
            "error: Invalid arguments for mcp__unruly__same_id_b: data must have required property 'b'. Call it again with arguments that match its input schema."
          )
        }).pipe(Effect.provide(context))
      })
  )

  it.scopedLive(
    "MCP-1 prompts that cannot be listed cost a server its bad prompts, never its tools, and its report says so",
    () =>
      Effect.gen(function* () {
        const { context, world } = yield* mcpWorld({
          mixed: server({ UNRULY_PROMPTS: "mixed" }),
          missing: server({ UNRULY_PROMPTS: "missing" })
        })
        yield* Effect.gen(function* () {
          const mcp = yield* McpServers
          yield* mcp.ready
          const status = new Map((yield* mcp.status).map((report) => [report.name, report]))
          assert.strictEqual(status.get("mixed")?.status, "connected")
          assert.strictEqual(status.get("missing")?.status, "connected")
          assert.deepStrictEqual(
            (yield* mcp.prompts).map((prompt) => [prompt.name, prompt.arguments.map((argument) => argument.name)]),
            [["mcp__mixed__review", ["file"]]]
          )
          assert.deepStrictEqual(world.diagnostics, [
            "MCP server missing: its prompts could not be listed: MCP error -32601: Method not found"
          ])
          // `mcp list` shows what the diagnostic said (its layer is silent).
          assert.strictEqual(
            status.get("missing")?.error,
            "its prompts could not be listed: MCP error -32601: Method not found"
          )
          assert.strictEqual(status.get("mixed")?.error, undefined)
          assert.strictEqual(yield* call("mcp__missing__fine"), "still here")
        }).pipe(Effect.provide(context))
      })
  )

  it.scopedLive(
    "MCP-1 an HTTP server that is down, answers an HTML page or an error page: one bounded line naming the remedy",
    () =>
      Effect.gen(function* () {
        const web = yield* Effect.acquireRelease(
          Effect.promise(
            () =>
              new Promise<Server>((resolve) => {
                const server = createServer((request, response) => {
                  request.resume()
                  request.on("end", () => {
                    if (request.url === "/broken") {
                      response.writeHead(500, { "content-type": "text/html" })
                      response.end(`<html>\n<body>${"Internal Server Error\n".repeat(500)}</body></html>`)
                    } else {
                      response.writeHead(200, { "content-type": "text/html" })
                      response.end("<html><body>Welcome to nginx!</body></html>")
                    }
                  })
                })
                server.listen(0, "127.0.0.1", () => resolve(server))
              })
          ),
          (server) => Effect.promise(() => new Promise((resolve) => server.close(resolve)))
        )
        const host = `127.0.0.1:${(web.address() as AddressInfo).port}`
        // A port nothing listens on: one that was just given and let go.
        const closed = yield* Effect.promise(
          () =>
            new Promise<number>((resolve) => {
              const server = createServer().listen(0, "127.0.0.1", () => {
                const { port } = server.address() as AddressInfo
                server.close(() => resolve(port))
              })
            })
        )
        const { context } = yield* mcpWorld({
          down: { type: "http", url: `http://127.0.0.1:${closed}/mcp?token=secret` },
          page: { type: "http", url: `http://${host}/` },
          broken: { type: "http", url: `http://${host}/broken` }
        })
        yield* Effect.gen(function* () {
          const mcp = yield* McpServers
          yield* mcp.ready
          const errors = new Map((yield* mcp.status).map((report) => [report.name, report.error ?? ""]))
          assert.strictEqual(
            errors.get("down"),
            `cannot reach 127.0.0.1:${closed}: connection refused (is the server running, and its url right?)`
          )
          assert.strictEqual(
            errors.get("page"),
            `${host} did not answer as an MCP server (Streamable HTTP error: Unexpected content type: text/html): is its url the server's MCP endpoint?`
          )
          const broken = errors.get("broken")!
          assert.isTrue(broken.startsWith("the server answered HTTP 500: "), broken)
          assert.notInclude(broken, "\n")
          assert.isAtMost(broken.length, 301)
        }).pipe(Effect.provide(context))
      })
  )

  it.scopedLive(
    "MCP-1 an HTTP server that dies during a call: the call fails once it cannot be reached, not at its timeout",
    () =>
      Effect.gen(function* () {
        const traces = yield* makeTempDir("alisio-mcp-gone-")
        const { process: fixture, url } = yield* httpFixture({ MCP_FIXTURE_DIR: traces })
        const { context } = yield* mcpWorld({ remote: { type: "http", url } }, { callMs: 600_000 })
        yield* Effect.gen(function* () {
          yield* Effect.flatMap(McpServers, (mcp) => mcp.ready)
          const pending = yield* Effect.fork(call("mcp__remote__slow"))
          while (traceOf(traces, "slow.txt").length === 0) yield* Effect.sleep("20 millis")
          fixture.kill("SIGKILL")
          // Killed before its answer's stream began, the request itself fails; after, the stream
          // is lost, and the call fails once the SDK gives up reaching the server again.
          assert.match(
            yield* Fiber.join(pending),
            /^error: The MCP server remote (went away during the call \(it could no longer be reached\)|failed the call: fetch failed)$/
          )
        }).pipe(Effect.provide(context))
      }),
    60_000
  )
})
