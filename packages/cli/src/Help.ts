import * as Args from "@effect/cli/Args"
import type * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Options from "@effect/cli/Options"
import type * as Usage from "@effect/cli/Usage"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as CommandLine from "./CommandLine.js"
import * as HelpText from "./HelpText.js"

// Help described from the command tree itself: the Options and Args each command is made of (their
// names, value placeholders and `withDescription` texts, read back through @effect/cli's public
// `getUsage`/`getHelp`) and each command's `Doc`. @effect/cli's own help cannot be shaped into
// this: it always colours, lists built-in options we refuse (`--wizard`, `--log-level`), starts
// usage lines with the bare command name and wraps every flag in boilerplate.

export type { Layout } from "./HelpText.js"
export { layoutFor } from "./HelpText.js"

type Row = HelpText.Row

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

const describeLeaf = (leaf: CommandLine.Leaf): HelpText.LeafHelp => ({
  _tag: "Leaf",
  flags: flagsOf(leaf.config).map((flag): Row => [flag.label, flag.description]),
  args: argsOf(leaf.config),
  ...(leaf.doc === undefined ? {} : { doc: leaf.doc })
})

/** What help shows of a command tree, as plain data (`HelpText` renders it; the bundle embeds it). */
export const describe = (shape: CommandLine.Shape): HelpText.HelpNode =>
  shape._tag === "Leaf"
    ? describeLeaf(shape)
    : {
        _tag: "Group",
        children: Object.fromEntries(Object.entries(shape.children).map(([name, child]) => [name, describe(child)])),
        ...(shape.own === undefined ? {} : { own: describeLeaf(shape.own) }),
        ...(shape.doc === undefined ? {} : { doc: shape.doc })
      }

/** A command named by `path`, or the mistake in it. */
export const find = (
  shape: CommandLine.Shape,
  path: ReadonlyArray<string>
): Either.Either<CommandLine.Shape, CommandLine.UsageMistake> => {
  const found = HelpText.find(shape, path)
  return "mistake" in found ? Either.left(found.mistake) : Either.right(found.found)
}

/**
 * Whether argv asks for help, and for which command: `alisio help sessions list`, or `--help`/`-h`
 * anywhere before `--` (`alisio run --json --help`: the command is the words naming one).
 */
export const requested = (
  shape: CommandLine.Shape,
  words: ReadonlyArray<string>
): Option.Option<Either.Either<ReadonlyArray<string>, CommandLine.UsageMistake>> =>
  Option.map(Option.fromNullable(HelpText.requested(shape, words)), (request) =>
    "mistake" in request ? Either.left(request.mistake) : Either.right(request.path)
  )

/** The help of the command at `path` (found with `find`), as text. */
export const render = (root: CommandLine.Shape, path: ReadonlyArray<string>, layout: HelpText.Layout): string =>
  HelpText.render(describe(root), path, layout)
