import * as Args from "@effect/cli/Args"
import * as Options from "@effect/cli/Options"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as CommandLine from "../src/CommandLine.js"
import { commandLine } from "../src/main.js"

const tree = CommandLine.group({
  run: CommandLine.leaf({
    json: Options.boolean("json"),
    model: Options.text("model").pipe(Options.withAlias("m"), Options.optional),
    turns: Options.integer("max-turns").pipe(Options.optional),
    prompt: Args.text({ name: "prompt" }).pipe(Args.repeated)
  }),
  sessions: CommandLine.group({
    show: CommandLine.leaf({ json: Options.boolean("json"), id: Args.text({ name: "session-id" }) })
  })
})

const check = (...words: ReadonlyArray<string>) => CommandLine.check(tree, words)
const argv = (...words: ReadonlyArray<string>) => Either.getOrThrow(check(...words)).argv
const mistake = (...words: ReadonlyArray<string>) => Option.getOrUndefined(Either.getLeft(check(...words)))?.message

describe("CommandLine", () => {
  it("CLI-3 hands @effect/cli the path, the flags by long name, then -- and the words", () => {
    assert.deepStrictEqual(argv("run", "fix", "-m", "a/b", "the", "--json", "bug"), [
      "run",
      "--model",
      "a/b",
      "--json",
      "--",
      "fix",
      "the",
      "bug"
    ])
    assert.deepStrictEqual(argv("run", "--json", "yes", "please"), ["run", "--json", "--", "yes", "please"])
    assert.deepStrictEqual(argv("run", "--model=x", "--json=false", "-"), [
      "run",
      "--model",
      "x",
      "--json=false",
      "--",
      "-"
    ])
    assert.deepStrictEqual(argv("run", "--max-turns", "-1", "hi"), ["run", "--max-turns=-1", "--", "hi"])
    assert.deepStrictEqual(argv("sessions", "show", "--json", "abc"), ["sessions", "show", "--json", "--", "abc"])
    assert.deepStrictEqual(argv("sessions"), ["sessions"])
  })

  it("CLI-3 a negative number is a word, not an unknown option (config set limits.maxTurns -1)", () => {
    assert.deepStrictEqual(argv("sessions", "show", "-1"), ["sessions", "show", "--", "-1"])
    assert.deepStrictEqual(argv("run", "-2.5", "--json"), ["run", "--json", "--", "-2.5"])
    assert.strictEqual(mistake("run", "-x1"), "unknown option -x1 for run")
  })

  it("CLI-3 words after -- are words, whatever they look like", () => {
    assert.deepStrictEqual(argv("run", "-m", "x", "--", "-x", "--bogus", "--"), [
      "run",
      "--model",
      "x",
      "--",
      "-x",
      "--bogus",
      "--"
    ])
  })

  it("CLI-3 an unknown flag, a flag without its value, an unknown command and a word too many are mistakes", () => {
    assert.strictEqual(mistake("run", "--bogus", "hi"), "unknown option --bogus for run")
    assert.strictEqual(mistake("run", "-cm", "x"), "unknown option -cm for run")
    assert.strictEqual(mistake("run", "--bogus=1"), "unknown option --bogus for run")
    assert.strictEqual(mistake("run", "-m"), "option -m of run needs a value")
    assert.strictEqual(mistake("run", "-m", "--json", "hi"), "option -m of run needs a value")
    assert.strictEqual(mistake("run", "-m", "--", "hi"), "option -m of run needs a value")
    assert.strictEqual(mistake("run", "--model="), "option --model of run needs a value")
    assert.strictEqual(
      mistake("run", "--json=maybe"),
      "option --json of run takes no value; write --json or --json=false"
    )
    assert.strictEqual(mistake("bogus"), "unknown command bogus")
    assert.strictEqual(mistake("--json", "run"), "unknown option --json")
    for (const print of ["-p", "--print"]) {
      assert.strictEqual(
        mistake(print, "fix the tests"),
        `unknown option ${print}: a task without the interface (as \`claude -p\`) is \`alisio run "task"\``
      )
    }
    assert.strictEqual(mistake("run", "-p", "x"), "unknown option -p for run")
    assert.strictEqual(mistake("sessions", "list"), "unknown command list for sessions")
    assert.strictEqual(mistake("sessions", "show", "a", "b"), "unexpected argument b for sessions show")
    assert.deepStrictEqual(Option.getOrUndefined(Either.getLeft(check("sessions", "show", "-x")))?.path, [
      "sessions",
      "show"
    ])
  })

  it("CLI-3 a request for help goes to @effect/cli untouched", () => {
    assert.deepStrictEqual(argv("run", "--bogus", "--help"), ["run", "--bogus", "--help"])
    assert.deepStrictEqual(argv("sessions", "-h"), ["sessions", "-h"])
    assert.strictEqual(mistake("run", "--", "--help"), undefined)
  })

  it("CLI-3 the tree of main knows every flag of its commands", () => {
    const run = commandLine.children.run
    assert.strictEqual(run?._tag, "Leaf")
    if (run?._tag !== "Leaf") return
    for (const name of ["--json", "-m", "--model", "-s", "-c", "--yes", "--cwd", "--timeout", "--request-id"]) {
      assert.isTrue(run.flags.has(name), name)
    }
    assert.isFalse(run.flags.get("--yes")!.takesValue)
    assert.isTrue(run.flags.get("-m")!.takesValue)
    assert.strictEqual(run.maxWords, Number.POSITIVE_INFINITY)
  })

  it("CLI-3 a command with subcommands of its own may take flags itself (`models --json`, `models use x`)", () => {
    const models = CommandLine.group(
      { use: CommandLine.leaf({ model: Args.text({ name: "model" }) }) },
      { own: CommandLine.leaf({ json: Options.boolean("json") }) }
    )
    const withModels = CommandLine.group({ models })
    const argvOf = (...words: ReadonlyArray<string>) => Either.getOrThrow(CommandLine.check(withModels, words)).argv
    const mistakeOf = (...words: ReadonlyArray<string>) =>
      Option.getOrUndefined(Either.getLeft(CommandLine.check(withModels, words)))?.message
    assert.deepStrictEqual(argvOf("models"), ["models"])
    assert.deepStrictEqual(argvOf("models", "--json"), ["models", "--json"])
    assert.deepStrictEqual(argvOf("models", "use", "a/b"), ["models", "use", "--", "a/b"])
    assert.strictEqual(mistakeOf("models", "--bogus"), "unknown option --bogus for models")
    assert.strictEqual(mistakeOf("models", "bogus"), "unknown command bogus for models")
    assert.strictEqual(mistakeOf("models", "use", "--json", "x"), "unknown option --json for models use")
    assert.strictEqual(mistakeOf("models", "toString"), "unknown command toString for models")
    const config = commandLine.children.config
    assert.isTrue(config?._tag === "Group" && config.own?.flags.has("--trust-project") === true)
  })

  it("CLI-1 CLI-3 alisio itself takes the conversation's flags and a first message; a lone near-command is a typo", () => {
    const root = (...words: ReadonlyArray<string>) => CommandLine.check(commandLine, words)
    assert.deepStrictEqual(Either.getOrThrow(root("-c")).argv, ["--continue"])
    assert.deepStrictEqual(Either.getOrThrow(root("-m", "a/b", "fix", "it")).argv, [
      "--model",
      "a/b",
      "--",
      "fix",
      "it"
    ])
    assert.deepStrictEqual(Either.getOrThrow(root("sessions", "list")).path, ["sessions", "list"])
    assert.deepStrictEqual(Either.getOrThrow(root()).argv, [])
    const typo = Option.getOrUndefined(Either.getLeft(root("sesions")))?.message
    assert.include(typo, "unknown command sesions (did you mean sessions?)")
    assert.include(typo, "alisio -- sesions")
    assert.deepStrictEqual(Either.getOrThrow(root("--", "sesions")).argv, ["--", "sesions"])
    assert.deepStrictEqual(Either.getOrThrow(root("fix")).argv, ["--", "fix"])
    assert.include(Option.getOrUndefined(Either.getLeft(root("--json")))?.message ?? "", "unknown option --json")
    // The conversation takes the limits `run` takes (CTX-1: the context budget too).
    assert.deepStrictEqual(Either.getOrThrow(root("--max-context-tokens", "8000")).argv, [
      "--max-context-tokens",
      "8000"
    ])
  })
})
