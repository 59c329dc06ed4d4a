import * as path from "node:path"
import * as Paths from "@alisio/runtime/PathLayout"
import type * as CommandLine from "./CommandLine.js"
import { ExitCode } from "./ExitCode.js"
import { columns, type Paint, paint } from "./Terminal.js"

// Help as text, from a plain description of the command tree (`HelpNode`): no Effect and no
// @effect/cli here, so the bundle answers `alisio --help` from a tree described at build time
// (`HelpFast.ts`) as fast as `--version`. `Help.ts` describes the live tree the same way.

const ROOT = "alisio"

/** One row of a two-column list: what to type, and what it does. */
export type Row = readonly [label: string, text: string]

/** A command that runs, as help shows it: its flags and arguments as rows. */
export interface LeafHelp {
  readonly _tag: "Leaf"
  readonly flags: ReadonlyArray<Row>
  readonly args: ReadonlyArray<Row>
  readonly doc?: CommandLine.Doc | undefined
}

/** A command that groups subcommands, and may run itself too. */
export interface GroupHelp {
  readonly _tag: "Group"
  readonly children: Readonly<Record<string, HelpNode>>
  readonly own?: LeafHelp | undefined
  readonly doc?: CommandLine.Doc | undefined
}

export type HelpNode = LeafHelp | GroupHelp

/** The part of a command tree that finding a command needs: `CommandLine.Shape` and `HelpNode` both have it. */
type Tree = { readonly _tag: "Leaf" } | { readonly _tag: "Group"; readonly children: Readonly<Record<string, Tree>> }

/** The command as a user types it: `alisio sessions list`. */
export const commandName = (root: string, path: ReadonlyArray<string>) => [root, ...path].join(" ")

/** Whether argv asks for help, and for which command, or the mistake in it; `undefined` when it does not. */
export type HelpRequest = { readonly path: ReadonlyArray<string> } | { readonly mistake: CommandLine.UsageMistake }

/** A command named by `path`, or the mistake in it. */
export const find = <T extends Tree>(
  shape: T,
  path: ReadonlyArray<string>
): { readonly found: T } | { readonly mistake: CommandLine.UsageMistake } => {
  let current: Tree = shape
  for (const [index, word] of path.entries()) {
    const child: Tree | undefined = current._tag === "Group" ? current.children[word] : undefined
    if (child === undefined) {
      const where = path.slice(0, index)
      return {
        mistake: {
          message: `unknown command ${word}${where.length === 0 ? "" : ` for ${where.join(" ")}`}`,
          path: where
        }
      }
    }
    current = child
  }
  return { found: current as T }
}

const isHelpFlag = (word: string) => word === "--help" || word === "-h"

/**
 * Whether argv asks for help, and for which command: `alisio help sessions list`, or `--help`/`-h`
 * anywhere before `--` (`alisio run --json --help`: the command is the words naming one).
 */
export const requested = (shape: Tree, words: ReadonlyArray<string>): HelpRequest | undefined => {
  const end = words.indexOf("--")
  const before = end === -1 ? words : words.slice(0, end)
  if (before[0] === "help") {
    const path = before.slice(1).filter((word) => !isHelpFlag(word))
    const found = find(shape, path)
    return "mistake" in found ? found : { path }
  }
  if (!before.some(isHelpFlag)) return undefined
  const path: Array<string> = []
  let current: Tree = shape
  for (const word of before) {
    if (current._tag !== "Group" || word.startsWith("-")) break
    const child: Tree | undefined = current.children[word]
    if (child === undefined) return { mistake: { message: `unknown command ${word}`, path: [...path] } }
    path.push(word)
    current = child
  }
  return { path }
}

const wrap = (text: string, width: number): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line === "" ? word : `${line} ${word}`
    }
  }
  if (line !== "") lines.push(line)
  return lines.length === 0 ? [""] : lines
}

const MAX_LABEL = 30

/** Narrower than this, a description goes under its label instead of beside it. */
const MIN_TEXT = 30

