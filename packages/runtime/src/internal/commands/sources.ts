import type { Limits } from "@alisio/domain/Limits"
// The commands of each source as the catalog takes them: the builtin ones, the plugin host's,
// templates and skills.

import { allSurfaces, CommandError, type CommandInvocation, type CommandOutput } from "@alisio/domain/Command"
import { SessionId } from "@alisio/domain/Ids"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { PluginHost } from "../../PluginHost.js"
import { terminalSafe } from "../../TerminalText.js"
import { loadSkillBody, type Skill } from "../context/skills.js"
import type { CatalogCommand, CoreCommand, CoreServices, SurfaceCommand } from "./entry.js"
import { expandTemplate, type Template, templatePrompt } from "./templates.js"

/** What the catalog passes to core commands besides the invocation. */
export interface CoreEnvironment {
  readonly services: Context.Context<CoreServices>
  readonly cwd: string
  readonly defaultModel: string | undefined
  readonly limits?: Limits | undefined
}

/** A builtin command without an argument hint takes none: what was typed after it is refused, not dropped unseen. */
const noArguments = (name: string, args: string) =>
  new CommandError({
    reason: "usage",
    command: name,
    message: `/${name} takes no arguments (${JSON.stringify(args.length > 40 ? `${args.slice(0, 40)}…` : args)} was given); type /${name} alone.`
  })

/**
 * A core command's text as a terminal may show it: what it lists comes from files and plugins
 * (a skill's description decoded from YAML's `\e`, a plugin's tool description), so escape
 * sequences and control characters are removed, as from a plugin command's output.
 */
const shownSafely = (output: CommandOutput): CommandOutput =>
  output._tag === "Prompt" ? output : { ...output, text: terminalSafe(output.text) }

export const fromCore = (command: CoreCommand, environment: CoreEnvironment): CatalogCommand => ({
  name: command.name,
  description: command.description,
  source: "builtin",
  surfaces: command.surfaces ?? allSurfaces,
  execution: "core",
  argumentHint: command.argumentHint,
  from: "core",
  run: (args, invocation) =>
    command.argumentHint === undefined && args !== ""
      ? Effect.fail(noArguments(command.name, args))
      : Effect.map(
          Effect.provide(
            command.run({
              name: command.name,
              args,
              sessionId: invocation.sessionId === undefined ? undefined : SessionId.make(invocation.sessionId),
              cwd: invocation.cwd ?? environment.cwd,
              defaultModel: environment.defaultModel,
              limits: environment.limits,
              surface: invocation.surface
            }),
            environment.services
          ),
          shownSafely
        )
})

export const fromSurface = (command: SurfaceCommand): CatalogCommand => ({
  name: command.name,
  description: command.description,
  source: "builtin",
  surfaces: command.surfaces,
  execution: "surface",
  argumentHint: command.argumentHint,
  from: "core"
})

/** The plugin host's commands, run through it: their text, or their failure as the command's. */
export const pluginCommands = (host: PluginHost["Type"], cwd: string): Effect.Effect<ReadonlyArray<CatalogCommand>> =>
  Effect.map(host.commands.list, (entries) =>
    entries.map(
      (entry): CatalogCommand => ({
        name: entry.name,
        description: entry.description,
        source: "plugin",
        surfaces: entry.surfaces,
        execution: "core",
        argumentHint: entry.argumentHint,
        from: `plugin ${entry.pluginId}`,
        run: (args, invocation: CommandInvocation) =>
          host.commands.run(entry.name, args, { sessionId: invocation.sessionId, cwd: invocation.cwd ?? cwd }).pipe(
            Effect.map((output): CommandOutput => ({ _tag: "Text", text: output })),
            Effect.mapError(
              (error) => new CommandError({ reason: "failed", command: entry.name, message: error.message })
            )
          )
      })
    )
  )

export const fromTemplate = (template: Template): CatalogCommand => ({
  name: template.name,
  description: template.description,
  source: "template",
  surfaces: allSurfaces,
  execution: "prompt",
  argumentHint: template.argumentHint,
  from: template.file,
  run: (args) =>
    Effect.flatMap(templatePrompt(template, args), (read) =>
      "problem" in read
        ? Effect.fail(new CommandError({ reason: "failed", command: template.name, message: read.problem }))
        : Effect.succeed<CommandOutput>({ _tag: "Prompt", prompt: read.prompt })
    )
})

/** The prompt `/skill:<id> args` sends: the skill's instructions, then the arguments (or where they go). */
export const skillPrompt = (skill: Skill, body: string, args: string): string =>
  [
    `Use the skill "${skill.id}" for this task. Its instructions follow (from ${skill.file}; the files they refer to are in ${skill.folder}).`,
    "",
    expandTemplate(body, args, { positional: false })
  ].join("\n")

export const fromSkill = (skill: Skill): CatalogCommand => ({
  name: `skill:${skill.id}`,
  description: skill.description,
  source: "skill",
  surfaces: allSurfaces,
  execution: "prompt",
  from: skill.file,
  run: (args) =>
    Effect.flatMap(loadSkillBody(skill), (read) =>
      "problem" in read
        ? Effect.fail(new CommandError({ reason: "failed", command: `skill:${skill.id}`, message: read.problem }))
        : Effect.succeed<CommandOutput>({ _tag: "Prompt", prompt: skillPrompt(skill, read.body, args) })
    )
})
