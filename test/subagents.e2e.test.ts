// End to end: the built `alisio run --yes --json` against a scripted OpenAI-compatible server whose
// model calls `task` twice in one response; the server answers the subagents too, told apart by
// their system prompt. Both subagents run at once (the JSONL shows both started before either
// ended), `alisio sessions show` draws the tree with the agents' names, and `/agents` lists both
// subagents through the command catalog (CH-4).
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it, onTestFinished } from "@effect/vitest"
import { makeSandbox } from "./support/cli.js"
import type { RecordedRequest, Reply } from "./support/openaiServer.js"
import { writePluginPackage } from "./support/pluginPackage.js"
import { useWorld } from "./support/world.js"

const systemOf = (request: RecordedRequest): string => {
  const first = request.body.messages?.[0]
  return first?.role === "system" && typeof first.content === "string" ? first.content : ""
}

const agentOf = (request: RecordedRequest) => /You are the subagent "([^"]+)"/.exec(systemOf(request))?.[1]

const lastRole = (request: RecordedRequest) => request.body.messages?.at(-1)?.role

describe("subagents (end to end)", () => {
  const world = useWorld()

  it("CH-4 run --json: two task calls in one response run both subagents at once; sessions show draws the tree", async () => {
    // Neither subagent gets its answer before both have asked: if they ran one after the other,
    // the first would wait here until the barrier gives up, and the order check below would fail.
    let arrived = 0
    let release: () => void = () => {}
    const barrier = new Promise<void>((resolve) => {
      release = resolve
      setTimeout(resolve, 15_000)
    })
    const answerFor = (agent: string): Reply => {
      arrived += 1
      if (arrived === 2) release()
      return { kind: "text", text: `${agent} report`, after: barrier }
    }
    const { server, sandbox } = await world({
      replyFor: (request) => {
        const agent = agentOf(request)
        if (agent !== undefined) return answerFor(agent)
        if (lastRole(request) === "tool") return { kind: "text", text: "Both subagents reported." }
        return {
          kind: "tools",
          calls: [
            {
              id: "call_explore",
              name: "task",
              args: { description: "find the loader", prompt: "Find the config loader.", subagent_type: "explore" }
            },
            {
              id: "call_plan",
              name: "task",
              args: { description: "plan the change", prompt: "Plan the refactor.", subagent_type: "plan" }
            }
          ]
        }
      }
    })
    const result = await sandbox.run(["run", "--yes", "--json", "-m", "openai/test-model", "Look into the loader"])
    assert.strictEqual(result.code, 0, result.stderr)
    const events = result.stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { type: string; sessionId: string; data: Record<string, unknown> })
    const at = (type: string) => events.flatMap((e, i) => (e.type === type ? [i] : []))
    const started = at("child_session_started")
    const ended = at("child_session_ended")
    assert.strictEqual(started.length, 2, result.stdout)
    assert.strictEqual(ended.length, 2, result.stdout)
    assert.isTrue(Math.max(...started) < Math.min(...ended), "both subagents started before either ended")
    assert.deepStrictEqual(started.map((i) => events[i]!.data.label).sort(), ["explore", "plan"])
    assert.deepStrictEqual(
      ended.map((i) => events[i]!.data.status),
      ["completed", "completed"]
    )
    const reports = events.flatMap((e) => (e.type === "tool_call_completed" ? [String(e.data.result)] : []))
    assert.isTrue(reports.some((r) => r.includes('agent="explore" status="completed"') && r.includes("explore report")))
    assert.strictEqual(events.at(-1)?.type, "run_completed")

    // The subagents' own requests: their agent's instructions and only their tools.
    const explore = server.requests.find((r) => agentOf(r) === "explore")!
    assert.match(systemOf(explore), /^You are a fast, read-only search agent/)
    const tools = (explore.body.tools as ReadonlyArray<{ function: { name: string } }>).map((t) => t.function.name)
    assert.deepStrictEqual(tools.sort(), ["glob", "grep", "ls", "read"])

    const root = events[0]!.sessionId
    const shown = await sandbox.run(["sessions", "show", root.slice(0, 8)])
    assert.strictEqual(shown.code, 0, shown.stderr)
    const tree = shown.stdout.split("child sessions\n")[1] ?? ""
    const lines = tree.split("\n").filter((line) => /^[├└]─/.test(line))
    assert.strictEqual(lines.length, 2, shown.stdout)
    assert.isTrue(
      lines.some((line) => /^[├└]─ \S{8} {2}completed {2}explore: find the loader$/.test(line)),
      tree
    )
    assert.isTrue(
      lines.some((line) => /^[├└]─ \S{8} {2}completed {2}plan: plan the change$/.test(line)),
      tree
    )

    // `/agents` through the command catalog, as `alisio run -s <id> "/agents"` runs it: no model call.
    const asked = server.requests.length
    const listed = await sandbox.run(["run", "-s", root.slice(0, 8), "/agents"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    const rows = listed.stdout.split("\n").filter((line) => /^[0-9a-f]{8} {2}/.test(line))
    assert.deepStrictEqual(rows.map((row) => row.split(/ {2,}/).slice(1, 3).join(" ")).sort(), [
      "completed explore",
      "completed plan"
    ])
    assert.isTrue(
      rows.some((row) => row.endsWith("explore report")),
      listed.stdout
    )
    assert.strictEqual(server.requests.length, asked)
  })

  it("CH-4 run -s <child session> is refused naming the root session, and sends nothing to the model", async () => {
    const { server, sandbox } = await world({
      replyFor: (request) => {
        if (agentOf(request) !== undefined) return { kind: "text", text: "explore report" }
        if (lastRole(request) === "tool") return { kind: "text", text: "Reported." }
        return {
          kind: "tool",
          id: "call_explore",
          name: "task",
          args: { description: "find the loader", prompt: "Find the config loader.", subagent_type: "explore" }
        }
      }
    })
    const result = await sandbox.run(["run", "--yes", "--json", "-m", "openai/test-model", "Look into the loader"])
    assert.strictEqual(result.code, 0, result.stderr)
    const started = result.stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { type: string; sessionId: string; data: { childSessionId?: string } })
    const parent = started[0]!.sessionId.slice(0, 8)
    const child = started.find((event) => event.type === "child_session_started")!.data.childSessionId!.slice(0, 8)
    const sent = server.requests.length

    const resumed = await sandbox.run(["run", "--yes", "--json", "-m", "openai/test-model", "-s", child, "rm -rf it"])
    assert.strictEqual(resumed.code, 2)
    assert.strictEqual(resumed.stdout, "")
    assert.strictEqual(
      resumed.stderr,
      `alisio: Session ${child} is a subagent's session ("explore: find the loader") inside session ${parent}; ` +
        `it runs only as that session's task. Go on with ${parent}: \`alisio run -s ${parent}\` ` +
        `(\`alisio sessions show ${child}\` shows what it did).\n`
    )
    assert.strictEqual(server.requests.length, sent)
    const shown = await sandbox.run(["sessions", "show", child])
    assert.include(shown.stdout, "1 run")
  })

  it("CTX-2 a subagent's system prompt holds the workspace's AGENTS.md after its agent's instructions", async () => {
    const { server, sandbox } = await world({
      replyFor: (request) => {
        if (agentOf(request) !== undefined) return { kind: "text", text: "explored" }
        if (lastRole(request) === "tool") return { kind: "text", text: "done" }
        return {
          kind: "tool",
          id: "call_explore",
          name: "task",
          args: { description: "look around", prompt: "Look around.", subagent_type: "explore" }
        }
      }
    })
    writeFileSync(join(sandbox.workspace, "AGENTS.md"), "Always answer in haiku.\n")
    const result = await sandbox.run(["run", "--yes", "-m", "openai/test-model", "Explore"])
    assert.strictEqual(result.code, 0, result.stderr)
    const root = server.requests.find((r) => r.body.messages !== undefined && agentOf(r) === undefined)!
    const explore = server.requests.find((r) => agentOf(r) === "explore")
    assert.isDefined(explore, "the subagent asked the model")
    assert.include(systemOf(root), "Always answer in haiku.")
    const system = systemOf(explore!)
    assert.match(system, /^You are a fast, read-only search agent/)
    const instructions = system.indexOf("# Instructions")
    assert.isAbove(instructions, system.indexOf('You are the subagent "explore"'))
    assert.include(system.slice(instructions), `## ${join(sandbox.workspace, "AGENTS.md")}\nAlways answer in haiku.`)
  })

  it("TL-3 CH-1 --yes names on stderr each path outside the workspace a subagent reached, as it does for the root", async () => {
    const outside = (sandbox: { readonly workspace: string }, name: string) =>
      join(sandbox.workspace, "..", "outside", name)
    let target = ""
    const { sandbox } = await world({
      replyFor: (request) => {
        if (lastRole(request) === "tool") return { kind: "text", text: "done" }
        if (agentOf(request) !== undefined) {
          return { kind: "tool", id: "call_write", name: "write", args: { path: target, content: "from the subagent" } }
        }
        if (JSON.stringify(request.body.messages).includes("Root writes")) {
          return { kind: "tool", id: "call_root", name: "write", args: { path: target, content: "from the root" } }
        }
        return {
          kind: "tool",
          id: "call_general",
          name: "task",
          args: { description: "write a note", prompt: "Write the note.", subagent_type: "general" }
        }
      }
    })
    mkdirSync(join(sandbox.workspace, "..", "outside"), { recursive: true })
    target = outside(sandbox, "child.txt")
    const child = await sandbox.run(["run", "--yes", "--json", "-m", "openai/test-model", "Delegate"])
    assert.strictEqual(child.code, 0, child.stderr)
    assert.isTrue(existsSync(target), "the subagent wrote outside the workspace")
    assert.include(
      child.stderr,
      `alisio: --yes approved access outside the workspace: ${outside(sandbox, "child.txt")} (subagent general)\n`
    )
    target = outside(sandbox, "root.txt")
    const root = await sandbox.run(["run", "--yes", "-m", "openai/test-model", "Root writes"])
    assert.strictEqual(root.code, 0, root.stderr)
    assert.isTrue(existsSync(target), "the root wrote outside the workspace")
    assert.include(
      root.stderr,
      `alisio: --yes approved access outside the workspace: ${outside(sandbox, "root.txt")}\n`
    )
  })

  it("CH-4 an external plugin's agents/ folder provides agents while it is loaded (--plugin)", async () => {
    const sandbox = makeSandbox("http://127.0.0.1:9")
    onTestFinished(() => sandbox.cleanup())
    const plugin = writePluginPackage(sandbox.home, "reviewers", {
      name: "alisio-plugin-reviewers",
      source: [
        'import { definePlugin } from "@alisio/domain/Plugin"',
        'import * as Effect from "effect/Effect"',
        'export default definePlugin({ id: "reviewers", version: "1.0.0", setup: Effect.void })',
        ""
      ].join("\n"),
      files: {
        "agents/security-reviewer.md":
          "---\nname: security-reviewer\ndescription: Reviews a change for security.\ntools: Read, Grep\n---\nYou review.\n"
      }
    })
    const withPlugin = await sandbox.run(["run", "--plugin", plugin, "/agents defs"])
    assert.strictEqual(withPlugin.code, 0, withPlugin.stderr)
    assert.match(withPlugin.stdout, /^security-reviewer {2}plugin \S+\/reviewers\/agents\/security-reviewer\.md$/m)
    assert.match(withPlugin.stdout, /^ {4}tools: read, grep$/m)
    const without = await sandbox.run(["run", "/agents defs"])
    assert.strictEqual(without.code, 0, without.stderr)
    assert.notInclude(without.stdout, "security-reviewer")
  })
})