const table = (rows: ReadonlyArray<Row>, width: number, p: Paint): ReadonlyArray<string> => {
  const widest = Math.min(MAX_LABEL, Math.max(0, ...rows.map(([label]) => label.length)))
  const stacked = width - (widest + 4) < MIN_TEXT
  const labelWidth = stacked ? 0 : widest
  const textIndent = stacked ? 6 : 2 + labelWidth + 2
  const textWidth = width - textIndent
  return rows.flatMap(([label, text]) => {
    const body = wrap(text, textWidth)
    const pad = " ".repeat(textIndent)
    if (label.length > labelWidth) return [`  ${p.bold(label)}`, ...body.map((line) => pad + line)]
    const [first = "", ...rest] = body
    return [
      `  ${p.bold(label)}${" ".repeat(labelWidth - label.length + 2)}${first}`.trimEnd(),
      ...rest.map((l) => pad + l)
    ]
  })
}

const tilde = (file: string, home: string) =>
  home !== "" && (file === home || file.startsWith(home + path.sep)) ? `~${file.slice(home.length)}` : file

const environment: ReadonlyArray<Row> = [
  ["OPENAI_BASE_URL", "The OpenAI-compatible server of the openai provider (default: OpenAI's own API)"],
  ["OPENAI_API_KEY", "Its API key; local servers (Ollama, llama.cpp, vLLM) usually need none"],
  ["ALISIO_HOME", "One folder (an absolute path) for the configuration and the state, instead of the XDG folders"],
  ["XDG_CONFIG_HOME", "Where the configuration folder alisio/ goes (default ~/.config)"],
  ["XDG_STATE_HOME", "Where the state folder alisio/ goes (default ~/.local/state)"],
  ["NO_COLOR", "Set to anything: no colours"]
]

const files = (env: NodeJS.ProcessEnv, home: string): ReadonlyArray<Row> => {
  const paths = Paths.resolve({
    ALISIO_HOME: env.ALISIO_HOME,
    XDG_CONFIG_HOME: env.XDG_CONFIG_HOME,
    XDG_STATE_HOME: env.XDG_STATE_HOME,
    home
  })
  return [
    [tilde(paths.globalConfigFile, home), "Your configuration: providers, default model, limits, approvals"],
    [".alisio/config.yaml", "A project's configuration, applied only with --trust-project"],
    [tilde(Paths.databaseFile(paths.stateHome), home), "The sessions: every message, tool call and run event"]
  ]
}

const exitMeanings = {
  completed: "the run completed",
  failed: "the run failed (its error is on stderr)",
  usage: "a mistake in the command line or the configuration",
  turnsExceeded: "the run reached its turn limit (--max-turns)",
  cancelled: "cancelled: Ctrl-C, SIGTERM, or stdout closed"
} as const satisfies Record<keyof typeof ExitCode, string>

const exitCodes: ReadonlyArray<Row> = Object.entries(exitMeanings).map(([key, meaning]) => [
  String(ExitCode[key as keyof typeof ExitCode]),
  meaning
])

/** Every runnable command below a shape: its path and its shape. */
const leaves = (
  shape: HelpNode,
  path: ReadonlyArray<string>
): ReadonlyArray<readonly [ReadonlyArray<string>, LeafHelp]> =>
  shape._tag === "Leaf"
    ? [[path, shape]]
    : [
        // A group that runs itself (`alisio models`) is a command of its own, listed before its subcommands.
        ...(shape.own !== undefined && path.length > 0 ? [[path, { ...shape.own, doc: shape.doc }] as const] : []),
        ...Object.entries(shape.children).flatMap(([name, child]) => leaves(child, [...path, name]))
      ]

const commandUsage = (leaf: LeafHelp): string => {
  const args = leaf.args.map(([label]) => label).join(" ")
  return [leaf.flags.length > 0 ? "[options]" : "", args].filter((part) => part !== "").join(" ")
}

const durationNote = "A <duration> is written 500ms, 30s, 2m, 1m30s or 1h; a bare number is milliseconds."

