import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { ToolError } from "@alisio/domain/Errors"
import type { ToolContext } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"

/** A path a tool may use: inside the workspace, or outside with the person's approval. */
export interface ResolvedPath {
  /** Absolute, lexically resolved against the workspace. */
  readonly absolute: string
  /** With symlinks resolved as far as the path exists. */
  readonly real: string
  /** How results name it: relative to the workspace when inside, else absolute. */
  readonly display: string
  readonly inside: boolean
}

/**
 * Resolves a tool's path argument against `context.cwd` (TL-3). A path leading outside the
 * workspace, by `..`, an absolute path or a symlink, needs `approveExternalPath` first.
 */
export const resolvePath = (context: ToolContext, input: string): Effect.Effect<ResolvedPath, ToolError> =>
  Effect.gen(function* () {
    const expanded =
      input === "~" ? os.homedir() : input.startsWith("~/") ? path.join(os.homedir(), input.slice(2)) : input
    const absolute = path.resolve(context.cwd, expanded)
    const [workspace, real] = yield* Effect.promise(() =>
      Promise.all([realpathOfExisting(context.cwd), realpathOfExisting(absolute)])
    )
    const inside = isWithin(workspace, real)
    if (!inside) yield* context.approveExternalPath(absolute)
    const lexicallyInside = isWithin(path.resolve(context.cwd), absolute)
    const display = lexicallyInside ? path.relative(context.cwd, absolute) || "." : absolute
    return { absolute, real, display, inside }
  })

/** How a path below a resolved root is shown, in the style of the root's `display`. */
export const displayBelow = (root: ResolvedPath, relative: string): string =>
  relative === "" ? root.display : root.display === "." ? relative : path.join(root.display, relative)

const isWithin = (root: string, candidate: string): boolean =>
  candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep)

/** The real path of `target`, or of its deepest existing ancestor joined with the rest. */
const realpathOfExisting = async (target: string): Promise<string> => {
  try {
    return await fs.realpath(target)
  } catch {
    const parent = path.dirname(target)
    if (parent === target) return target
    return path.join(await realpathOfExisting(parent), path.basename(target))
  }
}

/** Turns a Node file-system failure into a message the model can act on. */
export const fsError =
  (display: string) =>
  (error: unknown): ToolError => {
    const code = (error as NodeJS.ErrnoException | undefined)?.code
    const message =
      code === "ENOENT"
        ? `${display} does not exist`
        : code === "EACCES" || code === "EPERM"
          ? `permission denied: ${display}`
          : code === "EISDIR"
            ? `${display} is a directory`
            : code === "ENOTDIR"
              ? `${display}: a part of the path is not a directory`
              : code === "ENOSPC"
                ? `no space left on the device writing ${display}`
                : `${display}: ${error instanceof Error ? error.message : String(error)}`
    return new ToolError({ message })
  }

/** Runs a Node file-system call, failing with a readable `ToolError` about `display`. */
export const tryFs = <A>(display: string, run: () => Promise<A>): Effect.Effect<A, ToolError> =>
  Effect.tryPromise({ try: run, catch: fsError(display) })
