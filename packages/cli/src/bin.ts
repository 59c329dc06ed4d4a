#!/usr/bin/env node
// Kept to one tiny import so that `alisio --version` answers without loading Effect.
import { version } from "./Version.js"

// A reader that went away (`alisio … | head`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
    throw error
  })
}

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  process.stdout.write(`alisio ${version}\n`)
} else {
  const { main } = await import("./main.js")
  main(process.argv)
}
