// Which words of a prompt are `@<server>:<uri>` mentions (MCP-1), without a server.
import { findMentions } from "@alisio/runtime/internal/mcp/mentions"
import { assert, describe, it } from "@effect/vitest"

const uris = (text: string) => findMentions(text, ["fs", "docs"]).map((m) => `${m.server} ${m.uri}`)

describe("MCP mentions", () => {
  it("MCP-1 a mention ends at a space; sentence punctuation and closing brackets are not part of its URI", () => {
    assert.deepStrictEqual(uris("read @fs:file:///tmp/dir/ then @docs:guide://a.md."), [
      "fs file:///tmp/dir/",
      "docs guide://a.md"
    ])
    assert.deepStrictEqual(uris("(see @docs:x://y?q=1), or @fs:z://w!"), ["docs x://y?q=1", "fs z://w"])
  })

  it("MCP-1 only configured servers, after a space or at the start, each once", () => {
    assert.deepStrictEqual(uris("@fs:a://b me@fs:c://d @other:e://f @fs:a://b"), ["fs a://b"])
    assert.deepStrictEqual(uris("@fs: alone, @fs:"), [])
  })
})
