import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Option from "effect/Option"
import { runAtEdge } from "./Edge.js"
import type { TuiFlags } from "./Flags.js"
import { tuiCommand } from "./tui/TuiCommand.js"

// A bare `alisio` (no word after it) opens the interactive UI without loading the command tree:
// @effect/cli and every command's flags cost the launch about as much as the UI's own first frame.
// Anything else on the command line goes through main.ts, which checks it and parses the flags.

/** What the command tree parses `alisio` with no arguments into (a test holds the two together). */
export const noFlags: TuiFlags = {
  model: Option.none(),
  session: Option.none(),
  continue: false,
  readOnly: false,
  yes: false,
  trustProject: false,
  plugin: [],
  disablePlugin: [],
  cwd: Option.none(),
  maxTurns: Option.none(),
  timeout: Option.none(),
  firstTokenTimeout: Option.none(),
  firstTokenRetries: Option.none(),
  streamIdleTimeout: Option.none(),
  maxOutputTokens: Option.none(),
  maxContextTokens: Option.none(),
  truncationRecoveries: Option.none(),
  prompt: []
}

/** `alisio`: the interactive UI with every flag at its default, at the same edge as the other commands. */
export const mainTui = (): void => runAtEdge(tuiCommand(noFlags), NodeContext.layer)
