// End-to-end: a session stored before the bound on the tool calls of one response (TL-4), holding
// 1 000 calls in one assistant message, resumed against the OpenAI-protocol test server: the
// request sends the first MAX_TOOL_CALLS_PER_RESPONSE calls and one note, each call with its result.

import { join } from "node:path"
import { MAX_TOOL_CALLS_PER_RESPONSE } from "@alisio/domain/Limits"
import type { Message } from "@alisio/domain/Message"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"
import { ok, runTask } from "./support/sessions.js"

const FLOOD = 1_000

/** The sandbox's session database through the real store, for the life of `body`. */
const withStore = <A>(
  sandbox: CliSandbox,
  body: (store: SessionStore.SessionStore["Type"]) => Effect.Effect<A, unknown>
) =>
  Effect.flatMap(SessionStore.SessionStore, body).pipe(
    Effect.provide(SessionStore.layer({ filename: join(sandbox.home, "state", "alisio.db") })),
    Effect.orDie
  )

describe("TL-4 a session stored before the bound on calls per response (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let sandbox: CliSandbox | undefined
  afterEach(async () => {
    await server?.close()
    sandbox?.cleanup()
  })

  it.live(
    `TL-4 CTX-1 resuming a stored response of ${FLOOD} calls sends its first ${MAX_TOOL_CALLS_PER_RESPONSE} with their results and one note for the rest`,
    () =>
      Effect.gen(function* () {
        server = yield* Effect.promise(() =>
          startOpenAiServer({
            replies: [
              { kind: "text", text: "first answer" },
              { kind: "text", text: "second answer" }
            ]
          })
        )
        sandbox = makeSandbox(server.baseURL)
        const box = sandbox
        const session = yield* Effect.promise(() => runTask(box, "first"))
        const calls = Array.from({ length: FLOOD }, (_, i) => ({
          _tag: "tool_call" as const,
          id: `call_${i}` as never,
          name: i % 5 === 0 ? "ls" : "read",
          arguments: JSON.stringify({ path: `file-${i}` })
        }))
        const stored: ReadonlyArray<Message> = [
          { role: "user", content: [{ _tag: "text", text: "read every file" }] },
          { role: "assistant", content: [{ _tag: "text", text: "Reading them all." }, ...calls] },
          ...calls.map(
            (call): Message => ({
              role: "tool",
              toolCallId: call.id,
              toolName: call.name,
              content: [{ _tag: "text", text: `content of ${call.id}` }],
              isError: false
            })
          ),
          { role: "assistant", content: [{ _tag: "text", text: "All read." }] }
        ]
        const before = yield* withStore(box, (store) =>
          Effect.zipRight(store.appendMessages(session.id as never, stored), store.messages(session.id as never))
        )

        ok(yield* Effect.promise(() => box.run(["run", "-s", session.id, "what next?"])), "the resumed run")

        const body = server.requests.filter((request) => request.path.endsWith("/chat/completions"))[1]!.body
        const messages = body.messages as ReadonlyArray<Record<string, unknown>>
        const asked = messages.filter((m) => Array.isArray(m.tool_calls))
        assert.strictEqual(asked.length, 1)
        const sentCalls = asked[0]!.tool_calls as ReadonlyArray<{ readonly id: string }>
        const kept = MAX_TOOL_CALLS_PER_RESPONSE + 1
        assert.deepStrictEqual(
          sentCalls.map((call) => call.id),
          calls.slice(0, kept).map((call) => call.id)
        )
        assert.strictEqual(asked[0]!.content, "Reading them all.")
        const results = messages.filter((m) => m.role === "tool")
        assert.deepStrictEqual(
          results.map((m) => m.tool_call_id),
          calls.slice(0, kept).map((call) => call.id),
          "every call sent has its result, in order, and no other result is sent"
        )
        assert.strictEqual(results[0]!.content, "content of call_0")
        assert.strictEqual(
          results[MAX_TOOL_CALLS_PER_RESPONSE - 1]!.content,
          `content of call_${MAX_TOOL_CALLS_PER_RESPONSE - 1}`
        )
        const leftOut = (name: string) => calls.slice(MAX_TOOL_CALLS_PER_RESPONSE).filter((c) => c.name === name).length
        const note = results[MAX_TOOL_CALLS_PER_RESPONSE]!.content as string
        assert.include(note, `asked for ${FLOOD}`)
        assert.include(note, `The first ${MAX_TOOL_CALLS_PER_RESPONSE} are sent with their results`)
        assert.include(
          note,
          `this call and the ${FLOOD - kept} after it (read ×${leftOut("read")}, ls ×${leftOut("ls")})`
        )
        const text = JSON.stringify(body)
        assert.notInclude(text, `call_${kept}"`)
        assert.notInclude(text, `content of call_${MAX_TOOL_CALLS_PER_RESPONSE}"`)
        assert.deepStrictEqual(
          messages.slice(-2).map((m) => [m.role, m.content]),
          [
            ["assistant", "All read."],
            ["user", "what next?"]
          ]
        )

        // Nothing stored is lost: the bound is on what is sent.
        const after = yield* withStore(box, (store) => store.messages(session.id as never))
        assert.deepStrictEqual(
          after.slice(0, before.length).map((m) => m.message),
          before.map((m) => m.message)
        )
      })
  )
})
