// Progress notifications routed to our calls as the transport delivers them (internal/mcp/progress.ts):
// each call's token reaches its own call, in order; anything else goes on to the SDK.
import type { ProgressRoute, ProgressUpdate } from "@alisio/runtime/internal/mcp/progress"
import { progressToken, routeProgress } from "@alisio/runtime/internal/mcp/progress"
import { assert, describe, it } from "@effect/vitest"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"

/** A call as the routes see it, noting what reached it. */
const route = (heard: Array<string>, name: string): ProgressRoute => ({
  routeId: 0,
  previousRoute: undefined,
  nextRoute: undefined,
  progressed: (update: ProgressUpdate) => void heard.push(`${name} ${update.progress}`)
})

const progress = (token: unknown, value: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: token as string, progress: value }
})

describe("MCP progress routes", () => {
  it("MCP-1 each call's progress reaches it by its token, in order; a removed call's and foreign ones go to the SDK", () => {
    const heard: Array<string> = []
    const sdk: Array<unknown> = []
    const transport = { onmessage: (message: JSONRPCMessage) => void sdk.push(message) } as unknown as Transport
    const routes = routeProgress(transport)
    const deliver = (message: JSONRPCMessage) => transport.onmessage?.(message)
    const a = route(heard, "a")
    const b = route(heard, "b")
    const c = route(heard, "c")
    routes.add(a)
    routes.add(b)
    routes.add(c)
    const [tokenA, tokenB, tokenC] = [progressToken(a), progressToken(b), progressToken(c)]
    assert.strictEqual(new Set([tokenA, tokenB, tokenC]).size, 3)
    deliver(progress(tokenB, 1))
    deliver(progress(tokenA, 1))
    deliver(progress(tokenB, 2))
    routes.remove(b)
    deliver(progress(tokenB, 3))
    deliver(progress(tokenC, 1))
    routes.remove(a)
    routes.remove(c)
    routes.remove(c)
    deliver(progress(tokenA, 2))
    const result: JSONRPCMessage = { jsonrpc: "2.0", id: 1, result: {} }
    deliver(result)
    deliver(progress(7, 1))
    deliver(progress(`${tokenC}0`, 1))
    assert.deepStrictEqual(heard, ["b 1", "a 1", "b 2", "c 1"])
    assert.deepStrictEqual(sdk, [
      progress(tokenB, 3),
      progress(tokenA, 2),
      result,
      progress(7, 1),
      progress(`${tokenC}0`, 1)
    ])
  })
})
