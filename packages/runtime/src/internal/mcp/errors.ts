import * as Data from "effect/Data"

/** A server that could not start, said as a clause (`it exited with code 1 before answering`). */
export class McpStartError extends Data.TaggedError("McpStartError")<{
  readonly message: string
  /** The server's log file. */
  readonly log?: string | undefined
}> {}

/** A call that did not get a result; `closed` when the server went away meanwhile. */
export class McpCallError extends Data.TaggedError("McpCallError")<{
  readonly message: string
  readonly closed: boolean
}> {}
