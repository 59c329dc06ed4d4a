// Precedence (CMD-1): pure functions over the commands of every source.

import { type CommandListing, type CommandSurface, sourceRank } from "@alisio/domain/Command"
import type { CatalogCommand } from "./entry.js"

export interface CatalogIndex {
  /** Every command in precedence order, shadowed ones flagged. */
  readonly listings: ReadonlyArray<CommandListing>
  /** The command each name runs. */
  readonly effective: ReadonlyMap<string, CatalogCommand>
}

const listing = (command: CatalogCommand, holder?: CatalogCommand): CommandListing => ({
  name: command.name,
  description: command.description,
  surfaces: command.surfaces,
  execution: command.execution,
  source: command.source,
  ...(command.argumentHint === undefined ? {} : { argumentHint: command.argumentHint }),
  from: command.from,
  ...(holder === undefined ? {} : { shadowedBy: { source: holder.source, from: holder.from } })
})

/**
 * Orders the commands by source (builtin, plugin, MCP, template, skill; the given order within a
 * source) and gives each name to the first: the others are listed as shadowed, never dropped.
 */
export const indexCommands = (commands: ReadonlyArray<CatalogCommand>): CatalogIndex => {
  const ranked = commands
    .map((command, position) => ({ command, position, rank: sourceRank(command.source) }))
    .sort((a, b) => a.rank - b.rank || a.position - b.position)
  const effective = new Map<string, CatalogCommand>()
  const listings: Array<CommandListing> = []
  for (const { command } of ranked) {
    const holder = effective.get(command.name)
    if (holder === undefined) effective.set(command.name, command)
    listings.push(listing(command, holder))
  }
  return { listings, effective }
}

/** Whether a command can be used on a surface (no surface given: any). */
export const onSurface = (command: { readonly surfaces: ReadonlyArray<CommandSurface> }, surface?: CommandSurface) =>
  surface === undefined || command.surfaces.includes(surface)
