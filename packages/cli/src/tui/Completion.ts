// What the editor completes: `/` at the start of a message lists the command catalog's commands
// with their descriptions (CMD-1), `@` a resource of a running MCP server (`@<server>:<uri>`,
// MCP-1) or a workspace file from the bounded index.

import * as fs from "node:fs/promises"
import * as path from "node:path"
import {
  type AutocompleteItem,
  type AutocompleteProvider,
  type AutocompleteSuggestions,
  CombinedAutocompleteProvider,
  fuzzyFilter
} from "@earendil-works/pi-tui"
import type { FileIndex } from "./FileIndex.js"

export interface CommandEntry {
  readonly name: string
  readonly description: string
  readonly argumentHint?: string | undefined
}

/** A resource of a running MCP server, as the UI last heard of it. */
export interface ResourceEntry {
  readonly server: string
  readonly uri: string
  readonly name: string
  readonly description?: string | undefined
}

const MAX_FILES = 50
const MAX_RESOURCES = 50

/**
 * The entries of the folder a query names (`src/tui/Co` → `src/tui/` starting with `Co`), read
 * from disk: the index is bounded, so in a large workspace a folder it never reached still
 * completes. Only a folder inside the workspace, links resolved, is read.
 */
export const folderMatches = async (cwd: string, query: string): Promise<Array<string>> => {
  const slash = query.lastIndexOf("/")
  if (slash <= 0) return []
  const folder = query.slice(0, slash)
  const start = query.slice(slash + 1).toLowerCase()
  try {
    const root = await fs.realpath(cwd)
    const real = await fs.realpath(path.resolve(root, folder))
    const inside = path.relative(root, real)
    if (path.isAbsolute(folder) || inside.startsWith("..") || path.isAbsolute(inside)) return []
    const entries = await fs.readdir(real, { withFileTypes: true })
    return entries
      .filter((entry) => entry.name.toLowerCase().startsWith(start))
      .sort((a, b) => a.name.localeCompare(b.name))
      .slice(0, MAX_FILES)
      .map((entry) => `${folder}/${entry.name}${entry.isDirectory() ? "/" : ""}`)
  } catch {
    return []
  }
}

type Listing = ReadonlyArray<CommandEntry> | Promise<ReadonlyArray<CommandEntry>>

/**
 * The commands of the `/` list. Until the catalog is first listed at start, asking waits for that
 * listing, so a `/` typed at once opens the list when it arrives instead of finding it empty.
 */
export class CommandSource {
  private resolveFirst: (entries: ReadonlyArray<CommandEntry>) => void = () => {}
  private readonly first = new Promise<ReadonlyArray<CommandEntry>>((resolve) => {
    this.resolveFirst = resolve
  })
  private list: () => Listing = () => this.first

  /** The catalog's first listing; from now on `list` is asked each time. */
  ready(first: ReadonlyArray<CommandEntry>, list: () => Listing): void {
    this.list = list
    this.resolveFirst(first)
  }

  current(): Listing {
    return this.list()
  }
}

/** `listing`, or undefined as soon as `signal` aborts (a later key asked again). */
const unlessAborted = (listing: Listing, signal: AbortSignal): Promise<ReadonlyArray<CommandEntry> | undefined> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return resolve(undefined)
    signal.addEventListener("abort", () => resolve(undefined), { once: true })
    Promise.resolve(listing).then(resolve, reject)
  })

export class Completion implements AutocompleteProvider {
  readonly triggerCharacters = ["@"]
  // Applying a completion (where the cursor goes, quoting, the space after) is pi-tui's own logic.
  private readonly applier: CombinedAutocompleteProvider

  constructor(
    // Asked each time the `/` list shows: a template added meanwhile is listed (CMD-1).
    private readonly commands: () => Listing,
    private readonly files: FileIndex,
    private readonly cwd: string,
    // Read as they are: the list is kept up to date apart from typing (Session.ts).
    private readonly resources: () => ReadonlyArray<ResourceEntry> = () => []
  ) {
    this.applier = new CombinedAutocompleteProvider([], cwd, null)
  }

  async getSuggestions(
    lines: Array<string>,
    cursorLine: number,
    cursorCol: number,
    options: { signal: AbortSignal; force?: boolean }
  ): Promise<AutocompleteSuggestions | null> {
    const before = (lines[cursorLine] ?? "").slice(0, cursorCol)
    const at = /(?:^|[\s([{<`])(@[^\s]*)$/.exec(before)
    if (at !== null) {
      const token = at[1]!
      const query = token.slice(1)
      const resources = this.resources().map(
        (resource): AutocompleteItem => ({
          value: `@${resource.server}:${resource.uri}`,
          label: `${resource.server}:${resource.uri}`,
          description: resource.description === undefined ? resource.name : `${resource.name} — ${resource.description}`
        })
      )
      const [all, inFolder] = await Promise.all([this.files.list(), folderMatches(this.cwd, query)])
      if (options.signal.aborted) return null
      const fuzzy = query === "" ? all.slice(0, MAX_FILES) : fuzzyFilter(all, query, (file) => file)
      // What the typed folder holds comes first: an exact path beats a look-alike elsewhere.
      const matches = [...new Set([...inFolder, ...fuzzy])].slice(0, MAX_FILES)
      const resourceMatches = (
        query === "" ? resources : fuzzyFilter(resources, query, (item) => `${item.label} ${item.description}`)
      ).slice(0, MAX_RESOURCES)
      if (matches.length === 0 && resourceMatches.length === 0) return null
      return {
        prefix: token,
        items: [...resourceMatches, ...matches.map((file): AutocompleteItem => ({ value: `@${file}`, label: file }))]
      }
    }
    const text = before.trimStart()
    if (cursorLine === 0 && text.startsWith("/") && !text.includes(" ") && !options.force) {
      // Awaited only until a later key aborts it: the editor runs its requests one after another.
      const commands = await unlessAborted(this.commands(), options.signal)
      if (commands === undefined || options.signal.aborted) return null
      const items = commands.map((command) => ({
        value: command.name,
        label: command.name,
        description:
          command.argumentHint === undefined ? command.description : `${command.argumentHint} — ${command.description}`
      }))
      const matches = fuzzyFilter(items, text.slice(1), (item) => item.value)
      return matches.length === 0 ? null : { prefix: text, items: matches }
    }
    return null
  }

  applyCompletion(
    lines: Array<string>,
    cursorLine: number,
    cursorCol: number,
    item: AutocompleteItem,
    prefix: string
  ): { lines: Array<string>; cursorLine: number; cursorCol: number } {
    return this.applier.applyCompletion(lines, cursorLine, cursorCol, item, prefix)
  }

  shouldTriggerFileCompletion(lines: Array<string>, cursorLine: number, cursorCol: number): boolean {
    return /(?:^|\s)@[^\s]*$/.test((lines[cursorLine] ?? "").slice(0, cursorCol))
  }
}
