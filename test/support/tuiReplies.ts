// What the UI's end-to-end tests share: the fake model's scripted replies by prompt, and the
// shape of `alisio sessions show --json` they read back.
import type { RecordedRequest, Reply } from "./openaiServer.js"

export const lastUserText = (request: RecordedRequest): string => {
  const users = (request.body.messages ?? []).filter((message) => message.role === "user")
  const content = users.at(-1)?.content
  return typeof content === "string" ? content : JSON.stringify(content ?? "")
}

export const makeReplies = () => {
  let busyServer = 0
  return (request: RecordedRequest): Reply => {
    const prompt = lastUserText(request)
    const last = request.body.messages?.at(-1)
    const afterTool = last?.role === "tool"
    if (prompt.includes("say hello")) return { kind: "text", text: "Hello from the **model**.", chunks: 5, delayMs: 20 }
    if (prompt.includes("tell a story"))
      return { kind: "text", text: "Once upon a time the story ended.", chunks: 10, delayMs: 300 }
    if (prompt.includes("and now goodbye")) return { kind: "text", text: "Goodbye from the model." }
    if (prompt.includes("busy server"))
      return busyServer++ === 0
        ? { kind: "error", status: 429, message: "Rate limit reached", headers: { "retry-after": "1" } }
        : { kind: "text", text: "Served after a retry." }
    if (prompt.includes("list files"))
      return afterTool
        ? { kind: "text", text: "Listed the files." }
        : { kind: "tool", id: "call_ls", name: "bash", args: { command: "ls" } }
    if (prompt.includes("remove the notes"))
      return afterTool
        ? { kind: "text", text: "The notes were not removed." }
        : { kind: "tool", id: "call_rm", name: "bash", args: { command: "rm -f notes.txt" } }
    if (prompt.includes("pick a colour"))
      return afterTool
        ? {
            kind: "text",
            text: `You picked ${JSON.stringify(last?.content).includes("blue") ? "blue" : "something else"}.`
          }
        : {
            kind: "tool",
            id: "call_ask",
            name: "ask_user_question",
            args: { question: "Which colour?", options: ["red", "blue"] }
          }
    if (prompt.includes("run a long command"))
      return afterTool
        ? { kind: "text", text: "The command ended." }
        : { kind: "tool", id: "call_long", name: "bash", args: { command: "sleep 30 & echo $! > sleeper.pid; wait" } }
    if (prompt.includes("hostile output"))
      return afterTool
        ? { kind: "text", text: "Done\u001b]52;c;ZXZpbA==\u0007 here\u001b[2J, \u001b]0;pwned\u0007fine." }
        : {
            kind: "tool",
            id: "call_hostile",
            name: "bash",
            args: { command: "printf 'a\\033]52;c;ZXZpbA==\\007b\\033]0;pwned\\007c\\033[31mred\\n'" }
          }
    if (prompt.includes("write slowly"))
      return { kind: "text", text: "Slowly, word after word, ".repeat(200), chunks: 400, delayMs: 50 }
    return { kind: "text", text: "I did not understand." }
  }
}

export interface ShownSession {
  readonly id: string
  readonly runs: ReadonlyArray<{ readonly status: string }>
  readonly messages: ReadonlyArray<{
    readonly message: {
      readonly role: string
      readonly content: unknown
      readonly isError?: boolean
    }
  }>
}
