import type { SessionId } from "@alisio/domain/Ids"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** What one compaction did (CTX-1). */
export interface CompactionResult {
  /** Estimated tokens of the request history before and after. */
  readonly tokensBefore: number
  readonly tokensAfter: number
  /** How many stored messages the summary now stands for. */
  readonly messagesCompacted: number
}

/** A compaction that could not be done; `message` says why and what to do. */
export class CompactionError extends Schema.TaggedError<CompactionError>()("CompactionError", {
  sessionId: Schema.String,
  message: Schema.String
}) {}

/**
 * Long sessions (CTX-1): older turns summarised by the model into a compaction message that
 * requests use instead of them; the stored messages stay. The runner compacts on its own when a
 * request would pass the window; `compact` is the same by hand (`/compact [focus]`).
 */
export class Compaction extends Context.Tag("@alisio/runtime/Compaction")<
  Compaction,
  {
    readonly compact: (
      sessionId: SessionId,
      options?: { readonly focus?: string | undefined }
    ) => Effect.Effect<CompactionResult, CompactionError>
  }
>() {}
