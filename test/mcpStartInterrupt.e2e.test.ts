// End-to-end: Ctrl-C while a run waits for its MCP servers to start, before its first model
// request, keeps the prompt: the session is stored with it and the run ends cancelled, to be
// resumed as any stopped run is (CLI-2, MCP-1, ST-3).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { withDatabase } from "./support/sessions.js"
import { useWorld } from "./support/world.js"

const fixture = fileURLToPath(new URL("../packages/runtime/test/fixtures/mcp/server.mjs", import.meta.url))

const waitUntil = async (check: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms
  while (!check() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 25))
  return check()
}

/** Whether a process runs; a zombie nobody reaps (PID 1 in some containers) counts as gone. */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

describe("Ctrl-C while the MCP servers start (end to end)", () => {
  const world = useWorld()
  let serverPid: string | undefined
  afterEach(() => {
    try {
      if (serverPid !== undefined) process.kill(Number(serverPid), "SIGKILL")
    } catch {
      // Already gone, as it should be.
    }
    serverPid = undefined
  })

  it("CLI-2 MCP-1 SIGINT while a run waits for a slow MCP server keeps the prompt: a session with it, the run cancelled, resumable", async () => {
    const { sandbox, server } = await world({ replies: [{ kind: "text", text: "resumed and answered" }] })
    mkdirSync(sandbox.home, { recursive: true })
    writeFileSync(
      join(sandbox.home, "config.yaml"),
      `mcpServers:
  slow:
    command: node
    args: ["${fixture}"]
    env:
      MCP_FIXTURE_DIR: "${sandbox.workspace}"
      MCP_FIXTURE_SLOW_FIRST_START_MS: "60000"
`
    )
    const pidFile = join(sandbox.workspace, "server.pid")
    const running = sandbox.start([
      "run",
      "--json",
      "-m",
      "openai/test-model",
      "--max-context-tokens",
      "100000",
      "the prompt I typed with care"
    ])
    assert.isTrue(await waitUntil(() => existsSync(pidFile)), `the server started: ${running.stderr()}`)
    serverPid = readFileSync(pidFile, "utf8")
    running.child.kill("SIGINT")
    const result = await running.done
    assert.strictEqual(result.code, 130, result.stderr)
    const types = result.stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { type: string }).type)
    assert.deepStrictEqual(types, ["run_started", "message", "run_cancelled"], result.stdout)
    assert.isTrue(await waitUntil(() => !alive(Number(serverPid))), "the server stopped with the CLI")
    assert.strictEqual(server.requests.filter((request) => request.path.endsWith("/chat/completions")).length, 0)

    const [session] = withDatabase(sandbox, (db) => db.prepare("SELECT id FROM sessions").all()) as Array<{
      id: string
    }>
    assert.isDefined(session, "a session was stored")
    assert.deepStrictEqual(
      withDatabase(sandbox, (db) => db.prepare("SELECT status FROM runs").all()),
      [{ status: "cancelled" }]
    )
    const shown = await sandbox.run(["sessions", "show", session!.id])
    assert.include(shown.stdout, "the prompt I typed with care", shown.stderr)

    const resumed = await sandbox.run(["run", "-s", session!.id, "-m", "openai/test-model", "go on"])
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    assert.strictEqual(resumed.stdout, "resumed and answered\n")
    const sent = server.requests.find((request) => request.path.endsWith("/chat/completions"))!
    assert.include(JSON.stringify(sent.body.messages), "the prompt I typed with care")
  }, 60_000)
})
