import * as Args from "@effect/cli/Args"
import * as Options from "@effect/cli/Options"
import type * as Usage from "@effect/cli/Usage"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { commandName } from "./HelpText.js"

export { commandName }

// @effect/cli 0.77 takes a word it does not know for a positional argument: `run --bogus hi` made
// the prompt "--bogus hi", and `run -m` (a flag missing its value) the prompt "-m". It also reads
// a prompt word such as `yes` or `1` after a boolean flag as that flag's value. So argv is checked
// here first against the command tree (CLI-3), and handed on in a form that leaves @effect/cli
// nothing to guess: the command path, the flags by their long names, then `--` and the words.

/** A flag as the user may write it: `--model`, `-m`. */
interface Flag {
  readonly long: string
  readonly takesValue: boolean
}

/** What help says of a command besides its flags and arguments (`HelpText.ts` renders it). */
export interface Doc {
  readonly description: string
  readonly examples?: ReadonlyArray<Example> | undefined
  /** Sections of general help shown with this command's. */
  readonly sections?: ReadonlyArray<"environment" | "files" | "exit-codes"> | undefined
}

/** A command line to copy, and what it does. */
export interface Example {
  readonly command: string
  readonly does: string
}

/** A command that runs: its flags, and how many words (arguments) it takes besides them. */
export interface Leaf {
  readonly _tag: "Leaf"
  readonly flags: ReadonlyMap<string, Flag>
  readonly maxWords: number
  /** The Options and Args given to `Command.make`, which help describes. */
  readonly config: Readonly<Record<string, unknown>>
  readonly doc?: Doc | undefined
}

/** A command that groups subcommands (`alisio sessions`), and may run itself too (`alisio models`). */
export interface Group {
  readonly _tag: "Group"
  readonly children: Readonly<Record<string, Shape>>
  /** What the command itself takes when no subcommand follows it. */
  readonly own?: Leaf | undefined
  readonly doc?: Doc | undefined
}

export type Shape = Leaf | Group

/** The named parts (flags, arguments) of a usage, in order. */
export const namedIn = (usage: Usage.Usage): ReadonlyArray<Usage.Named> => {
  switch (usage._tag) {
    case "Named":
      return [usage]
    case "Optional":
    case "Repeated":
      return namedIn(usage.usage)
    case "Concat":
    case "Alternation":
      return [...namedIn(usage.left), ...namedIn(usage.right)]
    default:
      return []
  }
}

const wordsIn = (usage: Usage.Usage): number => {
  switch (usage._tag) {
    case "Named":
      return 1
    case "Optional":
      return wordsIn(usage.usage)
    case "Repeated":
      return Number.POSITIVE_INFINITY
    case "Concat":
      return wordsIn(usage.left) + wordsIn(usage.right)
    case "Alternation":
      return Math.max(wordsIn(usage.left), wordsIn(usage.right))
    default:
      return 0
  }
}

/** The shape of a command from the config given to `Command.make` (its Options and Args). */
export const leaf = (config: Readonly<Record<string, unknown>>, doc?: Doc): Leaf => {
  const flags = new Map<string, Flag>()
  let maxWords = 0
  for (const value of Object.values(config)) {
    if (Options.isOptions(value)) {
      for (const named of namedIn(Options.getUsage(value))) {
        const long = named.names.find((name) => name.startsWith("--")) ?? named.names[0]!
        const flag = { long, takesValue: Option.isSome(named.acceptedValues) }
        for (const name of named.names) flags.set(name, flag)
      }
    } else if (Args.isArgs(value)) {
      maxWords += wordsIn(Args.getUsage(value))
    }
  }
  return { _tag: "Leaf", flags, maxWords, config, doc }
}

export const group = (
  children: Readonly<Record<string, Shape>>,
  options: { readonly own?: Leaf | undefined; readonly doc?: Doc | undefined } = {}
): Group => ({
  _tag: "Group",
  children,
  own: options.own,
  doc: options.doc
})

/** A mistake in argv: one line, and the command whose `--help` explains the remedy. */
export interface UsageMistake {
  readonly message: string
  readonly path: ReadonlyArray<string>
}

/** argv that @effect/cli parses as checked, and the command it names. */
export interface Checked {
  readonly argv: ReadonlyArray<string>
  readonly path: ReadonlyArray<string>
}

// @effect/cli's own flags: with one of them the words go to @effect/cli untouched (help wins).
const builtIns = new Set(["--help", "-h", "--version", "--completions"])

const booleanValues = new Set(["true", "false"])

