// The flags and arguments of the commands besides `run` and the UI (whose are in Flags.ts): main.ts
// builds the command tree from them, and help describes them.

import * as Args from "@effect/cli/Args"
import * as Options from "@effect/cli/Options"
import { choice, count, disablePluginOption, json, limitOptions, pluginOption, runFlags } from "./Flags.js"

export const sessionId = Args.text({ name: "session-id" }).pipe(
  Args.withDescription("A session id, or its first characters (the 8 that lists show are enough)")
)

export const listFlags = {
  json,
  all: Options.boolean("all").pipe(
    Options.withDescription("Sessions of every folder, this one's first (default: only this folder's)")
  ),
  limit: count("limit", "Show at most this many sessions (default 20)", 1),
  cwd: Options.text("cwd").pipe(
    Options.withDescription("List the sessions of this folder instead of the current one"),
    Options.optional
  )
}
export const showFlags = { json, sessionId }
export const eventsFlags = { json, sessionId }
export const removeFlags = {
  yes: Options.boolean("yes").pipe(
    Options.withDescription("Delete without asking; needed when stdin is not a terminal")
  ),
  sessionIds: Args.text({ name: "session-id" }).pipe(
    Args.withDescription("The sessions to delete, with their child sessions"),
    Args.atLeast(1)
  )
}
export const exportFlags = {
  sessionId,
  format: choice(
    "format",
    ["jsonl", "md"],
    "jsonl: every stored event (as `run --json` streamed them); md: the conversation to read",
    { json: "jsonl", markdown: "md" }
  ),
  output: Options.text("output").pipe(
    Options.withAlias("o"),
    Options.withDescription("Write to this file instead of stdout (a .md name means --format md)"),
    Options.optional
  )
}
export const renameFlags = {
  sessionId,
  title: Args.text({ name: "title" }).pipe(Args.withDescription("The new title"), Args.atLeast(1))
}
export const modelsFlags = { json }
export const modelsUseFlags = {
  model: Args.text({ name: "provider/model" }).pipe(Args.withDescription("The model later runs use by default"))
}
export const configFlags = {
  json: Options.boolean("json").pipe(Options.withDescription("One JSON object per setting, with its source")),
  trustProject: runFlags.trustProject,
  cwd: runFlags.cwd,
  ...limitOptions
}
export const configPathFlags = { json, cwd: runFlags.cwd, trustProject: runFlags.trustProject }
export const settingKey = Args.text({ name: "key" }).pipe(
  Args.withDescription("The setting, as `alisio config` lists it (limits.maxTurns, approvals.write, defaultModel)")
)
export const configGetFlags = { ...configFlags, key: settingKey }
export const projectFile = Options.boolean("project").pipe(
  Options.withDescription("Change the project's .alisio/config.yaml instead of the global file")
)
export const configUnsetFlags = { key: settingKey, project: projectFile, cwd: runFlags.cwd }
export const configSetFlags = {
  ...configUnsetFlags,
  value: Args.text({ name: "value" }).pipe(
    Args.withDescription('Read as YAML: 5 is a number, true a boolean, [a, b] a list, "5" the text 5')
  )
}

export const pluginsListFlags = {
  json,
  plugin: pluginOption,
  disablePlugin: disablePluginOption,
  trustProject: Options.boolean("trust-project").pipe(
    Options.withDescription("Include the project's .alisio/plugins/ (runs their code)")
  ),
  readOnly: Options.boolean("read-only").pipe(Options.withDescription("List as a --read-only run would load them"))
}

export const pluginsInstallFlags = {
  spec: Args.text({ name: "npm:package|path" }).pipe(
    Args.withDescription(
      "A plugin or provider package from npm (npm:name, npm:name@version; the prefix is optional) or the folder of one; installed into the config folder"
    )
  ),
  allowScripts: Options.boolean("allow-scripts").pipe(
    Options.withDescription(
      "Let npm run the install scripts (preinstall, install, postinstall, prepare) of the package and its dependencies; off by default, so installing runs none of a plugin's code"
    )
  )
}

