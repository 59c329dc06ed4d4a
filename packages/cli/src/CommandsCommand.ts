import { allSurfaces, CommandListing } from "@alisio/domain/Command"
import { CommandCatalog, columns } from "@alisio/runtime/CommandCatalog"
import { formatDiagnostic, SystemContext } from "@alisio/runtime/SystemContext"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { loadSetup, runtimeLayer } from "./App.js"
import type { PluginFlags } from "./Plugins.js"
import { catalogLayer, startMcpServers } from "./Slash.js"

const encodeListing = Schema.encodeSync(CommandListing)

/** What a line says besides the description: the surfaces when not all, where from, what shadows it. */
const notes = (listing: CommandListing): string => {
  const parts: Array<string> = []
  if (listing.shadowedBy !== undefined) {
    parts.push(`shadowed by the ${listing.shadowedBy.source} command of ${listing.shadowedBy.from}`)
  }
  if (listing.execution === "surface") parts.push(`interactive (${listing.surfaces.join(", ")})`)
  else if (listing.surfaces.length < allSurfaces.length) parts.push(`only ${listing.surfaces.join(", ")}`)
  if (listing.from !== "core") parts.push(listing.from)
  return parts.length === 0 ? "" : `  · ${parts.join(" · ")}`
}

/** `alisio commands list`: every slash command, its source and where it comes from, shadowed ones too (CMD-1). */
export const listCommands = (flags: {
  readonly json: boolean
  readonly cwd: Option.Option<string>
  readonly trustProject: boolean
  readonly plugin: ReadonlyArray<string>
  readonly disablePlugin: ReadonlyArray<string>
  readonly readOnly: boolean
}) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({
      ...(Option.isSome(flags.cwd) ? { cwd: flags.cwd.value } : {}),
      trustProject: flags.trustProject,
      projectMcp: true
    })
    const plugins: PluginFlags = {
      plugins: flags.plugin,
      disabled: flags.disablePlugin,
      readOnly: flags.readOnly,
      trustProject: flags.trustProject
    }
    const program = Effect.gen(function* () {
      const catalog = yield* CommandCatalog
      const context = yield* SystemContext
      // The MCP servers' prompts are commands too: the servers start to tell them.
      yield* startMcpServers
      const listings = yield* catalog.list()
      const diagnostics = yield* catalog.diagnostics
      if (flags.json) {
        const document = {
          commands: listings.map((listing) => encodeListing(listing)),
          diagnostics,
          untrusted: context.untrusted
        }
        process.stdout.write(`${JSON.stringify(document, null, 2)}\n`)
        return
      }
      const rows = listings.map((listing) => [
        `/${listing.name}${listing.argumentHint === undefined ? "" : ` ${listing.argumentHint}`}`,
        listing.source,
        `${listing.description}${notes(listing)}`
      ])
      const lines = [...columns(rows)]
      for (const diagnostic of diagnostics) lines.push(`! ${formatDiagnostic(diagnostic)}`)
      if (context.untrusted.length > 0) {
        lines.push(`Not read (the project is not trusted; --trust-project reads them): ${context.untrusted.join(", ")}`)
      }
      // Descriptions come from files a cloned repository may hold: text only.
      process.stdout.write(`${terminalSafe(lines.join("\n"))}\n`)
    })
    yield* program.pipe(
      Effect.provide(
        catalogLayer(setup, flags.trustProject).pipe(
          Layer.provideMerge(runtimeLayer(setup, { approveAll: false, plugins, quiet: true }))
        )
      )
    )
  })
