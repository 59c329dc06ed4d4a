// End-to-end: the built `alisio`'s help, as a new user reads it (CLI-1). Defaults come from the
// domain's Limits, never from copies; colour only on a terminal, never with NO_COLOR.

import { spawnSync } from "node:child_process"
import { formatDuration } from "@alisio/domain/Durations"
import { defaultLimits } from "@alisio/domain/Limits"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import type * as CommandLine from "alisio/CommandLine"
import * as Help from "alisio/Help"
import { commandLine } from "alisio/main"
import { paint } from "alisio/Terminal"
import { type CliSandbox, cliBin, makeSandbox } from "./support/cli.js"

/** Runs the CLI with its stdout on a terminal of its own (`script` gives it a pty). */
const onTerminal = (sandbox: CliSandbox, args: string, env: NodeJS.ProcessEnv) =>
  spawnSync("script", ["-qfec", `exec '${process.execPath}' '${cliBin}' ${args}`, "/dev/null"], {
    cwd: sandbox.workspace,
    env,
    encoding: "utf8"
  })

const flat = (text: string) => text.replace(/\s+/g, " ")

/** Every command path of the tree, groups included. */
const paths = (shape: CommandLine.Shape, path: ReadonlyArray<string> = []): ReadonlyArray<ReadonlyArray<string>> =>
  shape._tag === "Leaf"
    ? [path]
    : [path, ...Object.entries(shape.children).flatMap(([name, child]) => paths(child, [...path, name]))]

describe("alisio's help (end to end)", () => {
  let sandbox: CliSandbox
  beforeEach(() => {
    // Help reaches no server; the address only completes the environment.
    sandbox = makeSandbox("http://127.0.0.1:9/v1")
  })
  afterEach(() => sandbox.cleanup())

  it("CLI-1 alisio --help: the commands, the environment variables, the config files and examples, no escapes when piped", async () => {
    const result = await sandbox.run(["--help"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(result.stderr, "")
    const text = result.stdout
    assert.notInclude(text, "\x1b")
    assert.match(text, /^Usage: alisio \[options\] \[<prompt>\.\.\.\]\n {7}alisio <command>/)
    for (const command of [
      "run [<prompt>...]",
      "sessions list",
      "sessions show <session-id>",
      "models",
      "connect <provider>",
      "install <npm:package|path>",
      "uninstall <package>",
      "help [<command>]"
    ]) {
      assert.include(text, command)
    }
    // Groups that run on their own are commands too, not only their subcommands.
    assert.match(text, /^ {2}models {2,}List the models of the providers/m)
    assert.match(text, /^ {2}config {2,}Print the effective configuration/m)
    for (const name of ["OPENAI_BASE_URL", "OPENAI_API_KEY", "ALISIO_HOME", "NO_COLOR"]) assert.include(text, name)
    // The sandbox's ALISIO_HOME holds the configuration and the state: help names where they are,
    // from the home folder (~) as people write it.
    const home = `~${sandbox.home.slice(sandbox.env.HOME!.length)}`
    assert.include(text, `${home}/config.yaml`)
    assert.include(text, ".alisio/config.yaml")
    assert.include(text, `${home}/state/alisio.db`)
    const examples = text.split("Examples:")[1] ?? ""
    assert.isAtLeast(examples.match(/^ {4}alisio /gm)?.length ?? 0, 2)
    // A first user learns from the examples how to reach a model.
    assert.include(examples, "alisio connect ollama && alisio models use ollama/qwen3-coder")
    for (const refused of ["--wizard", "--log-level", "A true or false value", "This setting is optional"]) {
      assert.notInclude(text, refused)
    }
  })

  it("CLI-1 alisio run --help: every flag described, defaults from Limits with their config keys, examples", async () => {
    const result = await sandbox.run(["run", "--help"])
    assert.strictEqual(result.code, 0, result.stderr)
    const text = flat(result.stdout)
    assert.match(result.stdout, /^Usage: alisio run \[options\] \[<prompt>\.\.\.\]/)
    assert.include(
      text,
      `Most model turns in the run (default ${defaultLimits.maxTurns}; config.yaml: limits.maxTurns)`
    )
    assert.include(
      text,
      `--first-token-timeout <duration> Silence allowed before a response's first token; then the request is sent again (default ${formatDuration(defaultLimits.firstTokenTimeoutMs)}`
    )
    assert.include(
      text,
      `(default ${formatDuration(defaultLimits.streamIdleTimeoutMs)}; config.yaml: limits.streamIdleTimeoutMs)`
    )
    for (const flag of [
      "--json",
      "--final",
      "-q, --quiet",
      "--output-last-message <file>",
      "-m, --model <provider/model>",
      "-c, --continue",
      "--yes"
    ]) {
      assert.include(text, flag)
    }
    assert.include(text, "OPENAI_BASE_URL")
    assert.include(text, "Exit codes: 0 the run completed")
    assert.include(text, 'alisio run --yes "Fix the failing test')
    for (const refused of ["--wizard", "--log-level", "A user-defined piece of text"]) assert.notInclude(text, refused)
  })

  it("CLI-1 alisio help <command> is <command> --help, for subcommands too; an unknown one is a usage line", async () => {
    for (const path of [["run"], ["sessions"], ["sessions", "list"], ["models"]]) {
      const asked = await sandbox.run(["help", ...path])
      const flagged = await sandbox.run([...path, "--help"])
      assert.strictEqual(asked.code, 0, asked.stderr)
      assert.strictEqual(asked.stdout, flagged.stdout, path.join(" "))
      assert.match(asked.stdout, new RegExp(`^Usage: alisio ${path.join(" ")}`))
    }
    assert.strictEqual((await sandbox.run(["help"])).stdout, (await sandbox.run(["--help"])).stdout)
    const unknown = await sandbox.run(["help", "sessions", "bogus"])
    assert.strictEqual(unknown.code, 2)
    assert.strictEqual(unknown.stderr, "alisio: unknown command bogus for sessions (see alisio sessions --help)\n")
    assert.strictEqual(unknown.stdout, "")
  })

  it("CLI-1 the bundle's help (answered without loading the program) is what the sources' command tree describes, for every command", async () => {
    const layout: Help.Layout = {
      paint: paint({ isTTY: false } as NodeJS.WriteStream),
      width: 80,
      env: sandbox.env,
      home: sandbox.env.HOME!
    }
    for (const path of paths(commandLine)) {
      const result = await sandbox.run([...path, "--help"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, Help.render(commandLine, path, layout), path.join(" "))
    }
  })

  it("CLI-1 on a terminal help is in bold, but never with NO_COLOR", () => {
    const { NO_COLOR: _, ...coloured } = sandbox.env
    const bold = onTerminal(sandbox, "run --help", coloured)
    assert.strictEqual(bold.status, 0, bold.stderr)
    assert.include(bold.stdout, "\x1b[1m")
    assert.include(bold.stdout, "--first-token-timeout")
    const plain = onTerminal(sandbox, "run --help", sandbox.env)
    assert.strictEqual(plain.status, 0, plain.stderr)
    assert.include(plain.stdout, "--first-token-timeout")
    assert.notInclude(plain.stdout, "\x1b")
  })
})
