// End-to-end: `alisio connect` (CLI-1) against the OpenAI-protocol test server on 127.0.0.1.

import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { createServer } from "node:net"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"

const noOpenAi = { OPENAI_BASE_URL: "", OPENAI_API_KEY: "" }

/** A port nothing listens on: taken, then let go. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

describe("alisio connect (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let sandbox: CliSandbox | undefined
  afterEach(async () => {
    await server?.close()
    sandbox?.cleanup()
  })
  const setup = async () => {
    server = await startOpenAiServer({
      models: ["qwen3-coder", "llama3"],
      replies: [{ kind: "text", text: "hi there" }]
    })
    sandbox = makeSandbox(server.baseURL)
    const run = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}, input?: string) =>
      sandbox!.run(args, { env: { ...noOpenAi, ...env }, ...(input === undefined ? {} : { input }) })
    return { server, sandbox, run }
  }
  const config = (sandbox: CliSandbox) => readFileSync(join(sandbox.home, "config.yaml"), "utf8")

  it("CLI-1 PRV-2 `connect <name> --base-url` writes the provider once it listed its models; runs use it", async () => {
    const { server, sandbox, run } = await setup()
    const connected = await run(["connect", "local", "--base-url", server.baseURL])
    assert.strictEqual(connected.code, 0, connected.stderr)
    assert.strictEqual(
      connected.stdout,
      `Connected local (${server.baseURL}) in ${join(sandbox.home, "config.yaml")}. It serves 2 models: local/qwen3-coder, local/llama3.\n` +
        "`alisio models use local/qwen3-coder` makes one the default.\n"
    )
    assert.strictEqual(config(sandbox), `providers:\n  local:\n    baseURL: ${server.baseURL}\n`)
    assert.isUndefined(server.requests.find((request) => request.path.endsWith("/models"))?.authorization)

    const answered = await run(["run", "-m", "local/llama3", "hello"])
    assert.strictEqual(answered.code, 0, answered.stderr)
    assert.strictEqual(answered.stdout, "hi there\n")

    const again = await run(["connect", "local", "--base-url", server.baseURL])
    assert.match(again.stdout, /^Updated local /)
  })

  it("PRV-2 an address pasted with /chat/completions or /responses at its end is used without it, and said once", async () => {
    const { server, sandbox, run } = await setup()
    const pasted = `${server.baseURL}/chat/completions`
    const viaEnv = await run(["run", "-m", "openai/llama3", "hello"], { OPENAI_BASE_URL: pasted })
    assert.strictEqual(viaEnv.code, 0, viaEnv.stderr)
    assert.strictEqual(viaEnv.stdout, "hi there\n")
    assert.strictEqual(
      viaEnv.stderr,
      `alisio: warning: OPENAI_BASE_URL ends in /chat/completions, which Alisio adds itself; using ${server.baseURL} (set it to that to silence this)\n`
    )
    assert.notInclude(
      server.requests.map((request) => request.path),
      "/v1/chat/completions/chat/completions"
    )

    writeFileSync(
      join(sandbox.home, "config.yaml"),
      `providers:\n  local:\n    baseURL: ${server.baseURL}/responses/\n`
    )
    const listed = await run(["models"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.deepStrictEqual(
      listed.stderr.split("\n").filter((line) => line.includes("warning")),
      [
        `alisio: warning: providers.local.baseURL ends in /responses, which Alisio adds itself; using ${server.baseURL} (set it to that to silence this)`
      ]
    )
    assert.include(listed.stdout, "local/llama3")

    const connected = await run(["connect", "other", "--base-url", pasted])
    assert.strictEqual(connected.code, 0, connected.stderr)
    assert.match(connected.stdout, new RegExp(`^Connected other \\(${server.baseURL.replace(/[.]/g, "\\.")}\\) `))
    assert.include(config(sandbox), `  other:\n    baseURL: ${server.baseURL}\n`)
  })

  it("CLI-1 TL-8 a key comes from stdin (kept in the 0600 file) or a variable (only its name kept), never from argv", async () => {
    const { server, sandbox, run } = await setup()
    const piped = await run(["connect", "work", "--base-url", server.baseURL, "--with-api-key"], {}, "sk-from-stdin\n")
    assert.strictEqual(piped.code, 0, piped.stderr)
    assert.include(piped.stdout, "its key is in that file (mode 0600)")
    assert.strictEqual(server.requests.at(-1)!.authorization, "Bearer sk-from-stdin")
    assert.include(config(sandbox), "    apiKey: sk-from-stdin\n")
    assert.strictEqual(statSync(join(sandbox.home, "config.yaml")).mode & 0o777, 0o600)

    const named = await run(["connect", "team", "--base-url", server.baseURL, "--api-key-env", "TEAM_KEY"], {
      TEAM_KEY: "sk-in-env"
    })
    assert.strictEqual(named.code, 0, named.stderr)
    assert.include(named.stdout, "its key is read from TEAM_KEY")
    assert.strictEqual(server.requests.at(-1)!.authorization, "Bearer sk-in-env")
    assert.include(config(sandbox), `  team:\n    baseURL: ${server.baseURL}\n    apiKeyEnv: TEAM_KEY\n`)
    assert.notInclude(config(sandbox), "sk-in-env")
  })

  it("CLI-1 an unknown name, an address that does not answer, a missing key: a clear error, nothing written", async () => {
    const { sandbox, run } = await setup()
    const unknown = await run(["connect", "acme"])
    assert.strictEqual(unknown.code, 2)
    assert.include(unknown.stderr, "acme is not a provider Alisio knows (openai, openrouter, deepseek, ollama,")
    assert.include(unknown.stderr, "give its address with --base-url")

    const port = await closedPort()
    const down = await run(["connect", "local", "--base-url", `http://127.0.0.1:${port}/v1`])
    assert.strictEqual(down.code, 1)
    assert.include(down.stderr, `local at http://127.0.0.1:${port}/v1 did not list its models (`)
    assert.include(
      down.stderr,
      "nothing was written: check the address and the key, or write it anyway with --no-check."
    )

    const keyless = await run(["connect", "openrouter"])
    assert.strictEqual(keyless.code, 2)
    assert.include(
      keyless.stderr,
      "openrouter needs an API key: set OPENROUTER_API_KEY, or pipe the key in with --with-api-key."
    )

    const unset = await run(["connect", "team", "--base-url", "http://127.0.0.1:1/v1", "--api-key-env", "NOT_SET"])
    assert.strictEqual(unset.code, 2)
    assert.include(unset.stderr, "NOT_SET is not set")
    assert.isFalse(existsSync(join(sandbox.home, "config.yaml")))

    const unchecked = await run(["connect", "later", "--base-url", `http://127.0.0.1:${port}/v1`, "--no-check"])
    assert.strictEqual(unchecked.code, 0, unchecked.stderr)
    assert.strictEqual(config(sandbox), `providers:\n  later:\n    baseURL: http://127.0.0.1:${port}/v1\n`)
  })

  it("CLI-1 TL-8 an address with a password or control characters is refused in one line, never echoing the password", async () => {
    const { server, sandbox, run } = await setup()
    const bare = new URL(server.baseURL)
    const withPassword = await run(["connect", "local", "--base-url", `http://alice:s3cret-pass@${bare.host}/v1`])
    assert.strictEqual(withPassword.code, 2)
    assert.strictEqual(
      withPassword.stderr,
      `alisio: http://${bare.host}/v1 was given with a user name or password in it, which are never sent from an address: give the key with --with-api-key or --api-key-env instead (see alisio connect --help)\n`
    )
    const escaped = await run(["connect", "local", "--base-url", `${server.baseURL}\u001b[2J`, "--no-check"])
    assert.strictEqual(escaped.code, 2)
    assert.include(escaped.stderr, "holds spaces or control characters")
    assert.notInclude(escaped.stderr, "\u001b")
    assert.isFalse(existsSync(join(sandbox.home, "config.yaml")))
    assert.isUndefined(server.requests.find((request) => request.path.endsWith("/models")))
  })

  it("CLI-1 PRV-2 what a hostile /models says reaches the terminal as one plain line, and odd ids are not listed", async () => {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must never reach the terminal
    const unsafe = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/
    let junk = true
    const hostile = createHttpServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(
        junk
          ? "not json\n\u001b]52;c;cm0gLXJmIH4=\u0007\u001b[2J"
          : JSON.stringify({ data: [{ id: "fine" }, { id: "evil\n\u001b[2Jmodel" }] })
      )
    })
    await new Promise<void>((resolve) => hostile.listen(0, "127.0.0.1", resolve))
    const baseURL = `http://127.0.0.1:${(hostile.address() as { port: number }).port}/v1`
    try {
      const { run } = await setup()
      const connected = await run(["connect", "odd", "--base-url", baseURL])
      assert.strictEqual(connected.code, 1)
      assert.strictEqual(
        connected.stderr,
        `alisio: odd at ${baseURL} did not list its models (The server sent an invalid response: expected the list of models as JSON, got not json); nothing was written: check the address and the key, or write it anyway with --no-check.\n`
      )
      const listed = await run(["models"], { OPENAI_BASE_URL: baseURL })
      assert.strictEqual(listed.code, 1)
      assert.notMatch(listed.stderr, unsafe)
      assert.include(listed.stderr, "expected the list of models as JSON, got not json\n")
      junk = false
      const odd = await run(["connect", "odd", "--base-url", baseURL])
      assert.strictEqual(odd.code, 0, odd.stderr)
      assert.include(odd.stdout, "It serves 1 model: odd/fine.")
      assert.notMatch(odd.stdout, unsafe)
    } finally {
      await new Promise((resolve) => hostile.close(resolve))
    }
  })
})
