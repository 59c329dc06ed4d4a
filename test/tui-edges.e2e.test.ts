// The interactive UI at the edges of its process, in a real terminal (tmux): a crash inside it,
// arguments refused before it draws, escape sequences on a terminal, the terminal closed (SIGHUP).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { cliBin, makeSandbox } from "./support/cli.js"
import { startOpenAiServer } from "./support/openaiServer.js"
import { afterExit, launch, launchRecorded, makeTmux, paneEnv, shellQuote, tmuxPath, waitFor } from "./support/tmux.js"
import { makeReplies, type ShownSession } from "./support/tuiReplies.js"

describe.skipIf(tmuxPath === undefined)("interactive UI at the edges of its process", () => {
  const tmuxBin = tmuxPath!

  it("UI-1 CLI-2 a crash inside the process stops the screen, prints the error, leaves the terminal clean and records the run cancelled", async () => {
    const server = await startOpenAiServer({ replyFor: makeReplies() })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxBin, `alisio-e2e-crash-${process.pid}`)
    // A plugin whose timer throws once a run has started: an uncaught exception in the process.
    const plugin = join(sandbox.workspace, "..", "crasher.mjs")
    writeFileSync(
      plugin,
      [
        'import { definePlugin, PluginApi } from "@alisio/domain/Plugin"',
        'import * as Effect from "effect/Effect"',
        "export default definePlugin({",
        '  id: "crasher",',
        '  version: "1.0.0",',
        "  setup: Effect.gen(function* () {",
        "    const api = yield* PluginApi",
        '    yield* api.events.on("run_started", () =>',
        "      Effect.sync(() => {",
        '        setTimeout(() => { throw new Error("boom from a plugin") }, 1500)',
        "      })",
        "    )",
        "  })",
        "})",
        ""
      ].join("\n")
    )
    const env = paneEnv(sandbox, { LANG: "C.UTF-8" })
    try {
      tmux.start(
        `env -i ${env} ${shellQuote(process.execPath)} ${shellQuote(cliBin)} --plugin ${shellQuote(plugin)} "write slowly"; ${afterExit}`,
        sandbox.workspace
      )
      await waitFor(tmux.screen, "word after word, Slowly")
      const crashed = await waitFor(tmux.screen, "ALISIO EXITED 1")
      assert.include(crashed, "alisio: internal error in the interactive interface")
      assert.include(crashed, "boom from a plugin")
      await waitFor(tmux.screen, "TERMINAL COOKED")
      assert.strictEqual(tmux.flag("cursor_flag"), "1", "the cursor is shown again")
      assert.strictEqual(tmux.flag("mouse_any_flag"), "0")
      const listed = await sandbox.run(["sessions", "list", "--json"])
      const id = (JSON.parse(listed.stdout.trim().split("\n")[0] ?? "{}") as { readonly id?: string }).id
      assert.isDefined(id)
      const shown = JSON.parse((await sandbox.run(["sessions", "show", "--json", id!])).stdout) as ShownSession
      assert.deepStrictEqual(
        shown.runs.map((run) => run.status),
        ["cancelled"]
      )
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 60_000)

  it("CLI-1 a --cwd naming no folder, an unknown -s and another folder's session are refused before the interface draws anything; --cwd moves the session; an unknown -m or command is said at once", async () => {
    const server = await startOpenAiServer({ replyFor: makeReplies() })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxBin, `alisio-e2e-cwd-${process.pid}`)
    const refusedBeforeDrawing = async (args: string, message: string) => {
      const raw = launchRecorded(tmux, sandbox, args)
      const shown = await waitFor(tmux.screen, "ALISIO EXITED 2")
      assert.include(shown.replace(/\n/g, ""), message)
      const written = readFileSync(raw, "utf8")
      assert.notInclude(written, "\u001b[?2004h", `${args}: the terminal was never switched to the interface's modes`)
      assert.notInclude(written, "ctrl-d exit", `${args}: no frame was drawn`)
      tmux.kill()
    }
    try {
      await refusedBeforeDrawing("--cwd gone", "alisio: --cwd gone: no such folder")
      await refusedBeforeDrawing("-s zzzzzzzz", "alisio: No session zzzzzzzz.")
      const other = join(sandbox.workspace, "..", "other")
      mkdirSync(other)
      const made = await sandbox.run(["run", "--cwd", other, "-m", "openai/test-model", "say hello"])
      assert.strictEqual(made.code, 0, made.stderr)
      const listed = await sandbox.run(["sessions", "list", "--all", "--json"])
      const id = (JSON.parse(listed.stdout.trim().split("\n")[0] ?? "{}") as { readonly id?: string }).id!.slice(0, 8)
      await refusedBeforeDrawing(`-s ${id}`, `alisio: Session ${id} works in ${other}, not in this folder`)

      launch(tmux, sandbox, `--cwd . -s ${id}`)
      const moved = await waitFor(tmux.screen, `moved from ${other} to this folder`)
      assert.include(moved, "Hello from the model.", "the moved session's conversation is shown")
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
      const here = await sandbox.run(["sessions", "list", "--json"])
      assert.include(here.stdout, `"cwd":${JSON.stringify(sandbox.workspace)}`)
      tmux.kill()

      // A -m that names no model is said at once, not only when the first message fails.
      launch(tmux, sandbox, "-m openai/nope")
      const unknown = await waitFor(tmux.screen, "chooses another.")
      assert.include(unknown.replace(/\n/g, " "), 'Unknown model "openai/nope"')
      // So is a command that does not exist, with where to find those that do.
      tmux.text("/nope")
      tmux.keys("Enter")
      await waitFor(tmux.screen, "No command is named /nope. /help lists the commands.")
      tmux.keys("C-d")
      await waitFor(tmux.screen, "ALISIO EXITED 0")
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 90_000)

  it("CLI-1 alisio run on a terminal never passes the model's or a command's escape sequences to it", async () => {
    const server = await startOpenAiServer({ replyFor: makeReplies() })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxBin, `alisio-e2e-escapes-${process.pid}`)
    try {
      const raw = launchRecorded(tmux, sandbox, 'run --yes "hostile output"')
      const shown = await waitFor(tmux.screen, "ALISIO EXITED 0")
      assert.include(shown, "abcred", "the command's text shows without its sequences")
      assert.include(shown, "Done here, fine.")
      const written = readFileSync(raw, "utf8")
      for (const sequence of ["\u001b]52;", "\u001b]0;", "\u001b[2J", "\u001b[31m"]) {
        assert.notInclude(written, sequence, JSON.stringify(sequence))
      }
      // `sessions show` prints the stored conversation to read: no sequence either.
      const listed = await sandbox.run(["sessions", "list", "--json"])
      const id = (JSON.parse(listed.stdout.trim().split("\n")[0] ?? "{}") as { readonly id?: string }).id
      const show = await sandbox.run(["sessions", "show", id ?? "?"])
      assert.include(show.stdout, "Done here, fine.")
      assert.notInclude(show.stdout, "\u001b")
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 60_000)

  it("UI-1 CLI-2 closing the terminal while a run streams (SIGHUP) records the run cancelled and ends the process", async () => {
    const server = await startOpenAiServer({ replyFor: makeReplies() })
    const sandbox = makeSandbox(server.baseURL)
    const tmux = makeTmux(tmuxBin, `alisio-e2e-hup-${process.pid}`)
    const env = paneEnv(sandbox)
    try {
      tmux.start(
        `env -i ${env} ${shellQuote(process.execPath)} ${shellQuote(cliBin)} "write slowly"`,
        sandbox.workspace
      )
      await waitFor(tmux.screen, "word after word, Slowly")
      tmux.kill()
      let statuses: ReadonlyArray<string> = []
      for (let i = 0; i < 100; i++) {
        const listed = await sandbox.run(["sessions", "list", "--json"])
        const id = (JSON.parse(listed.stdout.trim().split("\n")[0] ?? "{}") as { readonly id?: string }).id
        if (id !== undefined) {
          const shown = JSON.parse((await sandbox.run(["sessions", "show", "--json", id])).stdout) as ShownSession
          statuses = shown.runs.map((run) => run.status)
          if (statuses[0] !== "running") break
        }
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.deepStrictEqual(statuses, ["cancelled"])
    } finally {
      tmux.kill()
      await server.close()
      sandbox.cleanup()
    }
  }, 60_000)
})
