// End to end: a subagent working in its own git worktree (`parallelWrites: worktree`) writes a file,
// then waits on the model when Ctrl-C (a real SIGINT) stops the built `alisio run`. Its partial work
// is kept on its branch, and the cancelled `task` call's stored result says where and how to take
// it: the resumed session's request to the model carries the branch, the folder and `/agents merge`.
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { RecordedRequest } from "./support/openaiServer.js"
import { useWorld } from "./support/world.js"

const systemOf = (request: RecordedRequest): string => {
  const first = request.body.messages?.[0]
  return first?.role === "system" && typeof first.content === "string" ? first.content : ""
}

const isSubagent = (request: RecordedRequest) => /You are the subagent "/.test(systemOf(request))

const lastRole = (request: RecordedRequest) => request.body.messages?.at(-1)?.role

const waitUntil = async (check: () => boolean, ms = 30_000) => {
  const end = Date.now() + ms
  while (!check() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 25))
  return check()
}

const git = (cwd: string, args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@localhost", ...args], {
    cwd,
    encoding: "utf8"
  })

describe("a cancelled subagent's worktree (end to end)", () => {
  const world = useWorld()

  it("CH-4 CLI-2 after SIGINT stops a subagent in its worktree, the resumed session tells the model its branch, folder and /agents merge", async () => {
    let childWaiting = false
    const { server, sandbox } = await world({
      replyFor: (request) => {
        if (isSubagent(request)) {
          if (lastRole(request) === "tool") {
            childWaiting = true
            return { kind: "stall" }
          }
          return { kind: "tool", id: "call_write", name: "write", args: { path: "partial.txt", content: "half done" } }
        }
        if (JSON.stringify(request.body.messages).includes("Go on")) return { kind: "text", text: "Resumed." }
        return {
          kind: "tool",
          id: "call_task",
          name: "task",
          args: { description: "write the note", prompt: "Write partial.txt.", subagent_type: "general" }
        }
      }
    })
    writeFileSync(join(sandbox.workspace, "README.md"), "a repository\n")
    git(sandbox.workspace, ["init", "-q", "-b", "main"])
    git(sandbox.workspace, ["add", "."])
    git(sandbox.workspace, ["commit", "-q", "-m", "start"])
    mkdirSync(sandbox.home, { recursive: true })
    writeFileSync(join(sandbox.home, "config.yaml"), "builtinPlugins:\n  subagents:\n    parallelWrites: worktree\n")

    const running = sandbox.start(["run", "--yes", "--json", "-m", "openai/test-model", "Delegate the note"])
    assert.isTrue(await waitUntil(() => childWaiting), `the subagent wrote and waits: ${running.stderr()}`)
    running.child.kill("SIGINT")
    const stopped = await running.done
    assert.strictEqual(stopped.code, 130, stopped.stderr)
    assert.isFalse(existsSync(join(sandbox.workspace, "partial.txt")), "the workspace is untouched")
    const branch = git(sandbox.workspace, ["branch", "--list", "alisio/*", "--format=%(refname:short)"]).trim()
    assert.match(branch, /^alisio\/[0-9a-f]{8}$/, "the cancelled work is kept on a branch")
    assert.strictEqual(git(sandbox.workspace, ["show", `${branch}:partial.txt`]), "half done")
    const taskId = branch.slice("alisio/".length)

    const resumed = await sandbox.run(["run", "-c", "-m", "openai/test-model", "Go on"])
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    const sent = server.requests.filter((request) => !isSubagent(request)).at(-1)!
    const told = sent.body.messages?.find((message) => message.role === "tool")
    const text = JSON.stringify(told?.content)
    assert.include(text, "The tool call was cancelled before it finished.")
    assert.include(text, `on the branch ${branch}`)
    assert.include(text, `/agents merge ${taskId}`)
    assert.include(text, `partial.txt`)
    const folder = /its own git worktree (\S+) on the branch/.exec(text)?.[1]
    assert.isDefined(folder, text)
    assert.isTrue(existsSync(join(folder!, "partial.txt")), `the folder named holds the work: ${folder}`)
  }, 90_000)
})
