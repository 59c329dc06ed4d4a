// Which project a memory belongs to: an id derived from the workspace's real path.
import { createHash } from "node:crypto"
import { realpath } from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"

/** The first 16 hex digits of sha256(real path); a path that cannot be resolved is used as given. */
export const projectIdOf = (cwd: string): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => realpath(cwd).catch(() => path.resolve(cwd))),
    (real) => createHash("sha256").update(real).digest("hex").slice(0, 16)
  )
