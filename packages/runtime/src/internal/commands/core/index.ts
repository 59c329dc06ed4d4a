// The builtin commands: core ones as values (more join the same way), and those the UIs handle.

import type { CoreCommand, SurfaceCommand } from "../entry.js"
import { compact } from "./compact.js"
import { context } from "./context.js"
import { init } from "./init.js"
import { plugins, skills, tools } from "./listings.js"
import { effort, model } from "./model.js"
import { clear, newSession, resume, sessions } from "./sessions.js"
import { stats } from "./stats.js"

/** Core commands (CMD-2): run through the catalog, on every surface. */
export const coreCommands: ReadonlyArray<CoreCommand> = [
  compact,
  model,
  effort,
  newSession,
  clear,
  sessions,
  resume,
  stats,
  init,
  tools,
  skills,
  plugins,
  context
]

/** Surface commands (CMD-2): declared here, handled by each interactive UI. */
export const surfaceCommands: ReadonlyArray<SurfaceCommand> = [
  { name: "help", description: "Show the commands and keys", argumentHint: "[command]", surfaces: ["tui", "web"] },
  { name: "exit", description: "Leave Alisio", surfaces: ["tui"] },
  { name: "copy", description: "Copy the last answer", surfaces: ["tui", "web"] },
  { name: "settings", description: "Show and change the settings", surfaces: ["tui", "web"] },
  {
    name: "connect",
    description: "Connect an OpenAI-compatible provider (ollama, openrouter, … or a name and its address)",
    argumentHint: "[name] [url]",
    surfaces: ["tui", "web"]
  },
  {
    name: "ask",
    description: "Ask a side question that does not join the conversation",
    argumentHint: "<question>",
    surfaces: ["tui", "web"]
  },
  { name: "templates", description: "Pick a prompt template", surfaces: ["tui", "web"] }
]
