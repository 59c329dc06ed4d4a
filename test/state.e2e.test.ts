// End-to-end: the state home is private (ST-6) — new files 0600 in 0700 folders, and what an
// older Alisio left readable by others is narrowed, which the CLI says once on stderr.

import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { useWorld } from "./support/world.js"

/** Makes the state folder and its database files read-only for the CLI (root ignores modes: the immutable flag); returns the undo. */
const readOnly = (state: string): (() => void) => {
  const files = [
    state,
    ...["alisio.db", "alisio.db-wal", "alisio.db-shm"].map((f) => join(state, f)).filter(existsSync)
  ]
  if (process.getuid?.() === 0) {
    execFileSync("chattr", ["+i", ...files])
    return () => execFileSync("chattr", ["-i", ...files])
  }
  for (const file of files) chmodSync(file, file === state ? 0o500 : 0o400)
  return () => {
    for (const file of files) chmodSync(file, file === state ? 0o700 : 0o600)
  }
}

const mode = (path: string) => statSync(path).mode & 0o777
const notice = "was readable by other users; made it private"

describe("alisio state permissions (end to end)", () => {
  const world = useWorld()

  it("ST-6 state left readable by others is made private, and the CLI says so once", async () => {
    const { sandbox } = await world({
      replies: [1, 2, 3].map((n) => ({ kind: "text", text: `answer ${n}` }) as const)
    })
    const state = join(sandbox.home, "state")
    const run = () => sandbox.run(["run", "-m", "openai/test-model", "hello"])

    const fresh = await run()
    assert.strictEqual(fresh.code, 0, fresh.stderr)
    assert.notInclude(fresh.stderr, notice)
    assert.deepStrictEqual([state, join(state, "alisio.db")].map(mode), [0o700, 0o600])

    // As an older Alisio (or a loose umask) left them; older versions also remembered a model here.
    chmodSync(state, 0o755)
    chmodSync(join(state, "alisio.db"), 0o644)
    writeFileSync(join(state, "active-model.json"), '{"provider":"openai","model":"test-model"}\n', { mode: 0o644 })
    chmodSync(join(state, "active-model.json"), 0o644)
    const narrowed = await run()
    assert.strictEqual(narrowed.code, 0, narrowed.stderr)
    const lines = narrowed.stderr.split("\n").filter((line) => line.includes(notice))
    assert.strictEqual(lines.length, 1, narrowed.stderr)
    assert.include(lines[0], `alisio: the state in ${state}`)
    assert.include(lines[0], ". (was 0755)")
    assert.include(lines[0], "alisio.db (was 0644)")
    assert.include(lines[0], "active-model.json (was 0644)")
    assert.deepStrictEqual(
      [state, join(state, "alisio.db"), join(state, "active-model.json")].map(mode),
      [0o700, 0o600, 0o600]
    )

    const again = await run()
    assert.strictEqual(again.code, 0, again.stderr)
    assert.notInclude(again.stderr, notice)
  })

  it("ST-1/ST-4 a read-only state home is still read by the sessions commands, even with a run a killed process left running", async () => {
    const { sandbox } = await world({
      replies: [
        { kind: "text", text: "first answer" },
        { kind: "text", text: "partial", stallAfter: true }
      ]
    })
    const state = join(sandbox.home, "state")
    const first = await sandbox.run(["run", "--json", "--final", "-m", "openai/test-model", "hello"])
    assert.strictEqual(first.code, 0, first.stderr)
    const { sessionId } = JSON.parse(first.stdout) as { sessionId: string }
    const reads = [
      ["sessions", "list"],
      ["sessions", "show", sessionId],
      ["sessions", "events", sessionId],
      ["sessions", "export", sessionId, "--format", "md"]
    ]

    // Closed cleanly: only alisio.db is left, and a WAL database cannot make its -shm file here.
    let undo = readOnly(state)
    try {
      for (const args of reads) {
        const result = await sandbox.run(args)
        assert.strictEqual(result.code, 0, `${args.join(" ")}: ${result.stderr}`)
        assert.strictEqual(result.stderr, "", args.join(" "))
      }
      assert.include((await sandbox.run(["sessions", "show", sessionId])).stdout, "first answer")
      const write = await sandbox.run(["run", "-m", "openai/test-model", "-s", sessionId, "more"])
      assert.strictEqual(write.code, 1)
      assert.match(
        write.stderr,
        /^alisio: Cannot write .*alisio\.db: its folder .* is read-only\. Make the file and its folder writable/
      )
    } finally {
      undo()
    }

    // A run killed mid-answer leaves its run running, which reading would reconcile by writing.
    const running = sandbox.start(["run", "--json", "-m", "openai/test-model", "-s", sessionId, "hang"])
    await running.waitFor("text_delta")
    running.child.kill("SIGKILL")
    await running.done
    undo = readOnly(state)
    try {
      for (const args of reads) {
        const result = await sandbox.run(args)
        assert.strictEqual(result.code, 0, `${args.join(" ")}: ${result.stderr}`)
      }
      assert.include((await sandbox.run(["sessions", "show", sessionId])).stdout, "you: hang")
    } finally {
      undo()
    }
  })
  it.skipIf(!existsSync("/proc/self"))(
    "ST-6 an ALISIO_HOME where no folder can be made (under /proc) fails at once with one line, in every command that writes",
    async () => {
      const { sandbox } = await world({ replies: [] })
      const home = "/proc/alisio-no-such/home"
      const commands = [
        ["config", "set", "limits.maxTurns", "5"],
        ["sessions", "list"],
        ["run", "-m", "openai/test-model", "hello"],
        ["install", "npm:alisio-plugin-none"]
      ]
      for (const args of commands) {
        const result = await sandbox.run(args, { env: { ALISIO_HOME: home } })
        assert.oneOf(result.code, [1, 2], `${args.join(" ")}: ${result.stderr}`)
        const lines = result.stderr.trimEnd().split("\n")
        assert.strictEqual(lines.length, 1, `${args.join(" ")}: ${result.stderr}`)
        assert.match(lines[0]!, /^alisio: .*\/proc\/alisio-no-such.*ENOENT/, args.join(" "))
      }
    },
    60_000
  )

  it("CFG-1 a relative ALISIO_HOME is refused with one line naming an absolute one; nothing is made in the current folder", async () => {
    const { server, sandbox } = await world({ replies: [{ kind: "text", text: "never" }] })
    for (const args of [
      ["run", "-m", "openai/test-model", "hello"],
      ["sessions", "list"],
      ["config", "path"]
    ]) {
      for (const relative of [".alisio-home", "./state/alisio"]) {
        const result = await sandbox.run(args, { env: { ALISIO_HOME: relative } })
        assert.strictEqual(result.code, 2, `${args.join(" ")}: ${result.stderr}`)
        assert.strictEqual(result.stdout, "")
        const lines = result.stderr.trimEnd().split("\n")
        assert.strictEqual(lines.length, 1, result.stderr)
        assert.match(
          lines[0]!,
          /^alisio: ALISIO_HOME is a relative path \(".+"\): .*set it to an absolute path, e\.g\. ALISIO_HOME="\$PWD\//
        )
      }
    }
    assert.isFalse(existsSync(join(sandbox.workspace, ".alisio-home")))
    assert.isFalse(existsSync(join(sandbox.workspace, "state")))
    assert.strictEqual(server.requests.length, 0)
    // `~` is the user's home, as before.
    const home = await sandbox.run(["config", "path"], { env: { ALISIO_HOME: "~/alisio" } })
    assert.strictEqual(home.code, 0, home.stderr)
  })
})
