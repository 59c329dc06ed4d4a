import * as os from "node:os"
import * as path from "node:path"
import * as Paths from "@alisio/runtime/Paths"
import * as Args from "@effect/cli/Args"
import type * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Options from "@effect/cli/Options"
import type * as Usage from "@effect/cli/Usage"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { ExitCode } from "./CliError.js"
import * as CommandLine from "./CommandLine.js"
import { columns, type Paint, paint } from "./Terminal.js"

// Help rendered from the command tree itself: the Options and Args each command is made of (their
// names, value placeholders and `withDescription` texts, read back through @effect/cli's public
// `getUsage`/`getHelp`) and each command's `Doc`. @effect/cli's own help cannot be shaped into
// this: it always colours, lists built-in options we refuse (`--wizard`, `--log-level`), starts
// usage lines with the bare command name and wraps every flag in boilerplate.

const ROOT = "alisio"

/** One row of a two-column list: what to type, and what it does. */
type Row = readonly [label: string, text: string]

const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
  }
}

const paragraphs = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> => {
  switch (doc._tag) {
    case "Empty":
      return []
    case "Paragraph":
    case "Header":
      return [spanText(doc.value)]
    case "Sequence":
      return [...paragraphs(doc.left), ...paragraphs(doc.right)]
    case "Enumeration":
      return doc.elements.flatMap(paragraphs)
    case "DescriptionList":
      return doc.definitions.flatMap(([, block]) => paragraphs(block))
  }
}

// What @effect/cli adds around a description: the value's type first, then these notes.
const boilerplate = /^This (setting|option|argument) (is optional|may be repeated|must be repeated|can be set)/

/** The `withDescription` texts of each flag or argument a help document describes, in order. */
const descriptions = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> =>
  doc._tag === "DescriptionList"
    ? doc.definitions.map(([, block]) =>
        paragraphs(block)
          .slice(1)
          .filter((text) => !boilerplate.test(text))
          .join(" ")
      )
    : doc._tag === "Sequence"
      ? [...descriptions(doc.left), ...descriptions(doc.right)]
      : []

const placeholder = (named: Usage.Named): string =>
  Option.match(named.acceptedValues, {
    onNone: () => "",
    onSome: (values) => ` <${values.replaceAll(" | ", "|")}>`
  })

/** `-m, --model <provider/model>`: short names first. */
const flagLabel = (named: Usage.Named): string =>
  [...named.names].sort((a, b) => a.length - b.length).join(", ") + placeholder(named)

/** A flag of a command as help lists it. */
export interface FlagHelp {
  readonly label: string
  readonly names: ReadonlyArray<string>
  readonly description: string
}

/** The flags of a command's config, with the descriptions given to `Options.withDescription`. */
export const flagsOf = (config: Readonly<Record<string, unknown>>): ReadonlyArray<FlagHelp> =>
  Object.values(config).flatMap((value) => {
    if (!Options.isOptions(value)) return []
    const texts = descriptions(Options.getHelp(value))
    return CommandLine.namedIn(Options.getUsage(value)).map((named, index) => ({
      label: flagLabel(named),
      names: named.names,
      description: texts[index] ?? ""
    }))
  })

const argLabel = (usage: Usage.Usage, optional = false): string => {
  switch (usage._tag) {
    case "Named":
      return optional ? `[${usage.names[0]}]` : (usage.names[0] ?? "")
    case "Optional":
      return argLabel(usage.usage, true)
    case "Repeated":
      return `[${argLabel(usage.usage).replace(/^\[(.*)\]$/, "$1")}...]`
    case "Concat":
      return `${argLabel(usage.left, optional)} ${argLabel(usage.right, optional)}`.trim()
    default:
      return ""
  }
}

/** The arguments of a command's config: how usage shows them, and their descriptions. */
export const argsOf = (config: Readonly<Record<string, unknown>>): ReadonlyArray<Row> =>
  Object.values(config).flatMap((value): ReadonlyArray<Row> => {
    if (!Args.isArgs(value)) return []
    const label = argLabel(Args.getUsage(value))
    return label === "" ? [] : [[label, descriptions(Args.getHelp(value)).join(" ")]]
  })

