import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { formatDiagnostic, parseAgentFile } from "@alisio/plugin-subagents/AgentDefinition"
import { parseFrontMatter } from "@alisio/plugin-subagents/internal/frontMatter"
import { assert, describe, it } from "@effect/vitest"

const fixture = (name: string) =>
  readFileSync(fileURLToPath(new URL(`./fixtures/claude-code/${name}`, import.meta.url)), "utf8")

const parse = (text: string, file = "/p/.alisio/agents/helper.md") => parseAgentFile(file, text, "project")

const messages = (text: string) => parse(text).diagnostics.map(formatDiagnostic)

describe("agent definitions", () => {
  it("CH-4 the code reviewer of Claude Code's documentation reads as it is, without a warning", () => {
    const parsed = parseAgentFile("/p/.claude/agents/code-reviewer.md", fixture("code-reviewer.md"), "project-claude")
    assert.deepStrictEqual(parsed.diagnostics, [])
    const agent = parsed.agent!
    assert.strictEqual(agent.name, "code-reviewer")
    assert.match(agent.description, /^Expert code review specialist\. Proactively reviews code/)
    assert.deepStrictEqual(agent.tools, ["read", "grep", "glob", "bash"])
    assert.isUndefined(agent.model, "inherit: the parent's model")
    assert.match(agent.prompt, /^You are a senior code reviewer ensuring high standards/)
    assert.match(agent.prompt, /Include specific examples of how to fix issues\.$/)
    assert.isFalse(agent.readOnly)
  })

  it("CH-4 Claude Code's tool names map to Alisio's; what maps to nothing is left out with a warning", () => {
    const parsed = parse(
      [
        "---",
        "name: mapper",
        "description: maps",
        "tools: Read, Write, Edit, MultiEdit, LS, Grep, Glob, WebFetch, Bash(git diff:*), Task(explore, plan), mcp__gh__list, memory_search",
        "disallowedTools: [Write]",
        "---",
        "Body."
      ].join("\n")
    )
    const agent = parsed.agent!
    assert.deepStrictEqual(agent.tools, [
      "read",
      "write",
      "edit",
      "ls",
      "grep",
      "glob",
      "bash",
      "task",
      "mcp__gh__list",
      "memory_search"
    ])
    assert.deepStrictEqual(agent.disallowedTools, ["write"])
    assert.deepStrictEqual(agent.delegates, ["explore", "plan"])
    assert.deepStrictEqual(parsed.diagnostics.map(formatDiagnostic), [
      "/p/.alisio/agents/helper.md:4: tools: WebFetch has no equivalent in Alisio; left out",
      "/p/.alisio/agents/helper.md:4: tools: Bash(git diff:*): the argument pattern is not enforced; bash is offered whole (its approvals still apply)"
    ])
  })

  it("CH-4 every field: read-only, permission, isolation, background, turns, a provider/model", () => {
    const agent = parse(
      [
        "---",
        "name: fixer",
        "description: |",
        "  Fixes things.",
        "  Carefully.",
        "model: local/qwen3-coder",
        "maxTurns: 12",
        "readOnly: false",
        "permission:",
        "  write: ask",
        "  process: deny",
        "isolation: worktree",
        "background: true",
        "color: green",
        "---",
        "",
        "Fix it."
      ].join("\n")
    ).agent!
    assert.strictEqual(agent.description, "Fixes things.\nCarefully.")
    assert.strictEqual(agent.model, "local/qwen3-coder")
    assert.strictEqual(agent.maxTurns, 12)
    assert.deepStrictEqual(agent.permission, { write: "ask", process: "deny" })
    assert.strictEqual(agent.isolation, "worktree")
    assert.isTrue(agent.background)
    assert.strictEqual(agent.tools, "*")
    assert.strictEqual(agent.prompt, "Fix it.")
  })

  it("CH-4 unknown keys and Claude Code's model aliases warn; the agent is kept", () => {
    assert.deepStrictEqual(
      messages(
        ["---", "name: a", "description: d", "flavour: mint", "model: sonnet", "skills: [x]", "---", "B"].join("\n")
      ),
      [
        "/p/.alisio/agents/helper.md:4: flavour: unknown key, ignored",
        "/p/.alisio/agents/helper.md:6: skills: ignored: skills are not supported",
        "/p/.alisio/agents/helper.md:5: model: sonnet is a Claude Code alias; the parent's model is used (write provider/model to choose one)"
      ]
    )
    assert.isDefined(parse(["---", "name: a", "description: d", "flavour: mint", "---", "B"].join("\n")).agent)
  })

  it("CH-4 a broken file is a diagnostic naming the file, the line and the field, and the agent is left out", () => {
    const badTurns = parse(["---", "name: a", "description: d", "maxTurns: lots", "---", "B"].join("\n"))
    assert.isUndefined(badTurns.agent)
    assert.deepStrictEqual(badTurns.diagnostics.map(formatDiagnostic), [
      '/p/.alisio/agents/helper.md:4: maxTurns: expected a positive whole number, got "lots"'
    ])
    const badPermission = parse(["---", "description: d", "permission:", "  write: maybe", "---", "B"].join("\n"))
    assert.deepStrictEqual(badPermission.diagnostics.map(formatDiagnostic), [
      '/p/.alisio/agents/helper.md:3: permission.write: expected allow, ask or deny, got "maybe"'
    ])
    const unclosed = parse(["---", 'description: "never closed', "---", "B"].join("\n"))
    assert.deepStrictEqual(unclosed.diagnostics.map(formatDiagnostic), [
      "/p/.alisio/agents/helper.md:2: the front matter is not valid YAML: a double-quoted string is not closed"
    ])
    const badIsolation = parse(["---", "description: d", "isolation: container", "---", "B"].join("\n"))
    assert.match(
      formatDiagnostic(badIsolation.diagnostics[0]!),
      /:3: isolation: expected worktree or none, got "container"$/
    )
    const noEnd = parse(["---", "description: d", "B"].join("\n"))
    assert.match(formatDiagnostic(noEnd.diagnostics[0]!), /:1: the front matter is not valid YAML: .* never closed/)
  })

  it("CH-4 opencode files: the name is the file's, a tools map turns tools off, edit and bash permissions apply", () => {
    const parsed = parseAgentFile(
      "/p/.alisio/agents/review.md",
      [
        "---",
        "description: Reviews code",
        "mode: subagent",
        "temperature: 0.1",
        "tools:",
        "  write: false",
        "  edit: false",
        "  bash: true",
        "permission:",
        "  edit: deny",
        "  bash: ask",
        "---",
        "Review it."
      ].join("\n"),
      "project"
    )
    const agent = parsed.agent!
    assert.strictEqual(agent.name, "review")
    assert.strictEqual(agent.tools, "*")
    assert.deepStrictEqual(agent.disallowedTools, ["write", "edit"])
    assert.deepStrictEqual(agent.permission, { write: "deny", process: "ask" })
    assert.deepStrictEqual(parsed.diagnostics.map(formatDiagnostic), [
      "/p/.alisio/agents/review.md:4: temperature: ignored: sampling settings are not supported"
    ])
    const primary = parseAgentFile(
      "/p/x/build.md",
      ["---", "description: d", "mode: primary", "---", "B"].join("\n"),
      "project"
    )
    assert.isUndefined(primary.agent)
  })

  it("CH-4 Claude Code's permissionMode: plan is read-only, acceptEdits allows writing", () => {
    assert.isTrue(parse(["---", "description: d", "permissionMode: plan", "---", "B"].join("\n")).agent!.readOnly)
    assert.deepStrictEqual(
      parse(["---", "description: d", "permissionMode: acceptEdits", "---", "B"].join("\n")).agent!.permission,
      { write: "allow" }
    )
  })
})

