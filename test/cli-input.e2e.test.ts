// End-to-end: what the built `alisio` makes of its command line and of its surroundings (a closed
// stdout, a headless run, `--yes`, `-m`), against a real OpenAI-protocol server on 127.0.0.1
// (CLI-1, CLI-2, CLI-3, TL-3).

import { execFile } from "node:child_process"
import { readFileSync, realpathSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { decodeRunEvent, type KnownRunEvent } from "@alisio/domain/RunEvent"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { type CliResult, type CliSandbox, cliBin, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, type RecordedRequest, type Reply, startOpenAiServer } from "./support/openaiServer.js"

const parseJsonl = (stdout: string): ReadonlyArray<KnownRunEvent> =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line, index) => {
      const decoded = decodeRunEvent(JSON.parse(line))
      if (Either.isLeft(decoded) || decoded.right._tag !== "Known")
        throw new Error(`line ${index + 1} is not a KnownRunEvent: ${line}`)
      return decoded.right.event
    })

const chats = (server: OpenAiTestServer): ReadonlyArray<RecordedRequest> =>
  server.requests.filter((request) => request.path.endsWith("/chat/completions"))

/** The text of the last user message of a chat request. */
const userPrompt = (request: RecordedRequest): string =>
  String(request.body.messages?.filter((message) => message.role === "user").at(-1)?.content)

const tooLargeRemedy =
  "more than a model can read at once: put the text in a file in the workspace and ask the model to read it"

/** A usage mistake: exit 2, exactly one line on stderr, nothing on stdout. */
const assertUsageLine = (result: CliResult, line: string) => {
  assert.strictEqual(result.code, 2, result.stderr)
  assert.strictEqual(result.stderr, `${line}\n`)
  assert.strictEqual(result.stdout, "")
}

const runStatuses = async (sandbox: CliSandbox, sessionId: string) => {
  const shown = await sandbox.run(["sessions", "show", sessionId, "--json"])
  assert.strictEqual(shown.code, 0, shown.stderr)
  return (JSON.parse(shown.stdout) as { runs: ReadonlyArray<{ status: string }> }).runs.map((run) => run.status)
}

