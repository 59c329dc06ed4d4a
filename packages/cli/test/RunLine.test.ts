import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as CommandLine from "../src/CommandLine.js"
import { type RunFlags, runFlags } from "../src/Flags.js"
import { commandLine } from "../src/main.js"
import { parseRunLine, runOptions } from "../src/RunLine.js"

// RunLine.ts reads `alisio run`'s flags without the command tree; main.ts reads every command line
// RunLine leaves to it. These tests hold the two together: the same flags, and the same values for
// every command line RunLine takes.

/** What main.ts makes of `alisio run <words>`: the handler's flags, or none when it refuses them. */
const parsedByTree = (words: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const checked = CommandLine.check(commandLine, ["run", ...words])
    if (Either.isLeft(checked)) return Option.none<RunFlags>()
    let parsed: RunFlags | undefined
    const run = Command.make("run", runFlags, (flags) =>
      Effect.sync(() => {
        parsed = flags
      })
    )
    const root = Command.make("alisio").pipe(Command.withSubcommands([run]))
    const ran = yield* Effect.either(
      Command.run(root, { name: "alisio", version: "0" })(["node", "alisio", ...checked.right.argv])
    )
    return Either.isRight(ran) ? Option.fromNullable(parsed) : Option.none<RunFlags>()
  }).pipe(Effect.provide(NodeContext.layer))

const folder = mkdtempSync(join(tmpdir(), "alisio-runline-"))
const file = join(folder, "file.txt")
writeFileSync(file, "x")

const understood: ReadonlyArray<ReadonlyArray<string>> = [
  [],
  ["hi"],
  ["-"],
  ["--yes", "-m", "openai/bench-model", "bench 200"],
  ["--json", "--final", "-q", "--read-only", "-c", "do", "it"],
  ["--model=openai/x", "-s", "abc", "--yes=false", "--json=true", "prompt"],
  ["--plugin", "a", "--plugin=b", "--disable-plugin", "memory", "x"],
  ["--max-turns", "3", "--timeout", "2m", "--first-token-timeout=500ms", "--first-token-retries", "0", "x"],
  ["--stream-idle-timeout", "1m30s", "--max-output-tokens", "100", "--max-context-tokens", "2048", "x"],
  ["--truncation-recoveries", "1", "--trust-project", "x"],
  ["--run-id", "r1", "--request-id", "q", "--correlation-id", "c", "--output-last-message", file, "p"],
  ["--cwd", folder, "p"],
  ["--cwd", join(folder, "missing"), "p"],
  ["hello", "--yes", "world"],
  ["--yes", "--", "--json", "-m", "--"],
  ["-m", "x", "true", "1"]
]

const leftToTheTree: ReadonlyArray<ReadonlyArray<string>> = [
  ["--bogus", "hi"],
  ["-m"],
  ["-m", "--yes", "x"],
  ["--model=", "x"],
  ["--max-turns", "0", "x"],
  ["--max-turns", "-1", "x"],
  ["--max-turns=1e3", "x"],
  ["--max-context-tokens", "1000", "x"],
  ["--timeout", "soon", "x"],
  ["--yes=maybe", "x"],
  ["--cwd", file, "x"],
  ["--model", "a", "--model", "b", "x"],
  ["--help"],
  ["-h"],
  ["--version"],
  ["-qc", "x"]
]

describe("RunLine", () => {
  it("CLI-1 reads the same flags, with the same names and aliases, as the command tree's `run`", () => {
    const tree = CommandLine.leaf(runFlags).flags
    const ours = new Map(
      runOptions.flatMap((option) =>
        option.names.map((name) => [name, { long: option.names[0], takesValue: option.kind._tag !== "Boolean" }])
      )
    )
    assert.deepStrictEqual(new Map([...ours].sort()), new Map([...tree].sort()))
    const keys = new Set([...runOptions.map((option) => option.key), "prompt"])
    assert.deepStrictEqual(keys, new Set(Object.keys(runFlags)))
  })

  it.effect("CLI-1 gives `run` the values the command tree parses from the same command line", () =>
    Effect.gen(function* () {
      for (const words of understood) {
        const fast = parseRunLine(words)
        assert.isDefined(fast, `RunLine took ${JSON.stringify(words)}`)
        const tree = yield* parsedByTree(words)
        assert.isTrue(Option.isSome(tree), `the tree parsed ${JSON.stringify(words)}`)
        assert.deepStrictEqual(fast, Option.getOrThrow(tree), JSON.stringify(words))
      }
    })
  )

  it.effect("CLI-3 leaves a mistake, help and any doubtful value to the command tree, which explains or reads it", () =>
    Effect.gen(function* () {
      for (const words of leftToTheTree) {
        assert.isUndefined(parseRunLine(words), JSON.stringify(words))
      }
      // The mistakes among them are refused there (with a one-line error, see CommandLine.test.ts).
      for (const words of [["--bogus", "hi"], ["-m"], ["--max-turns", "0", "x"], ["--timeout", "soon", "x"]]) {
        assert.isTrue(Option.isNone(yield* parsedByTree(words)), JSON.stringify(words))
      }
    })
  )

  it.effect("CLI-1 the counts' lowest values are the command tree's", () =>
    Effect.gen(function* () {
      for (const option of runOptions) {
        if (option.kind._tag !== "Count") continue
        const name = option.names[0]!
        const lowest = [name, String(option.kind.min), "x"]
        assert.deepStrictEqual(parseRunLine(lowest), Option.getOrUndefined(yield* parsedByTree(lowest)), name)
        const below = [name, String(option.kind.min - 1), "x"]
        assert.isUndefined(parseRunLine(below), below.join(" "))
        assert.isTrue(Option.isNone(yield* parsedByTree(below)), below.join(" "))
      }
    })
  )
})
