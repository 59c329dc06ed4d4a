import { fromPrompt } from "@alisio/runtime/SessionTitles"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import { assert, describe, it } from "@effect/vitest"

describe("terminal text", () => {
  it("CLI-1 escape sequences and control characters are removed; tabs, newlines and text stay", () => {
    assert.strictEqual(terminalSafe("plain text\twith a tab\nand lines\r\n"), "plain text\twith a tab\nand lines\r\n")
    assert.strictEqual(terminalSafe("a\u001b]52;c;ZXZpbA==\u0007b"), "ab", "OSC 52 would set the clipboard")
    assert.strictEqual(terminalSafe("a\u001b]0;title\u001b\\b"), "ab", "an OSC ended by ST")
    assert.strictEqual(terminalSafe("a\u001b[2J\u001b[31mred\u001b[0m"), "ared", "CSI, 7-bit")
    assert.strictEqual(terminalSafe("a\u009b2Jb"), "ab", "CSI, 8-bit")
    assert.strictEqual(terminalSafe("a\u001bPq#0;2;0;0;0\u001b\\b"), "ab", "DCS")
    assert.strictEqual(terminalSafe("a\u001b]52;c;unterminated"), "a", "an unterminated OSC's payload never shows")
    assert.strictEqual(terminalSafe("a\u0000\u0007\u0008\u007fb\u202ec"), "abc", "NUL, BEL, backspace, DEL, bidi")
    assert.strictEqual(terminalSafe("50%\r75%\r100%\n"), "50%75%100%\n", "a lone carriage return goes")
    assert.strictEqual(terminalSafe("50%\r75%\n", true), "50%\r75%\n", "unless a progress bar keeps it")
    const text = "nothing to clean"
    assert.strictEqual(terminalSafe(text), text)
  })

  it("CLI-1 a title, from a prompt or from the model, holds no escape sequence", () => {
    assert.strictEqual(fromPrompt("\u001b]0;pwned\u0007Fix the \u001b[31mlogin\u001b[0m bug"), "Fix the login bug")
  })
})
