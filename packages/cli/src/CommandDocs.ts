import type * as CommandLine from "./CommandLine.js"

// What help says of each command besides its flags and arguments (whose descriptions live with
// the Options and Args in main.ts): a description, examples, and the general sections to show.
// main.ts gives each command its description from here and `CommandLine` its Doc.

export const docs = {
  alisio: {
    description:
      "Alisio runs a language model with tools on a task in this directory, against any OpenAI-compatible " +
      "server, and keeps every session so it can be resumed, read or replayed. Without a command it opens " +
      "the interactive interface on a terminal: type a message, watch the answer and the tools, approve " +
      "what they do; / lists the commands, @ completes file names, Esc cancels, Ctrl-D leaves.",
    sections: ["environment", "files"],
    examples: [
      {
        does: "First connect a model server (here Ollama on this machine) and make one of its models the default:",
        command: "alisio connect ollama && alisio models use ollama/qwen3-coder"
      },
      { does: "Talk with it in this directory (a terminal is needed):", command: "alisio" },
      { does: "Go on with the latest session here:", command: "alisio -c" },
      { does: "Run a task; the answer comes on stdout:", command: 'alisio run "Explain what this project does"' },
      { does: "Go on with the latest session of this directory:", command: 'alisio run -c "Now add tests for it"' },
      { does: "See what ran here before:", command: "alisio sessions list" }
    ]
  },
  run: {
    description:
      "Run one task headless. The answer streams to stdout; tool activity and retries go to stderr, and on a " +
      "terminal a spinner while waiting and a last line with the status, turns, tokens, time and how to go on.",
    sections: ["environment", "exit-codes"],
    examples: [
      {
        does: "Let it edit files and run commands (otherwise a headless run denies them):",
        command: 'alisio run --yes "Fix the failing test in src/parser.test.ts"'
      },
      {
        does: "Choose the model, and pipe the task in:",
        command: 'git diff | alisio run -m openai/gpt-4.1 "Review this change"'
      },
      { does: "Resume a session by its id:", command: 'alisio run -s 1a2b3c4d "And the README too"' },
      {
        does: "For scripts, the outcome as one JSON object:",
        command: 'alisio run --json --final "List the TODOs" | jq -r .text'
      },
      {
        does: "Only the answer, also kept in a file:",
        command: 'alisio run -q --output-last-message answer.txt "Summarise the changes"'
      }
    ]
  },
  sessions: {
    description:
      "List, show, export, rename and delete stored sessions. A session id may be shortened to the 8 characters lists show.",
    examples: [
      { does: "The sessions of this directory:", command: "alisio sessions list" },
      { does: "Read one whole:", command: "alisio sessions show 1a2b3c4d" },
      { does: "Keep it as Markdown:", command: "alisio sessions export 1a2b3c4d --format md --output session.md" }
    ]
  },
  sessionsList: { description: "List sessions, newest first, with their short ids" },
  sessionsShow: { description: "Show a session's whole conversation (--json: the messages themselves)" },
  sessionsEvents: { description: "Replay a session's stored events (JSONL with --json)" },
  sessionsExport: { description: "Export a session and its child sessions as JSONL events or Markdown" },
  sessionsRename: { description: "Give a session a title of your own" },
  sessionsRemove: {
    description: "Delete sessions and their child sessions (asks first; --yes when not on a terminal)"
  },
  models: {
    description: "List the models of the providers (configured, and of plugins); the default is marked with *",
    examples: [{ does: "Make a model the default of later runs:", command: "alisio models use openai/gpt-4.1" }]
  },
  modelsUse: { description: "Make a model the default of later runs (sets defaultModel in the global config.yaml)" },
  config: {
    description: "Print the effective configuration and where each value comes from",
    sections: ["environment", "files"],
    examples: [
      { does: "Allow more turns in every run:", command: "alisio config set limits.maxTurns 200" },
      { does: "What one setting is, as it applies:", command: "alisio config get approvals.write" }
    ]
  },
  configGet: {
    description: "Print one setting as it applies (the value alone), or the settings under a group (`limits`)"
  },
  configSet: {
    description:
      "Set one setting in the global config.yaml (--project: the project's), keeping the rest of the file as written"
  },
  configUnset: { description: "Remove one setting from the global config.yaml (--project: the project's)" },
  configPath: { description: "Where the configuration files are, and whether the project's applies" },
  configSchema: { description: "Print the JSON Schema of config.yaml (for editor completion)" },
  events: { description: "The run events' contract" },
  eventsSchema: { description: "Print the JSON Schema of the run events (`run --json` lines)" },
  plugins: {
    description: "List, install and remove plugins",
    examples: [
      { does: "What is loaded, and from where:", command: "alisio plugins list" },
      { does: "Install one from npm or a folder:", command: "alisio plugins install ./my-plugin" }
    ]
  },
  pluginsList: { description: "List the plugins: where each comes from, what it registered, its problems" },
  pluginsInstall: { description: "Install a plugin with npm into the config folder and add it to config.yaml" },
  pluginsRemove: { description: "Uninstall a plugin installed with npm and take it out of config.yaml" },
  install: {
    description:
      "Install a plugin or provider package with npm into the config folder and add it to config.yaml; " +
      "it says what the package adds (providers, tools, commands). Same as `alisio plugins install`.",
    examples: [
      { does: "A provider package from npm:", command: "alisio install npm:alisio-provider-example" },
      { does: "A plugin in a folder (linked, works offline):", command: "alisio install ./my-plugin" }
    ]
  },
  connect: {
    description:
      "Connect an OpenAI-compatible provider: ask it for its models, then add it to the global config.yaml " +
      "(providers.<name>). A key comes from its usual variable, --api-key-env, stdin (--with-api-key) or a " +
      "hidden prompt, never from the command line.",
    examples: [
      { does: "A local Ollama:", command: "alisio connect ollama" },
      {
        does: "OpenRouter, its key typed at a hidden prompt or taken from OPENROUTER_API_KEY:",
        command: "alisio connect openrouter"
      },
      {
        does: "Any other server, its key in a variable:",
        command: "alisio connect work --base-url https://llm.example.com/v1 --api-key-env WORK_LLM_KEY"
      }
    ]
  },
  uninstall: {
    description: "Uninstall a package installed with `alisio install` and take it out of config.yaml"
  },
  mcp: {
    description:
      "MCP servers: their tools are offered to runs as mcp__<server>__<tool>. Configure them under mcpServers in " +
      "config.yaml, in the shape Claude Code and Cursor use; a project's .mcp.json applies with --trust-project.",
    sections: ["files"],
    examples: [
      { does: "Which servers start, and what they offer:", command: "alisio mcp list" },
      {
        does: "Add a server started as a command (after --):",
        command: `alisio mcp add github -e 'GITHUB_TOKEN=\${GITHUB_TOKEN}' -- npx -y @modelcontextprotocol/server-github`
      },
      {
        does: "Add a remote server:",
        command: `alisio mcp add docs --url https://example.com/mcp --header 'Authorization=Bearer \${DOCS_TOKEN}'`
      }
    ]
  },
  mcpList: { description: "Start every configured MCP server to check it: transport, status, tools, last error" },
  mcpGet: { description: "One MCP server: its settings (secrets redacted), status, tools with their effects, prompts" },
  mcpAdd: {
    description:
      "Add an MCP server to the global config.yaml (comments kept): a command after --, or --url for a remote one"
  },
  mcpRemove: { description: "Remove an MCP server from the global config.yaml (comments kept)" },
  commands: {
    description:
      "The slash commands: builtin ones, plugins', MCP servers' prompts (/mcp__<server>__<prompt>), prompt templates " +
      'and skills. `alisio run "/name args"` runs one headless: a core command prints its answer, a template, ' +
      "skill or MCP prompt becomes the prompt.",
    examples: [
      { does: "What can be typed after /, and where each comes from:", command: "alisio commands list" },
      { does: "Turns, tokens and time of the latest session here:", command: 'alisio run -c "/stats"' },
      { does: "Run a prompt template with arguments:", command: 'alisio run "/review src/parser.ts"' }
    ]
  },
  commandsList: {
    description:
      "List the slash commands with their source and where each comes from; a command whose name another " +
      "holds is listed as shadowed"
  }
} satisfies Record<string, CommandLine.Doc>
