// A server's resources through the SDK's client: `resources/list` (every page) and `resources/read`.
// Imported with the SDK (`sdk.ts`), only once a server started.
import * as Effect from "effect/Effect"
import { allPages, type Connection, messageOf, SDK_TIMEOUT_MS } from "./connection.js"
import { McpCallError } from "./errors.js"

/** What a server says of one of its resources (`resources/list`). */
export interface McpResourceInfo {
  readonly uri: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
}

/** One item of what `resources/read` returned: text, or a base64 blob. */
export interface McpResourceContent {
  readonly uri: string
  readonly mimeType?: string | undefined
  readonly text?: string | undefined
  readonly blob?: string | undefined
}

export const listResources = (connection: Connection): Effect.Effect<ReadonlyArray<McpResourceInfo>, string> =>
  connection.hasResources
    ? allPages(async (cursor) => {
        const result = await connection.client.listResources(cursor === undefined ? {} : { cursor }, {
          timeout: SDK_TIMEOUT_MS
        })
        return { items: result.resources as ReadonlyArray<McpResourceInfo>, next: result.nextCursor }
      })
    : Effect.succeed([])

export const readResource = (
  connection: Connection,
  uri: string
): Effect.Effect<ReadonlyArray<McpResourceContent>, McpCallError> =>
  connection.hasResources
    ? Effect.tryPromise({
        try: async () =>
          (await connection.client.readResource({ uri }, { timeout: SDK_TIMEOUT_MS }))
            .contents as ReadonlyArray<McpResourceContent>,
        catch: (error) =>
          new McpCallError({
            message: `refused: ${messageOf(error).replace(/^(MCP error -?\d+: )+/, "")}`,
            closed: false
          })
      })
    : Effect.fail(new McpCallError({ message: "offers no resources", closed: false }))
