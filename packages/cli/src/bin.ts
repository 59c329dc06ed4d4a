#!/usr/bin/env node
// Kept to tiny imports so that `alisio --version` answers without loading Effect.
import * as nodeModule from "node:module"
import { fileURLToPath } from "node:url"
import { relativeAlisioHome } from "@alisio/runtime/PathLayout"
import { requireWithCodeCache } from "./CodeCache.js"
import { ExitCode } from "./ExitCode.js"
import { mayLoadExternalPlugins } from "./PluginProbe.js"
import { loadRunBuiltins, tuneV8 } from "./V8Flags.js"
import { version } from "./Version.js"

// Node 22 keeps compiled code between runs (a no-op where the API does not exist, as on Node 20).
;(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.()

// Set by the bundler: the bundle has a second build, under plugins/, for commands that may load
// an external plugin (see PluginProbe.ts).
declare const ALISIO_PLUGIN_BUILD: string | undefined
// Set by the bundler: `alisio run` has a build of its own, one CommonJS file (RunMain.ts), loaded
// with a code cache (CodeCache.ts); the id is a hash of its content.
declare const ALISIO_RUN_BUILD: string | undefined
declare const ALISIO_RUN_BUILD_ID: string | undefined
// Set by the bundler: the help of every command, described at build time (HelpFast.ts).
declare const ALISIO_HELP_TREE: string | undefined

/** Whether argv may ask for help: then the bundle answers without loading the program. */
const mayAskHelp = (words: ReadonlyArray<string>) =>
  words[0] === "help" || words.some((word) => word === "--help" || word === "-h")

/**
 * A reader that went away (`alisio --version | true`) is not an error worth a stack trace, nor is a
 * full disk under `> file`: that one is a line on stderr.
 */
const quietOnBrokenPipe = () =>
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
    process.stderr.write(`alisio: could not write to stdout (${error.code ?? error.message})\n`)
    process.exit(1)
  })

/** Whether the shell's folder is gone (deleted under it): then Node has no current folder to give. */
const currentFolderGone = (): boolean => {
  try {
    process.cwd()
    return false
  } catch {
    return true
  }
}

/** `alisio run` from its own build, or from RunMain.ts unbundled; false when main.ts must read the line. */
const mainRun = async (words: ReadonlyArray<string>): Promise<boolean> => {
  if (typeof ALISIO_RUN_BUILD !== "string" || typeof ALISIO_RUN_BUILD_ID !== "string") {
    return (await import("./RunMain.js")).mainRun(words)
  }
  const file = fileURLToPath(new URL(ALISIO_RUN_BUILD, import.meta.url))
  const build = requireWithCodeCache<typeof import("./RunMain.js")>(file, ALISIO_RUN_BUILD_ID)
  const ran = build.exports.mainRun(words)
  if (ran) build.keepAtExit()
  return ran
}

const args = process.argv.slice(2)
if (args[0] === "run" && !mayAskHelp(args)) loadRunBuiltins()
tuneV8(args)

if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  quietOnBrokenPipe()
  process.stdout.write(`alisio ${version}\n`)
} else if (
  typeof ALISIO_HELP_TREE === "string" &&
  mayAskHelp(args) &&
  (await import("./HelpFast.js")).answerHelp(args)
) {
  quietOnBrokenPipe()
} else if (currentFolderGone()) {
  process.stderr.write(
    "alisio: the current folder no longer exists (it was deleted or moved); cd into one that exists and try again\n"
  )
  process.exitCode = ExitCode.usage
} else if (relativeAlisioHome(process.env.ALISIO_HOME) !== undefined) {
  process.stderr.write(`alisio: ${relativeAlisioHome(process.env.ALISIO_HOME)}\n`)
  process.exitCode = ExitCode.usage
} else if (args.length === 0 && !mayLoadExternalPlugins(args)) {
  // `alisio` alone: the interactive UI, without the command tree (TuiMain.ts).
  ;(await import("./TuiMain.js")).mainTui()
} else if (args[0] === "run" && !mayLoadExternalPlugins(args) && (await mainRun(args.slice(1)))) {
  // `alisio run` with flags read without the command tree (RunLine.ts).
} else {
  // main watches stdout itself: a run whose reader went away is cancelled (BrokenPipe.ts).
  const { main }: typeof import("./main.js") =
    typeof ALISIO_PLUGIN_BUILD === "string" && mayLoadExternalPlugins(args)
      ? await import(new URL(ALISIO_PLUGIN_BUILD, import.meta.url).href)
      : await import("./main.js")
  main(process.argv)
}