/** A description's first sentence, for lists of commands. */
const summary = (description: string): string => {
  const end = description.search(/\.(\s|$)/)
  return end === -1 ? description : description.slice(0, end)
}

/** How help is laid out: for a terminal (its colours and width) or for a pipe. */
export interface Layout {
  readonly paint: Paint
  readonly width: number
  readonly env: NodeJS.ProcessEnv
  readonly home: string
}

/** The layout for `stream` (stdout), as the process finds it. */
export const layoutFor = (stream: NodeJS.WriteStream): Layout => ({
  paint: paint(stream),
  width: Math.min(100, columns(stream)),
  env: process.env,
  home: Paths.userHome()
})

/** The help of the command at `path` (found with `find`), as text. */
export const render = (root: HelpNode, path: ReadonlyArray<string>, layout: Layout): string => {
  const p = layout.paint
  const found = find(root, path)
  if ("mistake" in found) throw new Error(`help for a command that does not exist: ${found.mistake.message}`)
  const shape = found.found
  const name = commandName(ROOT, path)
  const out: Array<string> = []
  const section = (title: string, lines: ReadonlyArray<string>) => {
    if (lines.length === 0) return
    out.push("", p.bold(`${title}:`), ...lines)
  }
  const doc = shape.doc
  if (shape._tag === "Leaf") {
    out.push(`${p.bold("Usage:")} ${[name, commandUsage(shape)].filter((part) => part !== "").join(" ")}`)
  } else if (shape.own !== undefined) {
    out.push(`${p.bold("Usage:")} ${[name, commandUsage(shape.own)].filter((part) => part !== "").join(" ")}`)
    out.push(`       ${name} <command> [options]`)
  } else {
    out.push(`${p.bold("Usage:")} ${name} <command> [options]`)
  }
  if (doc !== undefined) out.push("", ...wrap(doc.description, layout.width))
  const builtIns: ReadonlyArray<Row> =
    path.length === 0
      ? [
          ["-h, --help", "Show this help"],
          ["--version", "Print the version"],
          ["--completions <bash|fish|zsh|sh>", "Print a shell completion script"]
        ]
      : [["-h, --help", "Show this help"]]
  if (shape._tag === "Leaf") {
    section("Arguments", table(shape.args, layout.width, p))
    const flags = shape.flags
    section("Options", table([...flags, ...builtIns], layout.width, p))
    if (flags.some(([label]) => label.endsWith("<duration>"))) {
      out.push("", ...wrap(durationNote, layout.width))
    }
  } else {
    const commands = leaves(shape, []).map(
      ([sub, leaf]): Row => [
        [...path, ...sub, ...leaf.args.map(([label]) => label)].join(" "),
        summary(leaf.doc?.description ?? "")
      ]
    )
    const help: ReadonlyArray<Row> =
      path.length === 0 ? [["help [<command>]", "Show a command's options and examples (as <command> --help)"]] : []
    section("Commands", table([...commands, ...help], layout.width, p))
    const own = shape.own?.flags ?? []
    if (shape.own !== undefined) section("Arguments", table(shape.own.args, layout.width, p))
    section("Options", table([...own, ...builtIns], layout.width, p))
    if (own.some(([label]) => label.endsWith("<duration>"))) out.push("", ...wrap(durationNote, layout.width))
  }
  const sections = doc?.sections ?? []
  if (sections.includes("environment")) section("Environment", table(environment, layout.width, p))
  if (sections.includes("files")) section("Files", table(files(layout.env, layout.home), layout.width, p))
  if (sections.includes("exit-codes")) section("Exit codes", table(exitCodes, layout.width, p))
  const examples = doc?.examples ?? []
  section(
    "Examples",
    examples.flatMap((example, index) => [
      ...(index === 0 ? [] : [""]),
      ...wrap(example.does, layout.width - 2).map((line) => `  ${p.dim(line)}`),
      `    ${example.command}`
    ])
  )
  if (shape._tag === "Group") {
    out.push("", `Run \`${commandName(ROOT, ["help", ...path])} <command>\` for a command's options.`)
  }
  return `${out.join("\n")}\n`
}
