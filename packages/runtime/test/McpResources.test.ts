// MCP resources on the real SDK fixture server (MCP-1): listed from running servers, read by URI,
// and attached to a prompt by `@<server>:<uri>` mentions (text, image, other binary, capped text),
// with one clear error naming a mention that cannot be read.
import type { ImagePart, TextPart } from "@alisio/domain/Message"
import { McpServers, mentionAttachments } from "@alisio/runtime/McpServers"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mcpWorld, stdioFixture } from "./helpers/mcp.js"

const texts = (parts: ReadonlyArray<TextPart | ImagePart>) =>
  parts.flatMap((part) => (part._tag === "text" ? [part.text] : [`<image ${part.mediaType}>`]))

describe("McpServers resources", () => {
  it.scopedLive("MCP-1 resources of running servers are listed; reading one starts its server", () =>
    Effect.gen(function* () {
      const { context, world } = yield* mcpWorld({ fixture: stdioFixture() })
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        assert.deepStrictEqual(yield* mcp.resources, [], "no server runs yet, and listing starts none")
        assert.deepStrictEqual(world.trace("starts.txt"), [])
        const contents = yield* mcp.readResource("fixture", "memo://one")
        assert.deepStrictEqual(contents, [
          { uri: "memo://one", mimeType: "text/plain", text: "the memo's text: 42 apples" }
        ])
        assert.strictEqual(world.trace("starts.txt").length, 1)
        const listed = yield* mcp.resources
        assert.deepStrictEqual(
          listed.map((resource) => `${resource.server}:${resource.uri}`),
          [
            "fixture:memo://one",
            "fixture:img://pixel",
            "fixture:bin://data",
            "fixture:memo://large",
            "fixture:memo://broken",
            "fixture:memo://slow"
          ]
        )
        assert.strictEqual(listed[0]!.description, "A short memo")
      }).pipe(Effect.provide(context))
    })
  )

  it.scopedLive("MCP-1 @<server>:<uri> attaches text, images and binary resources, marked with server and URI", () =>
    Effect.gen(function* () {
      const { context } = yield* mcpWorld({ fixture: stdioFixture(), off: stdioFixture({ enabled: false }) })
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        const parts = yield* mentionAttachments(
          mcp,
          "Compare @fixture:memo://one with @fixture:img://pixel and @fixture:bin://data. Mail me@example.com:25, " +
            "@nobody:memo://one and @off:memo://one stay text; @fixture:memo://one twice."
        )
        assert.deepStrictEqual(texts(parts), [
          "[MCP resource memo://one from the server fixture (text/plain)]\nthe memo's text: 42 apples",
          "[MCP resource img://pixel from the server fixture (image/png): the image that follows]",
          "<image image/png>",
          "[MCP resource bin://data from the server fixture (application/octet-stream): 300 bytes of binary content, not attached]"
        ])
        const large = yield* mentionAttachments(mcp, "@fixture:memo://large")
        const text = (large[0] as TextPart).text
        assert.isBelow(text.length, 31_000, "capped like a tool result")
        assert.match(text, /BEGINy+/)
        assert.match(text, /y+END$/)
        assert.deepStrictEqual(yield* mentionAttachments(mcp, "no mention, @fixture alone, email@fixture:x"), [])
      }).pipe(Effect.provide(context))
    })
  )

  it.scopedLive("MCP-1 a mention that cannot be read fails with one line naming it and why", () =>
    Effect.gen(function* () {
      const { context } = yield* mcpWorld(
        {
          fixture: stdioFixture(),
          bare: stdioFixture({ env: { MCP_FIXTURE_NO_RESOURCES: "1" } }),
          dead: { type: "stdio", command: process.execPath, args: ["-e", "process.exit(2)"] }
        },
        { callMs: 500 }
      )
      yield* Effect.gen(function* () {
        const mcp = yield* McpServers
        const failure = (prompt: string) =>
          Effect.map(Effect.flip(mentionAttachments(mcp, prompt)), (error) => error.message)
        assert.strictEqual(
          yield* failure("see @fixture:memo://broken"),
          "Cannot attach @fixture:memo://broken: the MCP server fixture refused: the fixture's resource failed on purpose"
        )
        assert.strictEqual(
          yield* failure("see @fixture:memo://missing"),
          "Cannot attach @fixture:memo://missing: the MCP server fixture refused: Resource memo://missing not found"
        )
        assert.strictEqual(
          yield* failure("see @bare:memo://one"),
          "Cannot attach @bare:memo://one: the MCP server bare offers no resources"
        )
        assert.strictEqual(
          yield* failure("see @fixture:memo://slow"),
          "Cannot attach @fixture:memo://slow: the MCP server fixture did not answer within 500ms"
        )
        assert.match(
          yield* failure("see @dead:memo://one"),
          /^Cannot attach @dead:memo:\/\/one: the MCP server dead is not running: exited with code 2 before answering/
        )
      }).pipe(Effect.provide(context))
    })
  )
})
