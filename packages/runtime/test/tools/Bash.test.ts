import * as fs from "node:fs"
import * as Bash from "@alisio/runtime/tools/Bash"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import { awaitProgress, call, callFails, makeContext, tempDir, textOf } from "./context.js"

/** Whether a process still runs; a zombie nobody reaps (PID 1 in some containers) counts as gone. */
const running = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    try {
      process.kill(pid, 0)
      return process.platform !== "linux"
    } catch {
      return false
    }
  }
}

const pidIn = (text: string): number => Number(/pid=(\d+)/.exec(text)?.[1])

describe("bash", () => {
  it.scoped("TL-1 runs in the workspace, streams output as progress, returns exit code and output", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const test = yield* makeContext(dir)
      const text = yield* call(Bash.make(), { command: "pwd; echo out; echo err >&2; exit 3" }, test.context)
      assert.strictEqual(text, `${dir}\nout\nerr\n[exit code 3]`)
      assert.strictEqual((yield* Ref.get(test.progress)).join(""), `${dir}\nout\nerr\n`)
      assert.strictEqual(yield* call(Bash.make(), { command: "true" }, test.context), "(no output)\n[exit code 0]")
    })
  )

  it.scoped("TL-1 keeps the head and tail of long output and says what was cut", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const test = yield* makeContext(dir)
      const text = yield* call(Bash.make({ maxOutputChars: 40 }), { command: "seq 1 10000" }, test.context)
      assert.strictEqual(
        text,
        "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n[… 48854 characters of output cut …]\n997\n9998\n9999\n10000\n[exit code 0]"
      )
      // Progress streams everything; only the result is capped.
      assert.strictEqual((yield* Ref.get(test.progress)).join("").length, 48_894)
    })
  )

  it.scoped("TL-1 CLI-2 interruption stops the whole process group, grandchildren included", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const test = yield* makeContext(dir)
      const fiber = yield* Effect.fork(
        Bash.make().execute({ command: 'sleep 30 & echo "pid=$!"; echo "bash=$$"; wait' }, test.context)
      )
      const seen = yield* awaitProgress(test, (text) => text.includes("bash="))
      const sleeper = pidIn(seen)
      const shell = Number(/bash=(\d+)/.exec(seen)?.[1])
      assert.isTrue(running(sleeper))
      yield* Fiber.interrupt(fiber)
      assert.isFalse(running(sleeper), "the sleep grandchild is gone")
      assert.isFalse(running(shell), "bash is gone")
    })
  )

  it.scoped("TL-1 a process ignoring SIGTERM is killed after the grace", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const test = yield* makeContext(dir)
      const fiber = yield* Effect.fork(
        Bash.make({ killGraceMs: 100 }).execute(
          { command: "(trap '' TERM; exec sleep 30) & echo \"pid=$!\"; wait" },
          test.context
        )
      )
      const sleeper = pidIn(yield* awaitProgress(test, (text) => text.includes("\n")))
      yield* Fiber.interrupt(fiber)
      assert.isFalse(running(sleeper))
    })
  )

  it.scoped("TL-1 the per-call timeout follows the Clock and stops the group", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const test = yield* makeContext(dir)
      const fiber = yield* Effect.fork(
        Bash.make().execute({ command: 'sleep 30 & echo "pid=$!"; wait', timeout_ms: 5_000 }, test.context)
      )
      const sleeper = pidIn(yield* awaitProgress(test, (text) => text.includes("\n")))
      yield* TestClock.adjust("5 seconds")
      const result = yield* Fiber.join(fiber)
      assert.isTrue(result.isError)
      assert.strictEqual(
        textOf(result),
        `pid=${sleeper}\n[timed out after 5000 ms; the command and its child processes were stopped]`
      )
      assert.isFalse(running(sleeper))
    })
  )

  it.scoped("TL-1 processes left in the background are stopped when the command ends", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const test = yield* makeContext(dir)
      const text = yield* call(Bash.make(), { command: 'sleep 30 & echo "pid=$!"' }, test.context)
      assert.match(text, /^pid=\d+\n\[exit code 0\]\n\[processes it left in the background were stopped\]$/)
      assert.isFalse(running(pidIn(text)))
    })
  )

  it.scoped("TL-1 rejects a bad timeout argument", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const test = yield* makeContext(dir)
      assert.include(
        yield* callFails(Bash.make(), { command: "true", timeout_ms: -1 }, test.context),
        "Invalid arguments for bash"
      )
    })
  )
})
