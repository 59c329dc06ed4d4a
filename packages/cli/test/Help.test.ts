import { formatDuration } from "@alisio/domain/Durations"
import { DEFAULT_OUTPUT_BUDGET, defaultLimits, MODEL_OUTPUT_CAP } from "@alisio/domain/Limits"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as CommandLine from "../src/CommandLine.js"
import * as Help from "../src/Help.js"
import { commandLine } from "../src/main.js"
import { paint } from "../src/Terminal.js"

const layout = (over: Partial<Help.Layout> = {}): Help.Layout => ({
  paint: paint({ isTTY: false } as NodeJS.WriteStream),
  width: 100,
  env: {},
  home: "/home/ada",
  ...over
})

const help = (...path: ReadonlyArray<string>) => Help.render(commandLine, path, layout())

/** Every command path of the tree, groups included. */
const paths = (shape: CommandLine.Shape, path: ReadonlyArray<string> = []): ReadonlyArray<ReadonlyArray<string>> =>
  shape._tag === "Leaf"
    ? [path]
    : [path, ...Object.entries(shape.children).flatMap(([name, child]) => paths(child, [...path, name]))]

/** The help text flattened to single spaces, so wrapped lines read as one. */
const flat = (text: string) => text.replace(/\s+/g, " ")

describe("Help", () => {
  it("CLI-1 every flag and argument of every command has a description", () => {
    for (const path of paths(commandLine)) {
      const shape = Either.getOrThrow(Help.find(commandLine, path))
      const described = `alisio ${path.join(" ")} has no description: give its CommandLine.leaf/group a Doc`
      assert.isNotEmpty(shape.doc?.description ?? "", described)
      if (shape._tag !== "Leaf") continue
      for (const flag of Help.flagsOf(shape.config)) {
        assert.isAbove(flag.description.length, 10, `${flag.label} of alisio ${path.join(" ")}`)
        assert.notMatch(flag.description, /^(A true or false value|A user-defined piece of text|This setting)/)
      }
      for (const [label, description] of Help.argsOf(shape.config)) {
        assert.isAbove(description.length, 5, `${label} of alisio ${path.join(" ")}`)
      }
    }
  })

  it("CLI-1 run's help gives each limit's default from Limits, its config key, and what a duration looks like", () => {
    const text = flat(help("run"))
    assert.include(
      text,
      `--max-turns <n> Most model turns in the run (default ${defaultLimits.maxTurns}; config.yaml: limits.maxTurns)`
    )
    assert.include(
      text,
      `(default ${formatDuration(defaultLimits.firstTokenTimeoutMs)}; config.yaml: limits.firstTokenTimeoutMs)`
    )
    assert.include(
      text,
      `(default ${formatDuration(defaultLimits.streamIdleTimeoutMs)}; config.yaml: limits.streamIdleTimeoutMs)`
    )
    assert.include(text, `(default ${defaultLimits.firstTokenRetries}; config.yaml: limits.firstTokenRetries)`)
    assert.include(text, `(default ${defaultLimits.truncationRecoveries}; config.yaml: limits.truncationRecoveries)`)
    assert.include(text, `up to ${MODEL_OUTPUT_CAP}, else ${DEFAULT_OUTPUT_BUDGET}`)
    assert.include(text, "A <duration> is written 500ms, 30s, 2m, 1m30s or 1h")
    for (const flag of [
      "-m, --model <provider/model>",
      "-s, --session <id>",
      "-q, --quiet",
      "--final",
      "--output-last-message <file>"
    ]) {
      assert.include(text, flag)
    }
    assert.include(text, "OPENAI_BASE_URL")
    assert.include(text, "130 cancelled")
    assert.include(text, "alisio run --json --final")
  })

  it("CLI-1 the top help lists the commands, the environment, the config files where they are, and examples", () => {
    const text = help()
    for (const name of ["OPENAI_BASE_URL", "OPENAI_API_KEY", "ALISIO_HOME", "NO_COLOR"]) assert.include(text, name)
    assert.include(text, "~/.config/alisio/config.yaml")
    assert.include(text, ".alisio/config.yaml")
    assert.include(text, "~/.local/state/alisio/alisio.db")
    assert.include(text, "sessions show <session-id>")
    assert.include(text, "help [<command>]")
    assert.isAtLeast(text.split("Examples:")[1]?.match(/^ {4}alisio /gm)?.length ?? 0, 2)
    const moved = Help.render(commandLine, [], layout({ env: { ALISIO_HOME: "/srv/alisio" } }))
    assert.include(moved, "/srv/alisio/config.yaml")
    assert.include(moved, "/srv/alisio/state/alisio.db")
  })

  it("CLI-1 usage lines start with alisio; built-in options we refuse are never listed", () => {
    for (const path of paths(commandLine)) {
      const text = help(...path)
      assert.match(text, new RegExp(`^Usage: alisio${path.map((word) => ` ${word}`).join("")}( |$)`, "m"))
      for (const refused of ["--wizard", "--log-level"]) assert.notInclude(text, refused)
    }
  })

  it("CLI-1 colour only when the layout has it, and lines fit the width", () => {
    assert.notInclude(help("run"), "\x1b")
    const coloured = Help.render(
      commandLine,
      ["run"],
      layout({ paint: paint({ isTTY: true } as NodeJS.WriteStream, {}) })
    )
    assert.include(coloured, "\x1b[1m")
    // Examples are command lines to copy: never wrapped.
    const narrow = Help.render(commandLine, ["run"], layout({ width: 60 })).split("Examples:")[0]!
    for (const line of narrow.split("\n")) {
      // A word longer than the column (a flag label) may stand alone on its line.
      if (line.length > 60) assert.notInclude(line.trim(), " ", line)
    }
  })

  it("CLI-1 help is asked for with `help <command>` or --help/-h before --, for the command the words name", () => {
    const asked = (...words: ReadonlyArray<string>) => Option.map(Help.requested(commandLine, words), Either.getOrThrow)
    assert.deepStrictEqual(asked("help"), Option.some([]))
    assert.deepStrictEqual(asked("help", "sessions", "list"), Option.some(["sessions", "list"]))
    assert.deepStrictEqual(asked("run", "--json", "--help"), Option.some(["run"]))
    assert.deepStrictEqual(asked("sessions", "-h"), Option.some(["sessions"]))
    assert.deepStrictEqual(asked("run", "fix", "-h", "now"), Option.some(["run"]))
    assert.deepStrictEqual(asked("--help"), Option.some([]))
    assert.isTrue(Option.isNone(Help.requested(commandLine, ["run", "--", "--help"])), "a word after --")
    assert.isTrue(Option.isNone(Help.requested(commandLine, ["run", "help"])), "a prompt word")
    const unknown = Help.requested(commandLine, ["help", "sessions", "bogus"])
    assert.deepStrictEqual(
      Option.map(unknown, Either.getLeft),
      Option.some(Option.some({ message: "unknown command bogus for sessions", path: ["sessions"] }))
    )
  })
})
