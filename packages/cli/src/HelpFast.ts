import { type HelpNode, layoutFor, render, requested } from "./HelpText.js"

// `alisio --help` from the command tree the bundler described (scripts/bundle.mjs runs the same
// `Help.describe` on the same tree): the help text without loading Effect or @effect/cli.

declare const ALISIO_HELP_TREE: string

/** Prints the help argv asks for; `false` when argv is not a help request it can answer (main then explains the mistake). */
export const answerHelp = (words: ReadonlyArray<string>): boolean => {
  const tree = JSON.parse(ALISIO_HELP_TREE) as HelpNode
  const request = requested(tree, words)
  if (request === undefined || "mistake" in request) return false
  process.stdout.write(render(tree, request.path, layoutFor(process.stdout)))
  return true
}
