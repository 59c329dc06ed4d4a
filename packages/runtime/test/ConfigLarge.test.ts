// A configuration file that is large, full of problems or no file at all: refused or reported in
// bounded lines that say why, never minutes of parsing (CFG-1).
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Config from "@alisio/runtime/Config"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { tempDir } from "./helpers/tempDir.js"

const keys = (count: number, value: string) => Array.from({ length: count }, (_, i) => `k${i}: ${value}\n`).join("")

describe("Config files out of the ordinary", () => {
  it("CFG-1: thousands of unknown keys give 20 warnings and a count of the rest", () => {
    const parsed = Config.parse(`limits:\n  maxTurns: 3\n${keys(5_000, "1")}`, "config.yaml")
    assert.isTrue(Either.isRight(parsed))
    if (Either.isLeft(parsed)) return
    assert.strictEqual(parsed.right.config.limits?.maxTurns, 3)
    assert.lengthOf(parsed.right.warnings, 21)
    assert.strictEqual(parsed.right.warnings[0], "config.yaml:3:1: unknown key k0 is ignored")
    assert.strictEqual(parsed.right.warnings[20], "config.yaml: 4980 more unknown keys are ignored")
  })

  it("CFG-1: thousands of wrong values give 20 lines and a count of the rest", () => {
    const parsed = Config.parse(`mcpServers:\n${keys(5_000, "5").replace(/^/gm, "  ")}`, "config.yaml")
    assert.isTrue(Either.isLeft(parsed))
    if (Either.isRight(parsed)) return
    const lines = parsed.left.message.split("\n")
    assert.lengthOf(lines, 21)
    assert.strictEqual(lines[0], "config.yaml:2:7: mcpServers.k0: expected a mapping (key: value), got 5")
    assert.strictEqual(lines[20], "config.yaml: 4980 more problems")
  })

  it("CFG-1: a key written twice is found in a nested mapping, the first in the file reported", () => {
    const parsed = Config.parse(`${keys(3_000, "1")}b:\n  c: 1\n  c: 2\nk7: 3\n`, "config.yaml")
    assert.isTrue(Either.isLeft(parsed))
    if (Either.isRight(parsed)) return
    assert.strictEqual(parsed.left.message, "config.yaml:3003:3: b.c is set twice (lines 3002 and 3003): keep one")
  })

  it("CFG-1: a number too large for a double says so, not `got null`", () => {
    const parsed = Config.parse("limits:\n  timeoutMs: 1e400\n", "config.yaml")
    assert.isTrue(Either.isLeft(parsed))
    if (Either.isRight(parsed)) return
    assert.strictEqual(
      parsed.left.message,
      "config.yaml:2:14: limits.timeoutMs: expected an integer, got a number too large to hold (infinite)"
    )
  })

  it.scoped("CFG-1: a file over 1 MiB is refused with its size, before it is read", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const globalFile = path.join(dir, "config.yaml")
      yield* Effect.promise(() => fs.writeFile(globalFile, `# ${"x".repeat(2 * 1024 * 1024)}\n`))
      const error = yield* Config.make({ globalFile, trustProject: false }).pipe(
        Effect.provide(NodeFileSystem.layer),
        Effect.flip
      )
      assert.strictEqual(
        error.message,
        `${globalFile}: 2.0 MiB is too large for a configuration file (at most 1 MiB); is it the right file?`
      )
    })
  )

  const loadError = (globalFile: string) =>
    Config.make({ globalFile, trustProject: false }).pipe(Effect.provide(NodeFileSystem.layer), Effect.flip)

  it.scoped("CFG-1: a config.yaml linked to /dev/null is no configuration, not an error", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const globalFile = path.join(dir, "config.yaml")
      yield* Effect.promise(() => fs.symlink("/dev/null", globalFile))
      const loaded = yield* Config.make({ globalFile, trustProject: false }).pipe(Effect.provide(NodeFileSystem.layer))
      assert.deepStrictEqual(loaded.config, {})
      assert.deepStrictEqual(loaded.files, [])
    })
  )

  it.scoped("CFG-1: a config folder that is a file, or looping links, are said in words", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const home = path.join(dir, "home")
      yield* Effect.promise(() => fs.writeFile(home, ""))
      assert.strictEqual(
        (yield* loadError(path.join(home, "config.yaml"))).message,
        `${home}/config.yaml: cannot be read: a part of its path is a file, not a folder; check ALISIO_HOME and XDG_CONFIG_HOME`
      )
      const looping = path.join(dir, "config.yaml")
      yield* Effect.promise(() => fs.symlink(looping, looping))
      assert.strictEqual(
        (yield* loadError(looping)).message,
        `${looping}: cannot be read: its symbolic links form a loop`
      )
    })
  )
})
