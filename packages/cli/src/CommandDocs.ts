import type * as CommandLine from "./CommandLine.js"

// What help says of each command besides its flags and arguments (whose descriptions live with
// the Options and Args in main.ts): a description, examples, and the general sections to show.
// main.ts gives each command its description from here and `CommandLine` its Doc.

export const docs = {
  alisio: {
    description:
      "Alisio runs a language model with tools on a task in this directory, against any OpenAI-compatible " +
      "server, and keeps every session so it can be resumed, read or replayed.",
    sections: ["environment", "files"],
    examples: [
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
  sessions: { description: "Inspect stored sessions." },
  sessionsList: { description: "List sessions, newest first" },
  sessionsShow: { description: "Show a session: its runs and messages" },
  sessionsEvents: { description: "Replay a session's stored events (JSONL with --json)" },
  models: { description: "List the models of the configured providers" }
} satisfies Record<string, CommandLine.Doc>
