#!/usr/bin/env node
// Kept free of imports so that `alisio --version` answers without loading Effect.
import { createRequire } from "node:module"

// A reader that went away (`alisio … | head`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
    throw error
  })
}

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  const manifest = createRequire(import.meta.url)("../package.json") as { version: string }
  process.stdout.write(`alisio ${manifest.version}\n`)
} else {
  const { main } = await import("./main.js")
  main(process.argv)
}