/** A word that is a flag's value even though it starts with `-` (`--max-turns -1` gets a clear range error). */
const isNegativeNumber = (word: string) => /^-\d/.test(word)

const looksLikeFlag = (word: string) => word.startsWith("-") && word !== "-"

/** The edit distance between two short words (insertions, deletions, substitutions). */
const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)))
    }
    previous = row
  }
  return previous[b.length]!
}

/**
 * A lone word that is nearly a subcommand's name (`alisio sesions`) where the command also takes
 * words (`alisio "fix it"`): a typo far likelier than a one-word message, so it is refused.
 */
const closeCommand = (word: string, group: Group): string | undefined => {
  if (group.own === undefined || group.own.maxWords === 0 || word.length < 3 || looksLikeFlag(word)) return undefined
  return Object.keys(group.children).find((name) => editDistance(word.toLowerCase(), name) <= (name.length > 4 ? 2 : 1))
}

/**
 * Checks `words` (argv without node and the script) against the command tree. An unknown flag, a
 * flag missing its value and an unknown command are mistakes, unless they come after `--`.
 */
export const check = (shape: Shape, words: ReadonlyArray<string>): Either.Either<Checked, UsageMistake> => {
  const beforeDashes = words.indexOf("--") === -1 ? words : words.slice(0, words.indexOf("--"))
  if (beforeDashes.some((word) => builtIns.has(word))) return Either.right({ argv: words, path: [] })
  const path: Array<string> = []
  const where = (preposition: string) => (path.length === 0 ? "" : ` ${preposition} ${path.join(" ")}`)
  const mistake = (message: string) => Either.left({ message, path: [...path] })
  const unknownOption = (name: string) =>
    path.length === 0 && (name === "-p" || name === "--print")
      ? `unknown option ${name}: a task without the interface (as \`claude -p\`) is \`alisio run "task"\``
      : `unknown option ${name}${where("for")}`
  let current = shape
  let index = 0
  while (current._tag === "Group") {
    const word = words[index]
    if (word === undefined) return Either.right({ argv: words, path })
    const child = Object.hasOwn(current.children, word) ? current.children[word] : undefined
    const misspelt = child === undefined && index === words.length - 1 ? closeCommand(word, current) : undefined
    if (misspelt !== undefined) {
      return mistake(
        `unknown command ${word}${where("for")} (did you mean ${misspelt}?); ` +
          `to send "${word}" as a message, write ${commandName("alisio", [...path, "--", word])}`
      )
    }
    if (child === undefined && current.own !== undefined && (looksLikeFlag(word) || current.own.maxWords > 0)) {
      current = current.own
      continue
    }
    if (looksLikeFlag(word) && word !== "--") return mistake(unknownOption(word))
    if (child === undefined) return mistake(`unknown command ${word}${where("for")}`)
    path.push(word)
    current = child
    index += 1
  }
  const flags: Array<string> = []
  const positional: Array<string> = []
  for (; index < words.length; index++) {
    const word = words[index]!
    if (word === "--") {
      positional.push(...words.slice(index + 1))
      break
    }
    // A negative number no flag is named after is a value (`config set limits.maxTurns -1`).
    if (!looksLikeFlag(word) || (isNegativeNumber(word) && !current.flags.has(word))) {
      positional.push(word)
      continue
    }
    const equals = word.indexOf("=")
    const name = equals > 0 ? word.slice(0, equals) : word
    const inline = equals > 0 ? word.slice(equals + 1) : undefined
    const flag = current.flags.get(name)
    if (flag === undefined) return mistake(unknownOption(name))
    if (!flag.takesValue) {
      if (inline !== undefined && !booleanValues.has(inline))
        return mistake(`option ${name}${where("of")} takes no value; write ${name} or ${name}=false`)
      flags.push(inline === undefined ? flag.long : `${flag.long}=${inline}`)
      continue
    }
    let value = inline
    if (value === undefined) {
      const next = words[index + 1]
      if (next !== undefined && (!looksLikeFlag(next) || isNegativeNumber(next))) {
        value = next
        index += 1
      }
    }
    if (value === undefined || value === "") return mistake(`option ${name}${where("of")} needs a value`)
    // `--name=value` keeps a value that starts with `-` from reading as a flag.
    flags.push(...(value.startsWith("-") ? [`${flag.long}=${value}`] : [flag.long, value]))
  }
  if (positional.length > current.maxWords)
    return mistake(`unexpected argument ${positional[current.maxWords]}${where("for")}`)
  return Either.right({ argv: [...path, ...flags, ...(positional.length > 0 ? ["--", ...positional] : [])], path })
}