export const connectFlags = {
  provider: Args.text({ name: "provider" }).pipe(
    Args.withDescription(
      "The provider's name in config.yaml: openai, openrouter, deepseek, ollama, lmstudio, llamacpp and vllm need no address; any other name needs --base-url"
    )
  ),
  baseUrl: Options.text("base-url").pipe(
    Options.withPseudoName("url"),
    Options.withDescription("The OpenAI-compatible API's address, usually ending in /v1"),
    Options.optional
  ),
  apiKeyEnv: Options.text("api-key-env").pipe(
    Options.withPseudoName("VAR"),
    Options.withDescription(
      "Read the key from this environment variable at every run (config.yaml keeps only its name)"
    ),
    Options.optional
  ),
  withApiKey: Options.boolean("with-api-key").pipe(
    Options.withDescription("Read the key from stdin and keep it in config.yaml (mode 0600)")
  ),
  noCheck: Options.boolean("no-check").pipe(
    Options.withDescription("Write it without asking the server for its models first")
  )
}

export const pluginsRemoveFlags = {
  name: Args.text({ name: "package" }).pipe(
    Args.withDescription("The name of a package installed with `alisio install`")
  )
}

export const mcpWhere = {
  cwd: runFlags.cwd,
  trustProject: Options.boolean("trust-project").pipe(
    Options.withDescription("Include the project's .mcp.json and .alisio/config.yaml servers (runs their commands)")
  )
}
export const mcpName = Args.text({ name: "name" }).pipe(Args.withDescription("The server's name, as in mcpServers"))
export const mcpListFlags = { json, ...mcpWhere }
export const mcpGetFlags = { json, ...mcpWhere, name: mcpName }
export const mcpAddFlags = {
  url: Options.text("url").pipe(
    Options.withPseudoName("url"),
    Options.withDescription("A remote server's URL (streamable HTTP unless --transport sse) instead of a command"),
    Options.optional
  ),
  transport: choice(
    "transport",
    ["http", "sse"],
    "How to reach the --url: http (streamable HTTP, the default) or sse (the older protocol)"
  ),
  header: Options.text("header").pipe(
    Options.withPseudoName("name=value"),
    Options.withDescription(
      `An HTTP header sent to the --url server, e.g. 'Authorization=Bearer \${TOKEN}' (quoted: Alisio expands it, not the shell; repeatable)`
    ),
    Options.repeated
  ),
  env: Options.text("env").pipe(
    Options.withAlias("e"),
    Options.withPseudoName("name=value"),
    Options.withDescription(
      `A variable for the server's command, e.g. 'GITHUB_TOKEN=\${GITHUB_TOKEN}'; servers inherit only PATH, HOME and a few more (repeatable)`
    ),
    Options.repeated
  ),
  name: Args.text({ name: "name" }).pipe(
    Args.withDescription("The server's name: letters, digits, _ and -, at most 40 (its tools are mcp__<name>__<tool>)")
  ),
  command: Args.text({ name: "command" }).pipe(
    Args.withDescription("After --: the command that starts the server, and its arguments"),
    Args.repeated
  )
}
export const mcpRemoveFlags = { name: mcpName }

export const commandsListFlags = {
  json: Options.boolean("json").pipe(
    Options.withDescription("One JSON document: the commands (shadowed ones too), problems with their files")
  ),
  cwd: Options.directory("cwd").pipe(
    Options.withPseudoName("dir"),
    Options.withDescription("List for this workspace instead of the current directory"),
    Options.optional
  ),
  trustProject: Options.boolean("trust-project").pipe(
    Options.withDescription(
      "Include the project's templates and skills (.alisio/prompts, .claude/commands, .alisio/skills, …), plugins and MCP servers (.mcp.json)"
    )
  ),
  plugin: pluginOption,
  disablePlugin: disablePluginOption,
  readOnly: Options.boolean("read-only").pipe(
    Options.withDescription("List as a --read-only run would: no external plugins")
  )
}
