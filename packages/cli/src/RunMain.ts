import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import { runAtEdge } from "./Edge.js"
import { parseRunLine } from "./RunLine.js"

/**
 * `alisio run …` without the command tree, when its flags read unmistakably (RunLine.ts): the same
 * handler at the same edge as main.ts would run it. False when main.ts must read the command line.
 */
export const mainRun = (words: ReadonlyArray<string>): boolean => {
  const flags = parseRunLine(words)
  if (flags === undefined) return false
  runAtEdge(
    Effect.flatMap(
      Effect.promise(() => import("./RunCommand.js")),
      (m) => m.runCommand(flags)
    ),
    // A run reads files through the platform and nothing else of it (Edge.ts).
    NodeFileSystem.layer
  )
  return true
}