describe("front matter", () => {
  it("CH-4 reads block and flow lists, block scalars, quotes, comments and long plain values", () => {
    const parsed = parseFrontMatter(
      [
        "---",
        "# a comment",
        "name: x # trailing comment",
        "list:",
        "- a",
        "- 'b c'",
        'flow: [one, "two, three", {k: v}]',
        "folded: >-",
        "  first",
        "  second",
        "",
        "  third",
        "plain: Use this agent when: the user asks",
        "  for a review, please",
        'escaped: "tab\\there \\"q\\""',
        "map:",
        "  nested:",
        "    - x: 1",
        "      y: true",
        "---",
        "The body."
      ].join("\n")
    )
    const data = Object.fromEntries(parsed.entries.map((e) => [e.key, e.value]))
    assert.deepStrictEqual(data, {
      name: "x",
      list: ["a", "b c"],
      flow: ["one", "two, three", { k: "v" }],
      folded: "first second\nthird",
      plain: "Use this agent when: the user asks for a review, please",
      escaped: 'tab\there "q"',
      map: { nested: [{ x: 1, y: true }] }
    })
    assert.deepStrictEqual(
      parsed.entries.map((e) => e.line),
      [3, 4, 7, 8, 13, 15, 16]
    )
    assert.strictEqual(parsed.body, "The body.")
  })
})
