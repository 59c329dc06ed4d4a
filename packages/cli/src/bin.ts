#!/usr/bin/env node
// Kept to tiny imports so that `alisio --version` answers without loading Effect.
import * as nodeModule from "node:module"
import { setFlagsFromString } from "node:v8"
import { mayLoadExternalPlugins } from "./PluginProbe.js"
import { version } from "./Version.js"

// Node 22 keeps compiled code between runs (a no-op where the API does not exist, as on Node 20).
;(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.()

// Set by the bundler: the bundle has a second build, under plugins/, for commands that may load
// an external plugin (see PluginProbe.ts).
declare const ALISIO_PLUGIN_BUILD: string | undefined
// Set by the bundler: the help of every command, described at build time (HelpFast.ts).
declare const ALISIO_HELP_TREE: string | undefined

/** Whether argv may ask for help: then the bundle answers without loading the program. */
const mayAskHelp = (words: ReadonlyArray<string>) =>
  words[0] === "help" || words.some((word) => word === "--help" || word === "-h")

/** A reader that went away (`alisio --version | true`) is not an error worth a stack trace. */
const quietOnBrokenPipe = () =>
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
    throw error
  })

// fetch parses HTTP with undici's llhttp, compiled to WebAssembly. V8 starts it on its baseline
// compiler (Liftoff) and, once it is hot, compiles it again with TurboFan on a worker thread: for
// llhttp's one huge function that costs ~30 MB of peak memory and ~250 ms of CPU, more than all the
// parsing a session does (issue 17: a run's peak RSS 110 → 81 MB, its CPU −20 %). Set before the
// first fetch compiles the module, so the flag applies to it.
setFlagsFromString("--liftoff-only")

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  quietOnBrokenPipe()
  process.stdout.write(`alisio ${version}\n`)
} else if (
  typeof ALISIO_HELP_TREE === "string" &&
  mayAskHelp(args) &&
  (await import("./HelpFast.js")).answerHelp(args)
) {
  quietOnBrokenPipe()
} else if (args.length === 0 && !mayLoadExternalPlugins(args)) {
  // `alisio` alone: the interactive UI, without the command tree (TuiMain.ts).
  ;(await import("./TuiMain.js")).mainTui()
} else {
  // A headless run is short-lived: V8's young generation keeps its first size instead of growing
  // to 16 MB a half (issue 17: 12 MB less peak RSS, the same CPU). V8 reads the factor whenever it
  // would grow the young generation, so setting it now works (`--max-semi-space-size` would not).
  // Maglev (V8's mid-tier compiler, on from Node 22) compiles the code a short run makes warm and
  // is done with it when the run ends: on Node 24 a run's peak RSS −10 MB, its CPU −4 % without it.
  // Hot code is still optimized by TurboFan.
  if (args[0] === "run") {
    setFlagsFromString("--semi-space-growth-factor=1")
    setFlagsFromString("--no-maglev")
  }
  // main watches stdout itself: a run whose reader went away is cancelled (BrokenPipe.ts).
  const { main }: typeof import("./main.js") =
    typeof ALISIO_PLUGIN_BUILD === "string" && mayLoadExternalPlugins(args)
      ? await import(new URL(ALISIO_PLUGIN_BUILD, import.meta.url).href)
      : await import("./main.js")
  main(process.argv)
}
