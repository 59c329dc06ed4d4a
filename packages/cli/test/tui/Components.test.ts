import { Markdown, visibleWidth } from "@earendil-works/pi-tui"
import { assert, describe, it } from "@effect/vitest"
import { ApprovalDialog, PlanDialog, QuestionDialog } from "../../src/tui/Dialogs.js"
import { UserEntry } from "../../src/tui/Entries.js"
import { Screen } from "../../src/tui/Screen.js"
import { StreamingMarkdown } from "../../src/tui/StreamingMarkdown.js"
import { colorFor, makeTheme } from "../../src/tui/Theme.js"
import { summariseArguments, ToolCard } from "../../src/tui/ToolCard.js"
import { settle, VirtualTerminal } from "./VirtualTerminal.js"

const plain = makeTheme({ color: false })
const coloured = makeTheme({ color: true })

const answer = [
  "# Plan",
  "",
  "First **read** the file, then:",
  "",
  "```ts",
  "const x = 1",
  "",
  "// a blank line inside the fence does not cut the block",
  "```",
  "",
  "- one",
  "- two",
  "",
  "Done."
].join("\n")

describe("TUI components", () => {
  it("UI-1 a streamed answer renders as the whole Markdown would, whatever the deltas", () => {
    const trimmed = (lines: ReadonlyArray<string>) => lines.map((line) => line.trimEnd())
    const whole = trimmed(new Markdown(answer, 0, 0, plain.markdown).render(60))
    for (const size of [1, 3, 17]) {
      const streamed = new StreamingMarkdown(plain.markdown)
      for (let i = 0; i < answer.length; i += size) streamed.append(answer.slice(i, i + size))
      assert.deepStrictEqual(trimmed(streamed.render(60)), whole, `deltas of ${size}`)
    }
  })

  it("UI-1 finished blocks are never parsed again: a cut is only made outside a code fence", () => {
    const fenced = new StreamingMarkdown(plain.markdown)
    fenced.append("```\nx\n\ny")
    assert.strictEqual(fenced.children.length, 1, "no cut at a blank line inside a fence")
    const streamed = new StreamingMarkdown(plain.markdown)
    streamed.append("first paragraph\n\n")
    const before = streamed.children.length
    const frozen = streamed.children[0]
    streamed.append("second, still streaming")
    assert.isAbove(streamed.children.length, before)
    assert.strictEqual(streamed.children[0], frozen)
  })

  it("UI-1 code blocks are highlighted when there is colour, plain under NO_COLOR", () => {
    const code = "```ts\nconst x = 'one' // note\n```"
    const highlighted = new Markdown(code, 0, 0, coloured.markdown).render(40).join("\n")
    assert.include(highlighted, "\x1b[35mconst\x1b[39m")
    assert.include(highlighted, "\x1b[32m'one'\x1b[39m")
    assert.notInclude(new Markdown(code, 0, 0, plain.markdown).render(40).join("\n"), "\x1b[3")
    assert.isFalse(colorFor(true, { NO_COLOR: "1" }))
    assert.isFalse(colorFor(false, {}))
    assert.isTrue(colorFor(true, {}))
  })

  it("UI-1 EV-2 a card whose result came shortened says so, folded and unfolded, and how long the whole is", () => {
    const card = new ToolCard("c1", "bash", JSON.stringify({ command: "seq 1 200000" }), plain)
    card.progress("1\n2\n")
    assert.notInclude(card.render(80).join("\n"), "shortened", "nothing is said while it runs")
    card.complete("completed", `${Array.from({ length: 900 }, (_, i) => i + 1).join("\n")}…`, 900, 30_053)
    const folded = card.render(80).map((line) => line.trimEnd())
    assert.include(folded, "  … 897 more lines (Ctrl-O shows them)")
    assert.strictEqual(folded.at(-1), "  … shortened here; the whole result has 30053 characters")
    card.setExpanded(true)
    assert.strictEqual(card.render(80).at(-1)?.trimEnd(), "  … shortened here; the whole result has 30053 characters")
    const whole = new ToolCard("c2", "bash", JSON.stringify({ command: "true" }), plain)
    whole.complete("completed", "ok", 5)
    assert.notInclude(whole.render(80).join("\n"), "shortened")
  })

  it("UI-1 CLI-2 a call cancelled half-way keeps what it printed on its card, with the line saying it was cancelled", () => {
    const card = new ToolCard("c1", "bash", JSON.stringify({ command: "make" }), plain)
    card.progress("tick 1\ntick 2\n")
    card.complete("cancelled", "The tool call was cancelled before it finished.", 0)
    card.setExpanded(true)
    const shown = card.render(80).map((line) => line.trimEnd())
    assert.deepStrictEqual(shown.slice(1), [
      "  tick 1",
      "  tick 2",
      "  The tool call was cancelled before it finished."
    ])
  })

  it("UI-1 a tool card summarises its arguments, streams progress, ends with status and duration", () => {
    assert.strictEqual(summariseArguments("bash", JSON.stringify({ command: "ls  -la\n" })), "ls -la")
    assert.strictEqual(summariseArguments("read", JSON.stringify({ path: "src/a.ts" })), "src/a.ts")
    assert.strictEqual(summariseArguments("grep", JSON.stringify({ pattern: "TODO", path: "src" })), "TODO in src")
    const card = new ToolCard("c1", "bash", JSON.stringify({ command: "make test" }), plain)
    card.progress("line 1\nline 2\nline 3\nline 4\n\x1b[31mred\x1b[0m\x1b]0;title\x07\n")
    const running = card.render(40).join("\n")
    assert.include(running, "bash make test")
    assert.include(running, "red")
    assert.notInclude(running, "\x1b]0;", "escape sequences from a tool never reach the terminal")
    card.complete("completed", "ok\nall 12 passed", 1500)
    const done = card.render(40)
    assert.match(done[0]!, /bash make test 1\.5s$/)
    card.setExpanded(true)
    assert.include(card.render(40).join("\n"), "all 12 passed")
    for (const line of card.render(12)) assert.isAtMost(visibleWidth(line), 12)
  })

  it("UI-1 a long message of the person's (a paste) shows its first lines until Ctrl-O; a short one shows whole", () => {
    const pasted = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n")
    const long = new UserEntry(pasted, plain)
    const collapsed = long.render(40)
    assert.lengthOf(collapsed, 13)
    assert.strictEqual(collapsed[0], "› line 1")
    assert.strictEqual(collapsed[11], "  line 12")
    assert.strictEqual(collapsed[12], "  … 88 more lines (Ctrl-O shows them)")
    long.setExpanded(true)
    const expanded = long.render(40)
    assert.lengthOf(expanded, 100)
    assert.strictEqual(expanded[99], "  line 100")
    const short = new UserEntry(Array.from({ length: 16 }, (_, i) => `line ${i + 1}`).join("\n"), plain)
    assert.lengthOf(short.render(40), 16)
  })

  it("UI-1 the screen fits 40 columns, redraws on resize, and writes no colour under NO_COLOR", async () => {
    const terminal = new VirtualTerminal(40, 16)
    const screen = new Screen(terminal, plain)
    screen.tui.start()
    try {
      screen.status.update((s) => {
        s.model = "openai/a-model-with-a-long-name"
        s.session = "1a2b3c4d"
        s.inputTokens = 12_345
        s.outputTokens = 678
      })
      screen.notice("a notice long enough to be wrapped over more than one line of this narrow terminal")
      const card = new ToolCard("c1", "bash", JSON.stringify({ command: "echo a very long command line" }), plain)
      screen.add(card)
      await settle()
      const lines = await terminal.all()
      for (const line of lines) assert.isAtMost(line.length, 40, line)
      assert.isTrue(lines.some((line) => line.includes("openai/a-model-with-a-long-name")))
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequence of a colour is what is looked for
      assert.notMatch(terminal.written, /\x1b\[[0-9;]*3[0-9]m/, "no foreground colour")
      terminal.resize(60, 16)
      await settle()
      const wider = await terminal.screen()
      assert.isTrue(wider.some((line) => line.includes("bash echo a very long command line")))
    } finally {
      screen.tui.stop()
    }
  })

  it("UI-1 keys typed as an approval opens go on into the draft, a `y` among them approves nothing; after a pause the dialog takes them", async () => {
    let now = 1_000
    const terminal = new VirtualTerminal(60, 20)
    const screen = new Screen(terminal, plain, { dialogGraceMs: 300, now: () => now })
    screen.tui.start()
    try {
      const answers: Array<string> = []
      const offer = { key: "bash:rm", label: "`rm` commands" }
      const dialog = new ApprovalDialog(plain, "Allow bash?", "rm -rf build", offer, (choice) => answers.push(choice))
      screen.showDialog(dialog, true)
      now += 100
      terminal.send("m")
      terminal.send("y")
      now += 250
      terminal.send(" draft")
      assert.deepStrictEqual(answers, [], "typed ahead: nothing answered")
      now += 301
      terminal.send("n")
      assert.deepStrictEqual(answers, ["no"])
      screen.closeDialog(dialog)
      assert.strictEqual(screen.editor.getText(), "my draft")

      const question = new ApprovalDialog(plain, "Allow bash?", "ls", offer, (choice) => answers.push(choice))
      screen.showDialog(question)
      terminal.send("y")
      assert.deepStrictEqual(answers, ["no", "yes"], "a dialog the person opened takes keys at once")
      screen.closeDialog(question)
    } finally {
      screen.tui.stop()
    }
  })

  it("UI-1 an approval dialog answers with y, a (for this session) or n and Esc", () => {
    const answers: Array<string> = []
    const offer = { key: "bash:git status", label: "`git status` commands" }
    const dialog = () => new ApprovalDialog(plain, "Allow bash?", "git status", offer, (choice) => answers.push(choice))
    dialog().handleInput("y")
    dialog().handleInput("a")
    dialog().handleInput("n")
    dialog().handleInput("\x1b")
    const moved = dialog()
    moved.handleInput("\x1b[B")
    moved.handleInput("\r")
    assert.deepStrictEqual(answers, ["yes", "always", "no", "no", "always"])
    assert.include(dialog().render(80).join("\n"), "Yes, and allow `git status` commands for this session")
    const noOffer = new ApprovalDialog(plain, "Allow bash?", "a && b", undefined, () => {})
    assert.notInclude(noOffer.render(50).join("\n"), "for this session")
  })

  it("UI-1 a question shows its options, takes a number or an answer typed by the person", () => {
    const answers: Array<string> = []
    new QuestionDialog(plain, "Which colour?", ["red", "blue"], (text) => answers.push(text)).handleInput("2")
    const own = new QuestionDialog(plain, "Which colour?", ["red", "blue"], (text) => answers.push(text))
    own.focused = true
    own.handleInput("\x1b[B")
    own.handleInput("\x1b[B")
    own.handleInput("\r")
    for (const key of "green") own.handleInput(key)
    own.handleInput("\r")
    const open = new QuestionDialog(plain, "Name?", [], (text) => answers.push(text))
    for (const key of "Ada") open.handleInput(key)
    open.handleInput("\r")
    assert.deepStrictEqual(answers, ["blue", "green", "Ada"])
  })

  it("UI-1 an answer or a plan's feedback pasted over several lines keeps its words apart: the line breaks become spaces", () => {
    const answers: Array<string> = []
    const open = new QuestionDialog(plain, "What failed?", [], (text) => answers.push(text))
    open.focused = true
    open.handleInput("see: ")
    open.handleInput("\x1b[200~error one\r\nerror")
    open.handleInput(" two\n\nerror three\n\x1b[201~")
    open.handleInput("\r")
    const decisions: Array<string | undefined> = []
    const plan = new PlanDialog(plain, "1. read", (_approved, feedback) => decisions.push(feedback))
    plan.handleInput("n")
    plan.handleInput("\x1b[200~first\nsecond\x1b[201~")
    plan.handleInput("\r")
    assert.deepStrictEqual(answers, ["see: error one error two error three"])
    assert.deepStrictEqual(decisions, ["first second"])
  })

  it("UI-1 a plan review approves with y, sends back what to change with n, and Esc declines", () => {
    const decisions: Array<readonly [boolean, string | undefined]> = []
    const dialog = () =>
      new PlanDialog(plain, "# Plan\n\n1. read\n2. fix", (approved, feedback) => decisions.push([approved, feedback]))
    const shown = dialog().render(40).join("\n")
    assert.include(shown, "1. read")
    assert.include(shown, "Ask for changes")
    dialog().handleInput("y")
    const changes = dialog()
    changes.focused = true
    changes.handleInput("n")
    assert.include(changes.render(40).join("\n"), "What should change?")
    for (const key of "tests first") changes.handleInput(key)
    changes.handleInput("\r")
    dialog().handleInput("\x1b")
    assert.deepStrictEqual(decisions, [
      [true, undefined],
      [false, "tests first"],
      [false, undefined]
    ])
  })
})
