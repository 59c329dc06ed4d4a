// End-to-end: what `alisio models` and the choice of a model say about a server's malformed list of
// models and a model id with line breaks or escape sequences, against the OpenAI-protocol test server.

import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"

describe("model lists and model names (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let sandbox: CliSandbox | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
    sandbox?.cleanup()
    sandbox = undefined
  })

  it("PRV-2 a /models answer whose data is not a list fails naming the address and what was expected, not 'no models'; a run naming its model still runs", async () => {
    const answers: ReadonlyArray<readonly [string, string]> = [
      ['{"object":"list","data":{"id":"m1"}}', "`data` as an object"],
      ['{"object":"list","data":"m1"}', '`data` as the text "m1"'],
      ['{"object":"list","data":null}', "`data` as null"],
      ['{"object":"list"}', "an object without `data`"],
      ["null", "null"]
    ]
    for (const [body, sent] of answers) {
      server = await startOpenAiServer({ modelsBody: body, replies: [{ kind: "text", text: "hi" }] })
      sandbox = makeSandbox(server.baseURL)
      const expected =
        `The server sent an invalid response: ${server.baseURL}/models sent ${sent} where the list of models was expected ` +
        '(JSON with `data`, a list of models: {"data": [{"id": "…"}, …]})'
      const listed = await sandbox.run(["models"])
      assert.strictEqual(listed.code, 1, listed.stderr)
      assert.strictEqual(listed.stdout, "")
      assert.strictEqual(listed.stderr, `alisio: Could not list the models of openai: ${expected}\n`)
      // A run that takes the first model the server lists says the same, not that it lists none.
      const run = await sandbox.run(["run", "hello"])
      assert.strictEqual(run.code, 1, run.stderr)
      assert.include(run.stderr, expected)
      assert.notInclude(run.stderr, "lists no models")
      // A run that names its model takes the name at its word, as when the list is unreachable.
      const named = await sandbox.run(["run", "-m", "openai/m1", "hello"])
      assert.strictEqual(named.code, 0, named.stderr)
      assert.strictEqual(named.stdout, "hi\n")
      await server.close()
      server = undefined
      sandbox.cleanup()
      sandbox = undefined
    }
  })

  it("PRV-1 an unknown model named with line breaks or escape sequences is echoed on one line, its characters escaped", async () => {
    server = await startOpenAiServer({ models: ["test-model"], replies: [] })
    sandbox = makeSandbox(server.baseURL)
    const given = await sandbox.run(["run", "-m", "openai/no\npe\u001b[2J\r\u2028x", "hello"])
    assert.strictEqual(given.code, 2, given.stderr)
    assert.strictEqual(given.stderr.split("\n").length, 2, given.stderr)
    assert.include(given.stderr, 'Unknown model "openai/no\\npe\\u001b[2J\\r\\u2028x"')
    assert.include(given.stderr, 'has no model "no\\npe\\u001b[2J\\r\\u2028x"')

    // A provider prefix that is none, with an escape sequence in it.
    const prefixed = await sandbox.run(["run", "-m", "no\u001b]52;c;eA==\u0007where/x", "hello"])
    assert.strictEqual(prefixed.code, 2, prefixed.stderr)
    assert.strictEqual(prefixed.stderr.split("\n").length, 2, prefixed.stderr)
    assert.include(prefixed.stderr, '"no\\u001b]52;c;eA==\\u0007where" is not a provider')
    assert.strictEqual(server.requests.filter((request) => request.path.endsWith("/chat/completions")).length, 0)
  })

  it("PRV-1 CFG-1 models use refuses a name with an escape sequence when the server lists no models to check it against", async () => {
    server = await startOpenAiServer({ modelsBody: "[]", replies: [] })
    sandbox = makeSandbox(server.baseURL)
    const used = await sandbox.run(["models", "use", "openai/a\u001b[2Jb"])
    assert.strictEqual(used.code, 2, used.stderr)
    assert.notInclude(used.stdout + used.stderr, "\u001b", "no escape sequence reaches the terminal")
    assert.include(used.stderr, 'expected "provider/model"')
    assert.include(used.stderr, "is unchanged")
    const plain = await sandbox.run(["models", "use", "openai/local-model"])
    assert.strictEqual(plain.code, 0, plain.stderr)
  })
})