/** A command named by `path`, or the mistake in it. */
export const find = (
  shape: CommandLine.Shape,
  path: ReadonlyArray<string>
): Either.Either<CommandLine.Shape, CommandLine.UsageMistake> => {
  let current = shape
  for (const [index, word] of path.entries()) {
    const child = current._tag === "Group" ? current.children[word] : undefined
    if (child === undefined) {
      const where = path.slice(0, index)
      return Either.left({
        message: `unknown command ${word}${where.length === 0 ? "" : ` for ${where.join(" ")}`}`,
        path: where
      })
    }
    current = child
  }
  return Either.right(current)
}

const isHelpFlag = (word: string) => word === "--help" || word === "-h"

/**
 * Whether argv asks for help, and for which command: `alisio help sessions list`, or `--help`/`-h`
 * anywhere before `--` (`alisio run --json --help`: the command is the words naming one).
 */
export const requested = (
  shape: CommandLine.Shape,
  words: ReadonlyArray<string>
): Option.Option<Either.Either<ReadonlyArray<string>, CommandLine.UsageMistake>> => {
  const end = words.indexOf("--")
  const before = end === -1 ? words : words.slice(0, end)
  if (before[0] === "help") {
    const path = before.slice(1).filter((word) => !isHelpFlag(word))
    return Option.some(Either.map(find(shape, path), () => path))
  }
  if (!before.some(isHelpFlag)) return Option.none()
  const path: Array<string> = []
  let current = shape
  for (const word of before) {
    if (current._tag !== "Group" || word.startsWith("-")) break
    const child = current.children[word]
    if (child === undefined) return Option.some(Either.left({ message: `unknown command ${word}`, path: [...path] }))
    path.push(word)
    current = child
  }
  return Option.some(Either.right(path))
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
  ["ALISIO_HOME", "One folder for the configuration and the state, instead of the XDG folders"],
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
  shape: CommandLine.Shape,
  path: ReadonlyArray<string>
): ReadonlyArray<readonly [ReadonlyArray<string>, CommandLine.Leaf]> =>
  shape._tag === "Leaf"
    ? [[path, shape]]
    : Object.entries(shape.children).flatMap(([name, child]) => leaves(child, [...path, name]))

const commandUsage = (leaf: CommandLine.Leaf): string => {
  const args = argsOf(leaf.config)
    .map(([label]) => label)
    .join(" ")
  return [flagsOf(leaf.config).length > 0 ? "[options]" : "", args].filter((part) => part !== "").join(" ")
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
  home: os.homedir()
})

/** The help of the command at `path` (found with `find`), as text. */
export const render = (root: CommandLine.Shape, path: ReadonlyArray<string>, layout: Layout): string => {
  const p = layout.paint
  const shape = Either.getOrThrow(find(root, path))
  const name = CommandLine.commandName(ROOT, path)
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
    section("Arguments", table(argsOf(shape.config), layout.width, p))
    const flags = flagsOf(shape.config).map((flag): Row => [flag.label, flag.description])
    section("Options", table([...flags, ...builtIns], layout.width, p))
    if (flags.some(([label]) => label.endsWith("<duration>"))) {
      out.push("", ...wrap(durationNote, layout.width))
    }
  } else {
    const commands = leaves(shape, []).map(
      ([sub, leaf]): Row => [
        [...path, ...sub, ...argsOf(leaf.config).map(([label]) => label)].join(" "),
        summary(leaf.doc?.description ?? "")
      ]
    )
    const help: ReadonlyArray<Row> =
      path.length === 0 ? [["help [<command>]", "Show a command's options and examples (as <command> --help)"]] : []
    section("Commands", table([...commands, ...help], layout.width, p))
    const own =
      shape.own === undefined ? [] : flagsOf(shape.own.config).map((flag): Row => [flag.label, flag.description])
    if (shape.own !== undefined) section("Arguments", table(argsOf(shape.own.config), layout.width, p))
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
    out.push("", `Run \`${CommandLine.commandName(ROOT, ["help", ...path])} <command>\` for a command's options.`)
  }
  return `${out.join("\n")}\n`
}
