import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"

const version = (createRequire(import.meta.url)("../package.json") as { version: string }).version

export const alisio = Command.make("alisio").pipe(
  Command.withDescription("An agent CLI that runs a language model with tools and keeps every session.")
)

export const cli = Command.run(alisio, { name: "alisio", version })

/** The edge: parses argv, runs the command, exits with its code. */
export const main = (argv: ReadonlyArray<string>): void =>
  cli(argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain({ disableErrorReporting: false }))