describe("alisio's input (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let sandbox: CliSandbox | undefined
  const setup = async (replies: ReadonlyArray<Reply>, models?: ReadonlyArray<string>) => {
    server = await startOpenAiServer(models === undefined ? { replies } : { replies, models })
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

  it("CLI-3 an unknown flag is a usage error naming it, never a prompt: nothing is sent", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "should not be asked" }])
    assertUsageLine(
      await sandbox.run(["run", "--bogus", "hi"]),
      "alisio: unknown option --bogus for run (see alisio run --help)"
    )
    assertUsageLine(
      await sandbox.run(["run", "-m", "openai/test-model", "fix", "-x", "please"]),
      "alisio: unknown option -x for run (see alisio run --help)"
    )
    assertUsageLine(
      await sandbox.run(["sessions", "list", "--bogus"]),
      "alisio: unknown option --bogus for sessions list (see alisio sessions list --help)"
    )
    assertUsageLine(
      await sandbox.run(["models", "-x"]),
      "alisio: unknown option -x for models (see alisio models --help)"
    )
    // A lone word is the interactive UI's first message, unless it is nearly a command's name.
    assertUsageLine(await sandbox.run(["--bogus"]), "alisio: unknown option --bogus (see alisio --help)")
    assertUsageLine(
      await sandbox.run(["sesions"]),
      'alisio: unknown command sesions (did you mean sessions?); to send "sesions" as a message, write alisio -- sesions (see alisio --help)'
    )
    assertUsageLine(
      await sandbox.run(["sessions", "bogus"]),
      "alisio: unknown command bogus for sessions (see alisio sessions --help)"
    )
    assert.strictEqual(chats(server).length, 0)
  })

  it("CLI-3 a flag missing its value is a usage error, not a session titled after the flag", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "should not be asked" }])
    assertUsageLine(await sandbox.run(["run", "-m"]), "alisio: option -m of run needs a value (see alisio run --help)")
    assertUsageLine(
      await sandbox.run(["run", "hi", "--timeout"]),
      "alisio: option --timeout of run needs a value (see alisio run --help)"
    )
    assertUsageLine(
      await sandbox.run(["run", "-s", "--json", "hi"]),
      "alisio: option -s of run needs a value (see alisio run --help)"
    )
    assert.strictEqual(chats(server).length, 0)
    const listed = await sandbox.run(["sessions", "list", "--all", "--json"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.strictEqual(listed.stdout, "", "no session was created")
  })

  it("CLI-1 text piped under a prompt given as arguments goes with it, marked <stdin>; the title is the prompt's", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "reviewed" }])
    const result = await sandbox.run(["run", "-m", "openai/test-model", "Review this change"], {
      input: "diff --git a/x b/x\n+added line\n"
    })
    assert.deepStrictEqual([result.code, result.stdout, result.stderr], [0, "reviewed\n", ""])
    assert.deepStrictEqual(chats(server).map(userPrompt), [
      "Review this change\n\n<stdin>\ndiff --git a/x b/x\n+added line\n</stdin>"
    ])
    const listed = await sandbox.run(["sessions", "list", "--json"])
    assert.strictEqual((JSON.parse(listed.stdout) as { readonly title: string }).title, "Review this change")
  })

  it("CLI-1 a pipe left open and silent: after a grace the run goes on without it, and says how to skip the wait", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "alone" }])
    const result = await sandbox.start(["run", "-m", "openai/test-model", "just this"], { stdinOpen: true }).done
    assert.deepStrictEqual([result.code, result.stdout], [0, "alone\n"])
    assert.strictEqual(
      result.stderr,
      "alisio: warning: nothing came on stdin within 3s; going on without it (run with `< /dev/null` to skip the wait)\n"
    )
    assert.deepStrictEqual(chats(server).map(userPrompt), ["just this"])
  })

  it("CLI-1 piped text beyond what a model can read is a usage error before anything is sent or stored", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "never" }])
    const result = await sandbox.run(["run", "-m", "openai/test-model", "summarize"], {
      input: "x".repeat(4 * 1024 * 1024 + 1)
    })
    assertUsageLine(result, `alisio: stdin holds more than 4 MB, ${tooLargeRemedy}`)
    assert.strictEqual(chats(server).length, 0)
    const listed = await sandbox.run(["sessions", "list", "--all", "--json"])
    assert.strictEqual(listed.stdout, "", "no session was created")
  })

  it("CLI-1 binary bytes on stdin (an image, a program) are refused, named, before anything is sent or stored", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "never" }])
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      Buffer.alloc(64)
    ])
    const remedy = "not text: save it in the workspace and ask the model about the file"
    assertUsageLine(
      await sandbox.run(["run", "-m", "openai/test-model", "describe this"], { input: png }),
      `alisio: stdin holds a PNG image, ${remedy}`
    )
    assertUsageLine(
      await sandbox.run(["run", "-m", "openai/test-model", "-"], { input: Buffer.from("text\0with a NUL") }),
      `alisio: stdin holds binary data, ${remedy}`
    )
    assert.strictEqual(chats(server).length, 0)
    const listed = await sandbox.run(["sessions", "list", "--all", "--json"])
    assert.strictEqual(listed.stdout, "", "no session was created")
  })

  it("CLI-1/CTX-1 a prompt beyond what a model can read, on stdin, after `-` or with piped text, is refused before anything is stored", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "never" }])
    const huge = "x".repeat(4 * 1024 * 1024 + 1)
    assertUsageLine(
      await sandbox.run(["run", "-m", "openai/test-model"], { input: huge }),
      `alisio: stdin holds more than 4 MB, ${tooLargeRemedy}`
    )
    assertUsageLine(
      await sandbox.run(["run", "-m", "openai/test-model", "-"], { input: huge }),
      `alisio: stdin holds more than 4 MB, ${tooLargeRemedy}`
    )
    // Each part fits; together they do not.
    assertUsageLine(
      await sandbox.run(["run", "-m", "openai/test-model", "y".repeat(100 * 1024)], {
        input: "x".repeat(4 * 1024 * 1024 - 1024)
      }),
      `alisio: the prompt is 4.1 MB (at most 4 MB), ${tooLargeRemedy}`
    )
    assert.strictEqual(chats(server).length, 0)
    const listed = await sandbox.run(["sessions", "list", "--all", "--json"])
    assert.strictEqual(listed.stdout, "", "no session was created")
  })

  it("CLI-1 --cwd naming no folder is a usage error before anything is sent; sessions list may still name it", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "never" }])
    assertUsageLine(
      await sandbox.run(["run", "-m", "openai/test-model", "--cwd", "gone", "hi"]),
      "alisio: --cwd gone: no such folder"
    )
    writeFileSync(join(sandbox.workspace, "notes.txt"), "a file")
    for (const command of [["run", "-m", "openai/test-model"], ["commands", "list"], ["config"]]) {
      assertUsageLine(
        await sandbox.run([...command, "--cwd", "notes.txt", ...(command[0] === "run" ? ["hi"] : [])]),
        "alisio: --cwd notes.txt: not a folder"
      )
    }
    assert.strictEqual(chats(server).length, 0)
    const listed = await sandbox.run(["sessions", "list", "--cwd", "gone"])
    assert.strictEqual(listed.code, 0, listed.stderr)
  })

  it("CLI-3 after -- every word is the prompt, flags or not; flags may follow the prompt's words", async () => {
    const { sandbox, server } = await setup([
      { kind: "text", text: "grep it" },
      { kind: "text", text: "fine" }
    ])
    const dashed = await sandbox.run(["run", "-m", "openai/test-model", "--", "-x", "is", "a", "flag", "of", "grep"])
    assert.strictEqual(dashed.code, 0, dashed.stderr)
    assert.strictEqual(dashed.stdout, "grep it\n")
    const mixed = await sandbox.run([
      "run",
      "explain",
      "--max-turns",
      "2",
      "the",
      "--json",
      "code",
      "-m=openai/test-model"
    ])
    assert.strictEqual(mixed.code, 0, mixed.stderr)
    assert.strictEqual(parseJsonl(mixed.stdout).at(-1)?.type, "run_completed")
    assert.deepStrictEqual(chats(server).map(userPrompt), ["-x is a flag of grep", "explain the code"])
  })

  it("CLI-3 a prompt word after a boolean flag stays in the prompt (`--yes yes go on`)", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "going on" }])
    const result = await sandbox.run(["run", "-m", "openai/test-model", "--yes", "yes", "go", "on"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(chats(server).map(userPrompt), ["yes go on"])
  })

  it("CLI-3 @effect/cli's own validation errors are one line with the remedy, no usage dump", async () => {
    const { sandbox } = await setup([])
    assertUsageLine(
      await sandbox.run(["run", "--timeout", "soon", "hi"]),
      'alisio: --timeout: "soon" is not a duration; write e.g. 500ms, 30s or 2m (see alisio run --help)'
    )
    assertUsageLine(
      await sandbox.run(["run", "--timeout", "0s", "hi"]),
      "alisio: --timeout must be longer than 0, got 0s (see alisio run --help)"
    )
    assertUsageLine(
      await sandbox.run(["run", "--max-turns", "lots", "hi"]),
      'alisio: --max-turns: "lots" is not a whole number (see alisio run --help)'
    )
    assertUsageLine(
      await sandbox.run(["sessions", "show"]),
      "alisio: Missing argument <session-id> (see alisio sessions show --help)"
    )
    assertUsageLine(
      await sandbox.run(["sessions", "show", "a", "b"]),
      "alisio: unexpected argument b for sessions show (see alisio sessions show --help)"
    )
    const help = await sandbox.run(["run", "--help"])
    assert.strictEqual(help.code, 0, help.stderr)
    assert.include(help.stdout, "--first-token-timeout")
  })

  it("CLI-1 -c with -s is a usage error: nothing is sent", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "first" }])
    const first = await sandbox.run(["run", "--json", "-m", "openai/test-model", "one"])
    const sessionId = parseJsonl(first.stdout)[0]!.sessionId
    const both = await sandbox.run(["run", "-c", "-s", sessionId, "-m", "openai/test-model", "two"])
    assert.strictEqual(both.code, 2, both.stderr)
    assert.match(both.stderr, /^alisio: --continue and --session .*\n$/)
    assert.strictEqual(chats(server).length, 1)
  })

  it("CLI-1 a headless run does not offer ask_user_question (nobody could answer)", async () => {
    const { sandbox, server } = await setup([{ kind: "text", text: "ok" }])
    const result = await sandbox.run(["run", "-m", "openai/test-model", "hi"])
    assert.strictEqual(result.code, 0, result.stderr)
    const offered = (chats(server)[0]!.body.tools as ReadonlyArray<{ function: { name: string } }>).map(
      (tool) => tool.function.name
    )
    assert.include(offered, "read")
    assert.include(offered, "bash")
    assert.notInclude(offered, "ask_user_question")
  })

  it("CLI-2 a broken stdout pipe (`--json | head -1`) cancels the run: stored cancelled, exit non-zero", async () => {
    const { sandbox } = await setup([{ kind: "text", text: "x".repeat(400), chunks: 400, delayMs: 25 }])
    const running = sandbox.start(["run", "--json", "-m", "openai/test-model", "stream slowly"])
    await running.waitFor("text_delta")
    const sessionId = parseJsonl(running.stdout().split("\n")[0]!)[0]!.sessionId
    running.child.stdout!.destroy()
    const result = await running.done
    assert.strictEqual(result.code, 130, result.stderr)
    assert.include(result.stderr, "alisio: stdout was closed (broken pipe); the run was cancelled")
    assert.notInclude(result.stderr, "    at ")
    assert.deepStrictEqual(await runStatuses(sandbox, sessionId), ["cancelled"])
  })

  it("CLI-1 -m applies to its run and its session only; `alisio models use` sets the default, which `models` marks", async () => {
    const { sandbox, server } = await setup(
      Array.from({ length: 8 }, () => ({ kind: "text", text: "ok" }) as const),
      ["test-model", "other-model"]
    )
    const first = await sandbox.run(["run", "--json", "-m", "openai/other-model", "one"])
    assert.strictEqual(first.stderr, "", "choosing a model for a run is not announced: it sets no default")
    const sessionId = parseJsonl(first.stdout)[0]!.sessionId
    const unchosen = await sandbox.run(["run", "two"])
    assert.strictEqual(
      unchosen.stderr,
      "alisio: using openai/test-model (-m chooses another; `alisio models use` sets the default)\n",
      "without a default, the first model the server lists"
    )
    for (const quiet of [["-q"], ["--json"]]) {
      const unannounced = await sandbox.run(["run", ...quiet, "two"])
      assert.strictEqual(unannounced.stderr, "", `${quiet[0]} leaves the model choice unannounced`)
    }
    const resumed = await sandbox.run(["run", "-s", sessionId.slice(0, 8), "three"])
    assert.strictEqual(resumed.stderr, "", "a resumed session keeps the model it ran with")

    const used = await sandbox.run(["models", "use", "other-model"])
    assert.strictEqual(used.code, 0, used.stderr)
    const configFile = join(sandbox.home, "config.yaml")
    assert.strictEqual(used.stdout, `openai/other-model is the default model now (defaultModel in ${configFile})\n`)
    assert.strictEqual(readFileSync(configFile, "utf8"), "defaultModel: openai/other-model\n")
    const byDefault = await sandbox.run(["run", "four"])
    assert.strictEqual(byDefault.stderr, "")
    await sandbox.run(["run", "-m", "openai/test-model", "five"])
    await sandbox.run(["run", "six"])
    assert.deepStrictEqual(
      chats(server).map((request) => request.body.model),
      [
        "other-model",
        "test-model",
        "test-model",
        "test-model",
        "other-model",
        "other-model",
        "test-model",
        "other-model"
      ]
    )
    const models = await sandbox.run(["models"])
    assert.strictEqual(models.stdout, "  openai/test-model\n* openai/other-model\n")
    const listedJson = await sandbox.run(["models", "--json"])
    assert.deepStrictEqual(
      listedJson.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { id: string; default: boolean })
        .map((model) => [model.id, model.default]),
      [
        ["test-model", false],
        ["other-model", true]
      ]
    )
    const unknown = await sandbox.run(["models", "use", "openai/nope"])
    assert.strictEqual(unknown.code, 2)
    assert.match(unknown.stderr, /^alisio: Unknown model "openai\/nope"/)
    assert.strictEqual(readFileSync(configFile, "utf8"), "defaultModel: openai/other-model\n", "left as it was")
  })

  it("TL-3 --yes approves access outside the workspace and names each path once on stderr; --help says so", async () => {
    const read: Reply = { kind: "tool", id: "call_r", name: "read", args: { path: "../outside.txt" } }
    const { sandbox } = await setup([
      read,
      { ...read, id: "call_r2" },
      { kind: "text", text: "read it twice" },
      { ...read, id: "call_r3" },
      { kind: "text", text: "read it" },
      { ...read, id: "call_r4" },
      { kind: "text", text: "not allowed" }
    ])
    const outside = join(realpathSync(dirname(sandbox.workspace)), "outside.txt")
    writeFileSync(outside, "secret-ish\n")
    const notice = `alisio: --yes approved access outside the workspace: ${outside}\n`

    const text = await sandbox.run(["run", "--yes", "-m", "openai/test-model", "read the file outside"])
    assert.strictEqual(text.code, 0, text.stderr)
    assert.strictEqual(text.stderr.split(notice).length - 1, 1, text.stderr)

    const json = await sandbox.run(["run", "--json", "--yes", "-m", "openai/test-model", "read it again"])
    assert.strictEqual(json.code, 0, json.stderr)
    assert.include(json.stderr, notice)
    const events = parseJsonl(json.stdout)
    assert.isTrue(events.some((event) => event.type === "approval_resolved" && event.data.by === "policy"))

    const denied = await sandbox.run(["run", "-m", "openai/test-model", "read it without --yes"])
    assert.strictEqual(denied.code, 0, denied.stderr)
    assert.notInclude(denied.stderr, "approved access")
    assert.include(denied.stderr, `denied: headless runs deny access outside the workspace, here ${outside}`)

    const help = await sandbox.run(["run", "--help"])
    assert.include(help.stdout.replace(/\s+/g, " "), "access to files outside the workspace")
  })

  it("CLI-1 started in a folder deleted under the shell: one line saying so, exit 2, no stack trace", async () => {
    const { sandbox } = await setup([{ kind: "text", text: "never asked" }])
    const gone = join(sandbox.workspace, "gone")
    const script = `mkdir "$1" && cd "$1" && rmdir "$1" && exec "$2" "$3" run -m openai/test-model hi`
    const result = await new Promise<CliResult>((resolve) => {
      const child = execFile(
        "sh",
        ["-c", script, "sh", gone, process.execPath, cliBin],
        { env: sandbox.env },
        (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : Number(error.code), signal: null, stdout, stderr })
      )
      child.stdin?.end()
    })
    assert.strictEqual(result.code, 2, result.stderr)
    assert.strictEqual(
      result.stderr,
      "alisio: the current folder no longer exists (it was deleted or moved); cd into one that exists and try again\n"
    )
  })
})
