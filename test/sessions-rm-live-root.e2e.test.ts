// End to end: `alisio sessions rm` of a child session while its root session's run goes on in
// another process (a subagent's session, its task done, its parent still waiting on the model).
// The deletion is refused with one line naming that run and the remedy; nothing is deleted, the
// run ends cleanly, and the child can be deleted once it has (CLI-1, ST-1, CH-1).
import { assert, describe, it } from "@effect/vitest"
import type { RecordedRequest } from "./support/openaiServer.js"
import { count, ok, withDatabase } from "./support/sessions.js"
import { useWorld } from "./support/world.js"

const systemOf = (request: RecordedRequest): string => {
  const first = request.body.messages?.[0]
  return first?.role === "system" && typeof first.content === "string" ? first.content : ""
}

const isSubagent = (request: RecordedRequest) => /You are the subagent "/.test(systemOf(request))

describe("sessions rm of a child whose root has a live run (end to end)", () => {
  const world = useWorld()

  it("CLI-1 sessions rm of a child session refuses while its root's run goes on in another process; nothing is deleted", async () => {
    const { sandbox: box } = await world({
      replyFor: (request) => {
        if (isSubagent(request)) return { kind: "text", text: "explored" }
        if (request.body.messages?.at(-1)?.role === "tool") return { kind: "stall" }
        return {
          kind: "tools",
          calls: [
            {
              id: "call_task",
              name: "task",
              args: { description: "look around", prompt: "Look around.", subagent_type: "explore" }
            }
          ]
        }
      }
    })
    const running = box.start([
      "run",
      "--json",
      "--yes",
      "-m",
      "openai/test-model",
      "--first-token-timeout",
      "10m",
      "go"
    ])
    await running.waitFor('"type":"tool_call_completed"')
    const [root, child] = withDatabase(box, (db) => [
      (db.prepare("SELECT id FROM sessions WHERE parent_id IS NULL").all()[0] as { id: string }).id,
      (db.prepare("SELECT id FROM sessions WHERE parent_id IS NOT NULL").all()[0] as { id: string }).id
    ])
    assert.isDefined(child)

    const refused = await box.run(["sessions", "rm", "--yes", child!.slice(0, 8)])
    assert.strictEqual(refused.code, 2, refused.stderr)
    assert.match(
      refused.stderr,
      new RegExp(
        `^alisio: Session ${child} belongs to session ${root}, which has a run in progress \\(pid ${running.child.pid}( on \\S+)?\\): ` +
          "wait for that run to end, or stop it \\(Ctrl-C where it runs, or kill \\d+\\), then delete the session\\.\\n$"
      )
    )
    assert.strictEqual(count(box, "sessions", "id = ?", child), 1, "the child was deleted")
    assert.isAbove(count(box, "events", "session_id = ?", child), 0)

    running.child.kill("SIGINT")
    const ended = await running.done
    assert.strictEqual(ended.code, 130, ended.stderr)
    assert.include(ended.stdout, '"type":"run_cancelled"')
    assert.notInclude(ended.stderr, "FOREIGN KEY")
    ok(await box.run(["sessions", "rm", "--yes", child!.slice(0, 8)]))
    assert.strictEqual(count(box, "sessions", "id = ?", child), 0)
    assert.strictEqual(count(box, "sessions", "id = ?", root), 1)
    ok(await box.run(["sessions", "list"]))
  }, 60_000)
})
