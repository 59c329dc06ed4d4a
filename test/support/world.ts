// What most end-to-end tests start with: a local OpenAI-compatible server and an Alisio sandbox
// pointed at it, both closed after each test whether it passed or not.
import { afterEach } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./openaiServer.js"

export interface World {
  readonly server: OpenAiTestServer
  readonly sandbox: CliSandbox
}

/** Call in a `describe`: the returned function starts a server with `options` and its sandbox. */
export const useWorld = () => {
  let world: World | undefined
  afterEach(async () => {
    const ending = world
    world = undefined
    await ending?.server.close()
    ending?.sandbox.cleanup()
  })
  return async (options: Parameters<typeof startOpenAiServer>[0]): Promise<World> => {
    const server = await startOpenAiServer(options)
    world = { server, sandbox: makeSandbox(server.baseURL) }
    return world
  }
}
