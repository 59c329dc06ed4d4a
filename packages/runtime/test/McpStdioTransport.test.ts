// Our stdio transport's reading of a server's stdout (internal/mcp/stdioTransport.ts): lines split
// across writes or sharing one, CRLF endings, and lines that are not JSON-RPC (reported, skipped).

import { spawnServer } from "@alisio/runtime/internal/mcp/stdioTransport"
import { assert, describe, it } from "@effect/vitest"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"

// Writes its stdout in pieces, a pause between them: one message cut in the middle of a UTF-8
// character, others sharing a write with lines that are not JSON-RPC.
const server = `
const pieces = [
  "a line a server printed\\n",
  '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a"}}\\r\\n42\\n[1,2]\\n',
  '{"hello":1}\\nnull\\n{"jsonrpc":"2.0","id":1,"result":{"text":"caf',
  Buffer.from([0xc3]),
  Buffer.concat([Buffer.from([0xa9]), Buffer.from('"}}\\n{"jsonrpc":"2.0","id":2,"result":{}}')]),
  "\\n"
]
const next = () => {
  const piece = pieces.shift()
  if (piece === undefined) return setTimeout(() => process.exit(0), 50)
  process.stdout.write(piece, () => setTimeout(next, 30))
}
next()
`

describe("MCP stdio transport", () => {
  it.live(
    "MCP-1 a server's stdout is read line by line, whatever the writes; lines that are not JSON-RPC are reported and skipped",
    () =>
      Effect.gen(function* () {
        const transport = spawnServer({
          command: process.execPath,
          args: ["-e", server],
          env: process.env as { readonly [name: string]: string },
          cwd: process.cwd(),
          stderr: undefined
        })
        const messages: Array<JSONRPCMessage> = []
        const errors: Array<string> = []
        transport.onmessage = (message) => void messages.push(message)
        transport.onerror = (error) => void errors.push(error.message)
        yield* Effect.promise(() => transport.start())
        yield* Effect.promise(() => transport.ended)
        transport.released()
        assert.deepStrictEqual(messages, [
          { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "a" } },
          { jsonrpc: "2.0", id: 1, result: { text: "café" } },
          { jsonrpc: "2.0", id: 2, result: {} }
        ])
        assert.strictEqual(errors.length, 5)
        assert.match(errors[0]!, /JSON/)
        assert.deepStrictEqual(errors.slice(1), [
          "Not a JSON-RPC 2.0 message: 42",
          "Not a JSON-RPC 2.0 message: [1,2]",
          'Not a JSON-RPC 2.0 message: {"hello":1}',
          "Not a JSON-RPC 2.0 message: null"
        ])
      })
  )
})
