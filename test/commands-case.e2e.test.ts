// End-to-end: a slash command typed in capitals through `alisio run` (CMD-1): `/Upper x` runs the
// template listed as /upper; text in capitals that names no command is a prompt, and a lower-case
// name no command has is still an unknown command.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ok } from "./support/sessions.js"
import { useWorld } from "./support/world.js"

describe("slash commands typed in capitals (end to end)", () => {
  const world = useWorld()

  it('CMD-1 `alisio run "/Upper x"` runs /upper; `/Usr is…` goes to the model as typed; `/nosuch` is still unknown', async () => {
    const { server, sandbox } = await world({ replyFor: () => ({ kind: "text", text: "Done." }) })
    mkdirSync(join(sandbox.home, "prompts"), { recursive: true })
    writeFileSync(join(sandbox.home, "prompts", "Upper.md"), "Shout $ARGUMENTS in capitals.\n")
    assert.match(ok(await sandbox.run(["commands", "list"])).stdout, /^\/upper +template/m)

    const sentPrompts = () =>
      server!.requests
        .filter((request) => request.path.endsWith("/chat/completions"))
        .map((request) => String((request.body.messages ?? []).filter((m) => m.role === "user").at(-1)?.content ?? ""))
    ok(await sandbox.run(["run", "-m", "openai/test-model", "/Upper", "hello"]), "run /Upper hello")
    ok(await sandbox.run(["run", "-m", "openai/test-model", "/UPPER", "again"]), "run /UPPER again")
    ok(await sandbox.run(["run", "-m", "openai/test-model", "/Usr is a folder?"]), "run /Usr is…")
    assert.deepStrictEqual(sentPrompts(), ["Shout hello in capitals.", "Shout again in capitals.", "/Usr is a folder?"])

    const unknown = await sandbox.run(["run", "-m", "openai/test-model", "/nosuch x"])
    assert.strictEqual(unknown.code, 2)
    assert.include(unknown.stderr, "No command is named /nosuch")
    assert.strictEqual(sentPrompts().length, 3)
  }, 60_000)
})
