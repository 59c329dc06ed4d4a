import * as fs from "node:fs"
import * as os from "node:os"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  DEFAULT_INSTRUCTIONS_CAP,
  findProjectRoot,
  type Instructions,
  instructionFolders,
  instructionsSection,
  locateInstructions,
  readInstructions
} from "./internal/context/instructions.js"
import { userInstructionFiles } from "./internal/context/sources.js"

export interface Options {
  /** `<config>`, where the person's own AGENTS.md is. */
  readonly configHome: string
  /** The user's home folder, for `~/.claude/CLAUDE.md`; left out, it is not read. */
  readonly home?: string | undefined
  /** The cap on the instructions' total size (default 32 KiB). */
  readonly capBytes?: number | undefined
}

/** A workspace's real path (symbolic links resolved), or the path as given when it does not exist. */
export const realpath = (dir: string): string => {
  try {
    return fs.realpathSync(dir)
  } catch {
    return dir
  }
}

/**
 * The instruction files (CTX-2) of any workspace, read as a run there gets them: the person's own,
 * then AGENTS.md from the repository root down to the workspace. A child session gets those of its
 * own workspace (a subagent's git worktree included), as the root run gets them in its system
 * context. Below the plugin host and ChildSessions in the Layer graph, unlike `SystemContext`.
 */
export class ProjectInstructions extends Context.Tag("@alisio/runtime/ProjectInstructions")<
  ProjectInstructions,
  {
    readonly read: (cwd: string) => Effect.Effect<Instructions>
    /** The instructions as a system prompt holds them, or `undefined` when there are none. */
    readonly section: (cwd: string) => Effect.Effect<string | undefined>
  }
>() {}

export const make = (options: Options): ProjectInstructions["Type"] => {
  const userFiles = userInstructionFiles({ ...options, cwd: "", trustProject: false })
  const capBytes = options.capBytes ?? DEFAULT_INSTRUCTIONS_CAP
  const read = (cwd: string) =>
    Effect.gen(function* () {
      const workspace = realpath(cwd)
      const repositoryRoot = yield* findProjectRoot(workspace, options.home ?? os.homedir())
      const sources = yield* locateInstructions({
        userFiles,
        folders: instructionFolders(workspace, repositoryRoot),
        within: repositoryRoot ?? workspace
      })
      return yield* readInstructions(sources, capBytes, repositoryRoot)
    })
  return ProjectInstructions.of({ read, section: (cwd) => Effect.map(read(cwd), instructionsSection) })
}

export const layer = (options: Options): Layer.Layer<ProjectInstructions> =>
  Layer.succeed(ProjectInstructions, make(options))
