import type { SessionId } from "@alisio/domain/Ids"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type Instructions, instructionsSection } from "./internal/context/instructions.js"
import { discoverSkills, type SkillDiscovery, skillsSection } from "./internal/context/skills.js"
import { type SourceOptions, skillRoots, untrustedFolders } from "./internal/context/sources.js"
import { contextSection } from "./internal/plugins/contributions.js"
import { PluginHost } from "./PluginHost.js"
import * as ProjectInstructions from "./ProjectInstructions.js"
import { Tools } from "./Tools.js"
import * as SkillTool from "./tools/Skill.js"

export type { FileDiagnostic } from "./internal/context/frontMatter.js"
export { formatDiagnostic } from "./internal/context/frontMatter.js"
export type { InstructionFile, Instructions } from "./internal/context/instructions.js"
export { DEFAULT_INSTRUCTIONS_CAP } from "./internal/context/instructions.js"
export type { Skill } from "./internal/context/skills.js"
export type { SourceOptions } from "./internal/context/sources.js"

/** One named part of the system context (`/context` lists them with their sizes). */
export interface ContextPart {
  readonly kind: "base" | "instructions" | "skills" | "plugin"
  /** What it is: `Alisio's base prompt`, a file's path, `skills`, `plugin memory`. */
  readonly name: string
  /** Where it comes from, in words: `built in`, `user`, `project`, `project (CLAUDE.md: no AGENTS.md there)`, … */
  readonly source: string
  readonly text: string
}

/** The system context of a run: its text, the parts it is made of, and what was cut or left out. */
export interface AssembledContext {
  readonly text: string
  readonly parts: ReadonlyArray<ContextPart>
  readonly notices: ReadonlyArray<string>
}

/** What a run tells the context: plugin context providers read it. */
export interface ContextRequest {
  readonly sessionId?: SessionId | undefined
  readonly prompt: string
  readonly model: string
}

export interface Options extends SourceOptions {
  /** The cap on the instructions' total size (default 32 KiB). */
  readonly instructionsCapBytes?: number | undefined
  /** The base prompt (default `basePrompt`). */
  readonly base?: ((cwd: string) => string) | undefined
}

/** Alisio's own prompt, first in every system context. */
export const basePrompt = (cwd: string): string =>
  [
    "You are Alisio, a coding agent working in a person's project.",
    `The workspace is ${cwd}; paths are relative to it.`,
    "Use the tools to read, search, change files and run commands; check your work before you answer.",
    "Answer concisely in plain text."
  ].join("\n")

/**
 * The one place the system context is assembled (CTX-2), for `alisio run` and every surface: the
 * base prompt, the instruction files (AGENTS.md, the user's first, then the repository root down
 * to the workspace), the skills' names and descriptions, and what plugins add — each part named.
 * Skills are found once, when the service is built (then the `skill` tool is registered, if there
 * is one); the instruction files are read on every `build`, so edits apply to the next run.
 */
export class SystemContext extends Context.Tag("@alisio/runtime/SystemContext")<
  SystemContext,
  {
    readonly build: (request: ContextRequest) => Effect.Effect<AssembledContext>
    /** The instruction files as the next run gets them. */
    readonly instructions: Effect.Effect<Instructions>
    /** The skills in effect, those an earlier folder shadowed, and the problems of their files. */
    readonly skills: SkillDiscovery
    /** The project's template and skill folders left unread because the project is not trusted. */
    readonly untrusted: ReadonlyArray<string>
    readonly options: Options
  }
>() {}

const instructionSource = (file: Instructions["files"][number]): string =>
  file.scope === "user" ? "user" : file.fallback ? "project (CLAUDE.md: the folder has no AGENTS.md)" : "project"

export const make = (options: Options) =>
  Effect.gen(function* () {
    const host = Option.getOrUndefined(yield* Effect.serviceOption(PluginHost))
    const cwd = ProjectInstructions.realpath(options.cwd)
    const base = (options.base ?? basePrompt)(options.cwd)
    const files = ProjectInstructions.make({
      configHome: options.configHome,
      home: options.home,
      capBytes: options.instructionsCapBytes
    })
    const [skills, untrusted] = yield* Effect.all(
      [Effect.flatMap(skillRoots(options), discoverSkills), untrustedFolders(options)],
      {
        concurrency: "unbounded"
      }
    )

    const instructions = files.read(cwd)

    const build = (request: ContextRequest) =>
      Effect.gen(function* () {
        const [read, plugins] = yield* Effect.all(
          [
            instructions,
            host === undefined
              ? Effect.succeed([])
              : host.contextSections({
                  sessionId: request.sessionId,
                  cwd,
                  prompt: request.prompt,
                  model: request.model
                })
          ],
          { concurrency: "unbounded" }
        )
        const parts: Array<ContextPart> = [
          { kind: "base", name: "Alisio's base prompt", source: "built in", text: base }
        ]
        for (const file of read.files) {
          parts.push({ kind: "instructions", name: file.file, source: instructionSource(file), text: file.text })
        }
        const skillList = skills.skills.length === 0 ? undefined : skillsSection(skills.skills)
        if (skillList !== undefined) {
          parts.push({ kind: "skills", name: "skills", source: `${skills.skills.length} skills`, text: skillList })
        }
        for (const section of plugins) {
          parts.push({
            kind: "plugin",
            name: `plugin ${section.pluginId}`,
            source: "a context provider",
            text: section.text
          })
        }
        const sections = [base, instructionsSection(read), skillList, ...plugins.map(contextSection)]
        return {
          text: sections.filter((section) => section !== undefined).join("\n\n"),
          parts,
          notices: read.notice === undefined ? [] : [read.notice]
        }
      })

    return SystemContext.of({ build, instructions, skills, untrusted, options })
  })

/**
 * The service, and the `skill` tool (origin Core, effect `read`) in `Tools` while there is at
 * least one skill; removed when the layer is released. Uses the `PluginHost` when there is one.
 */
export const layer = (options: Options): Layer.Layer<SystemContext, never, Tools> =>
  Layer.scoped(
    SystemContext,
    Effect.gen(function* () {
      const context = yield* make(options)
      if (context.skills.skills.length > 0) {
        const tools = yield* Tools
        const tool = SkillTool.make(context.skills.skills)
        yield* Effect.acquireRelease(tools.add(tool, { _tag: "Core" }), (added) =>
          added ? tools.remove(tool) : Effect.void
        )
      }
      return context
    })
  )
