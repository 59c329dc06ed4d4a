import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as Config from "@alisio/runtime/Config"
import * as ConfigEdits from "@alisio/runtime/ConfigEdits"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { takeOver } from "../src/internal/configLock.js"

const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "alisio-config-edits-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

const read = (file: string) => Effect.promise(() => fs.readFile(file, "utf8"))
const mode = (file: string) => Effect.promise(() => fs.stat(file).then((stat) => stat.mode & 0o777))

const written = `# yaml-language-server: $schema=./config.schema.json
# My settings
defaultModel: openai/gpt-4o # the old one
limits:
  maxTurns: 40 # enough
providers:
  local: { baseURL: "http://127.0.0.1:8080/v1" }
`

describe("ConfigEdits", () => {
  it.scoped("CFG-1 setDefaultModel changes defaultModel and keeps the rest of the file as written", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "config.yaml")
      yield* Effect.promise(() => fs.writeFile(file, written))
      yield* ConfigEdits.setDefaultModel(file, "local/qwen3-coder")
      const text = yield* read(file)
      assert.strictEqual(text, written.replace("openai/gpt-4o", "local/qwen3-coder"))
      const parsed = Either.getOrThrow(Config.parse(text, file))
      assert.strictEqual(parsed.config.defaultModel, "local/qwen3-coder")
    })
  )

  it.scoped("CFG-1 an existing file keeps its mode (0644 stays 0644) unless the edit writes a secret", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "config.yaml")
      yield* Effect.promise(() => fs.writeFile(file, written))
      yield* Effect.promise(() => fs.chmod(file, 0o644))
      yield* ConfigEdits.setIn(file, ["limits", "maxTurns"], 7)
      assert.strictEqual(yield* mode(file), 0o644)
      yield* ConfigEdits.setDefaultModel(file, "local/qwen3-coder")
      assert.strictEqual(yield* mode(file), 0o644)
      yield* ConfigEdits.setIn(file, ["providers", "local", "apiKey"], "sk-1", { secret: true })
      assert.strictEqual(yield* mode(file), 0o600)
      assert.include(yield* read(file), "apiKey: sk-1")
    })
  )

  it.scoped("CFG-1 setDefaultModel adds the key to a file without it, and creates a missing file privately", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const existing = path.join(dir, "config.yaml")
      yield* Effect.promise(() => fs.writeFile(existing, "limits:\n  maxTurns: 10\n"))
      yield* ConfigEdits.setDefaultModel(existing, "openai/o3")
      assert.strictEqual(yield* read(existing), "limits:\n  maxTurns: 10\ndefaultModel: openai/o3\n")

      const missing = path.join(dir, "new", "config.yaml")
      yield* ConfigEdits.setDefaultModel(missing, "openai/o3")
      assert.strictEqual(yield* read(missing), "defaultModel: openai/o3\n")
      assert.strictEqual(yield* mode(missing), 0o600)
      assert.strictEqual(yield* mode(path.dirname(missing)), 0o700)
    })
  )

  it.scoped("CFG-1 a configuration kept behind a symbolic link is changed where it lives", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const real = path.join(dir, "dotfiles", "alisio.yaml")
      const link = path.join(dir, "config.yaml")
      yield* Effect.promise(async () => {
        await fs.mkdir(path.dirname(real))
        await fs.writeFile(real, "defaultModel: openai/gpt-4o\n")
        await fs.symlink(real, link)
      })
      yield* ConfigEdits.setDefaultModel(link, "openai/o3")
      assert.isTrue((yield* Effect.promise(() => fs.lstat(link))).isSymbolicLink(), "the link is still a link")
      assert.strictEqual(yield* read(real), "defaultModel: openai/o3\n")
    })
  )

  it.scoped("CFG-1 a file that does not load is left alone, and the error names it and the problem", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "config.yaml")
      const broken = "limits:\n  maxTurns: many\n"
      yield* Effect.promise(() => fs.writeFile(file, broken))
      const error = yield* Effect.flip(ConfigEdits.setDefaultModel(file, "openai/o3"))
      assert.strictEqual(error._tag, "ConfigError")
      assert.include(error.message, `${file}:2:13: limits.maxTurns`)
      assert.include(error.message, "fix it, then try again")
      assert.strictEqual(yield* read(file), broken)
    })
  )

  it.scoped("CFG-1 a file that cannot be written fails with a ConfigError naming it", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const blocker = path.join(dir, "not-a-folder")
      yield* Effect.promise(() => fs.writeFile(blocker, ""))
      const file = path.join(blocker, "config.yaml")
      const error = yield* Effect.flip(ConfigEdits.setDefaultModel(file, "openai/o3"))
      assert.strictEqual(error._tag, "ConfigError")
      assert.include(error.message, `Could not write ${file}`)
    })
  )

  it.scoped("CFG-1 a file written with a byte-order mark and CRLF line ends keeps both", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "config.yaml")
      yield* Effect.promise(() => fs.writeFile(file, "\uFEFF# mine\r\nlimits:\r\n  maxTurns: 5\r\n"))
      yield* ConfigEdits.setIn(file, ["limits", "toolConcurrency"], 2)
      assert.strictEqual(yield* read(file), "\uFEFF# mine\r\nlimits:\r\n  maxTurns: 5\r\n  toolConcurrency: 2\r\n")
    })
  )

  it.scoped("CFG-1 a read-only file is refused and left as it is", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "config.yaml")
      yield* Effect.promise(() => fs.writeFile(file, "limits:\n  maxTurns: 5\n", { mode: 0o444 }))
      yield* Effect.promise(() => fs.chmod(file, 0o444))
      const error = yield* Effect.flip(ConfigEdits.setIn(file, ["limits", "maxTurns"], 9))
      assert.strictEqual(
        error.message,
        `${file} is read-only (mode 0444); it is left as it is: make it writable first (chmod u+w ${file}) if it is meant to change`
      )
      assert.strictEqual(yield* read(file), "limits:\n  maxTurns: 5\n")
      assert.strictEqual(yield* mode(file), 0o444)
    })
  )

  it.scoped(
    "CFG-1 a link to a pipe or a folder, a link that leads nowhere, or a huge file is refused and left as it is",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const file = path.join(dir, "config.yaml")
        const refusal = (value: number) =>
          Effect.map(Effect.flip(ConfigEdits.setIn(file, ["limits", "maxTurns"], value)), (error) => error.message)
        // As `config.yaml -> /dev/null` is: replaced by a file as root, when the edit followed it.
        const pipe = path.join(dir, "pipe")
        execFileSync("mkfifo", [pipe])
        yield* Effect.promise(() => fs.symlink(pipe, file))
        assert.strictEqual(
          yield* refusal(1),
          `${file} is not a regular file (it leads to ${pipe}); a configuration file must be one, so it is left as it is`
        )
        yield* Effect.promise(() => fs.rm(file))
        yield* Effect.promise(() => fs.symlink(dir, file))
        assert.include(yield* refusal(2), `${file} is not a regular file (it leads to ${dir})`)
        yield* Effect.promise(() => fs.rm(file))
        const nowhere = path.join(dir, "dotfiles", "alisio.yaml")
        yield* Effect.promise(() => fs.symlink(nowhere, file))
        assert.strictEqual(
          yield* refusal(3),
          `${file} is a symbolic link to ${nowhere}, which does not exist; create that file, or remove the link, then try again`
        )
        assert.strictEqual(yield* Effect.promise(() => fs.readlink(file)), nowhere)
        yield* Effect.promise(() => fs.rm(file))
        const huge = `limits:\n  maxTurns: 5\n${"# padding\n".repeat(120_000)}`
        yield* Effect.promise(() => fs.writeFile(file, huge))
        assert.strictEqual(
          yield* refusal(4),
          `${file}: 1.1 MiB is too large for a configuration file (at most 1 MiB); is it the right file?`
        )
        assert.strictEqual(yield* read(file), huge)
        assert.deepStrictEqual((yield* Effect.promise(() => fs.readdir(dir))).sort(), ["config.yaml", "pipe"])
      })
  )

  it.scoped(
    "CFG-1 a full disk fails the edit in one line, leaves the file, and leaves no lock holding off the next edit",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        // A 1 MiB file system of its own, filled (root can mount one; elsewhere there is nothing to test).
        const mounted = yield* Effect.sync(() => {
          try {
            execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir], { stdio: "ignore" })
            return true
          } catch {
            return false
          }
        })
        if (!mounted) return
        yield* Effect.addFinalizer(() => Effect.sync(() => execFileSync("umount", ["-l", dir])))
        const file = path.join(dir, "config.yaml")
        yield* Effect.promise(() => fs.writeFile(file, "# mine\n"))
        yield* Effect.promise(() =>
          fs.writeFile(path.join(dir, "fill"), Buffer.alloc(2 * 1024 * 1024)).catch(() => undefined)
        )
        for (const attempt of [1, 2]) {
          const error = yield* Effect.flip(ConfigEdits.setIn(file, ["limits", "maxTurns"], attempt))
          assert.strictEqual(
            error.message,
            `Could not write ${file}: the disk is full; free some space and try again (it is unchanged)`
          )
        }
        assert.strictEqual(yield* read(file), "# mine\n")
        assert.deepStrictEqual((yield* Effect.promise(() => fs.readdir(dir))).sort(), ["config.yaml", "fill"])
      })
  )

  it.live("CFG-1 edits made at the same time all land, and a lock left by a dead process is taken over", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = path.join(yield* tempDir, "config.yaml")
        yield* Effect.promise(() => fs.writeFile(file, "# mine\n"))
        // A process id no process has (above Linux's pid_max).
        yield* Effect.promise(() => fs.writeFile(`${file}.lock`, "4194305\n"))
        const keys = ["maxTurns", "toolConcurrency", "firstTokenRetries", "truncationRecoveries", "maxOutputTokens"]
        yield* Effect.all(
          keys.map((key, n) => ConfigEdits.setIn(file, ["limits", key], n + 1)),
          { concurrency: "unbounded" }
        )
        const parsed = Either.getOrThrow(Config.parse(yield* read(file), file))
        assert.deepStrictEqual(
          keys.map((key) => (parsed.config.limits as Record<string, unknown> | undefined)?.[key]),
          [1, 2, 3, 4, 5]
        )
        assert.isFalse(
          yield* Effect.promise(() =>
            fs.access(`${file}.lock`).then(
              () => true,
              () => false
            )
          )
        )
      })
    )
  )

  it.live("CFG-1 an edit waiting for another's lock is interrupted at once (Ctrl-C), and leaves that lock", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = path.join(yield* tempDir, "config.yaml")
        yield* Effect.promise(() => fs.writeFile(file, "# mine\n"))
        // Held by a live process that is not this one: the edit waits for it (up to ten seconds).
        const holder = yield* Effect.acquireRelease(
          Effect.sync(() => spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" })),
          (child) => Effect.sync(() => child.kill("SIGKILL"))
        )
        yield* Effect.promise(() => fs.writeFile(`${file}.lock`, `${holder.pid}\n`))
        const edit = yield* Effect.fork(ConfigEdits.setIn(file, ["limits", "maxTurns"], 3))
        yield* Effect.sleep("300 millis")
        const stopped = yield* Fiber.interrupt(edit).pipe(Effect.timeout("3 seconds"), Effect.option)
        assert.isTrue(Option.isSome(stopped), "the waiting edit ended when interrupted, not after its ten seconds")
        assert.strictEqual(yield* read(file), "# mine\n")
        assert.strictEqual(yield* read(`${file}.lock`), `${holder.pid}\n`, "the other's lock is left")
      })
    )
  )

  it.scoped("CFG-1 taking over a stale lock never removes a fresh one made meanwhile by another process", () =>
    Effect.gen(function* () {
      const lock = path.join(yield* tempDir, "config.yaml.lock")
      yield* Effect.promise(() => fs.writeFile(lock, "4194305\n"))
      const seen = yield* Effect.promise(async () => ({
        text: await fs.readFile(lock, "utf8"),
        ino: (await fs.stat(lock)).ino
      }))
      // Another process took the stale lock over first and holds a fresh one.
      yield* Effect.promise(async () => {
        await fs.rm(lock)
        await fs.writeFile(lock, "4194304\n")
      })
      yield* Effect.promise(() => takeOver(lock, seen))
      assert.strictEqual(yield* read(lock), "4194304\n", "the fresh lock is still there")
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(path.dirname(lock))), ["config.yaml.lock"])
      // The lock seen, unchanged, is removed.
      const fresh = yield* Effect.promise(async () => ({
        text: await fs.readFile(lock, "utf8"),
        ino: (await fs.stat(lock)).ino
      }))
      yield* Effect.promise(() => takeOver(lock, fresh))
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(path.dirname(lock))), [])
    })
  )

  it.scoped(
    "PRV-3 addPlugin and removePlugin edit the plugins list, keeping comments, entries with config and the rest",
    () =>
      Effect.gen(function* () {
        const file = path.join(yield* tempDir, "config.yaml")
        const start = "# mine\n\nplugins:\n  - source: alisio-plugin-weather # sunny\n    config: { units: metric }\n"
        yield* Effect.promise(() => fs.writeFile(file, start))
        assert.isTrue(yield* ConfigEdits.addPlugin(file, "alisio-provider-echo"))
        assert.isFalse(yield* ConfigEdits.addPlugin(file, "alisio-plugin-weather"))
        assert.strictEqual(yield* read(file), `${start}  - alisio-provider-echo\n`)
        assert.isTrue(yield* ConfigEdits.removePlugin(file, "alisio-plugin-weather"))
        assert.isFalse(yield* ConfigEdits.removePlugin(file, "alisio-plugin-weather"))
        assert.strictEqual(yield* read(file), "# mine\n\nplugins:\n  - alisio-provider-echo\n")
        assert.isTrue(yield* ConfigEdits.removePlugin(file, "alisio-provider-echo"))
        assert.strictEqual(yield* read(file), "# mine\n")
      })
  )

  it.scoped("PRV-3 addPlugin creates the list in a file without one, and the file when it is missing", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const other = path.join(dir, "other.yaml")
      yield* Effect.promise(() => fs.writeFile(other, "limits: { maxTurns: 3 }\n"))
      assert.isTrue(yield* ConfigEdits.addPlugin(other, "a"))
      assert.strictEqual(yield* read(other), "limits: { maxTurns: 3 }\nplugins:\n  - a\n")
      const missing = path.join(dir, "new", "config.yaml")
      yield* ConfigEdits.checkEditable(missing)
      assert.isFalse(
        yield* Effect.promise(() =>
          fs.access(missing).then(
            () => true,
            () => false
          )
        )
      )
      assert.isTrue(yield* ConfigEdits.addPlugin(missing, "b"))
      assert.strictEqual(yield* read(missing), "plugins:\n  - b\n")
      assert.strictEqual(yield* mode(missing), 0o600)
    })
  )

  it.scoped("PRV-3 removePlugin of the last entry keeps the comments above the plugins key, wherever it stood", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["# mine\nplugins:\n  - a # by name\nlimits:\n  maxTurns: 3\n", "# mine\nlimits:\n  maxTurns: 3\n"],
        ["limits:\n  maxTurns: 3\n# my plugins\nplugins:\n  - a\n", "limits:\n  maxTurns: 3\n# my plugins\n"],
        ["# only plugins\nplugins:\n  - a\n", "# only plugins\n"]
      ]
      for (const [index, [before, after]] of cases.entries()) {
        const file = path.join(dir, `config-${index}.yaml`)
        yield* Effect.promise(() => fs.writeFile(file, before))
        assert.isTrue(yield* ConfigEdits.removePlugin(file, "a"))
        assert.strictEqual(yield* read(file), after, before)
      }
    })
  )

  it.scoped(
    "CFG-1 PRV-3 plugin edits keep a flow list flow and every other setting byte for byte, CRLF line ends too",
    () =>
      Effect.gen(function* () {
        const file = path.join(yield* tempDir, "config.yaml")
        const rest =
          "limits: {maxTurns: 5}   # short runs\r\n" +
          "mcpServers:\r\n    gh: {command: gh, args: [mcp, --stdio, --read-only, --toolsets, repos, issues, pull_requests]}\r\n"
        yield* Effect.promise(() =>
          fs.writeFile(file, `# mine\r\nplugins: [./a, npm:alisio-plugin-weather]\r\n${rest}`)
        )
        assert.isTrue(yield* ConfigEdits.addPlugin(file, "./b"))
        assert.strictEqual(yield* read(file), `# mine\r\nplugins: [./a, npm:alisio-plugin-weather, ./b]\r\n${rest}`)
        assert.isTrue(yield* ConfigEdits.removePlugin(file, "npm:alisio-plugin-weather"))
        assert.strictEqual(yield* read(file), `# mine\r\nplugins: [./a, ./b]\r\n${rest}`)
        assert.isTrue(yield* ConfigEdits.removePlugin(file, (entry) => entry.startsWith("./")))
        assert.strictEqual(yield* read(file), `# mine\r\n${rest}`)
      })
  )
})
