import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startOpenAiServer } from "../test/support/openaiServer.js"

const bin = process.env.EXP_BIN ?? fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))
const server = await startOpenAiServer({
  models: ["bench-model"],
  replyFor: (request, index) =>
    (request.body.messages ?? []).some((m) => m.role === "tool")
      ? { kind: "text", text: "word ".repeat(20), chunks: 20 }
      : { kind: "tool", id: `call_${index}`, name: "bash", args: { command: "echo hi" } }
})
const home = process.env.EXP_HOME ?? mkdtempSync(join(tmpdir(), "alisio-one-"))
console.log("home", home)
const env = { ...process.env, ALISIO_HOME: home, OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "k", NO_COLOR: "1" }
const runOnce = () =>
  new Promise<void>((resolve) => {
    const child = spawn(
      process.execPath,
      [...process.argv.slice(2), bin, "run", "--yes", "-m", "openai/bench-model", "bench"],
      { env, stdio: ["ignore", "inherit", "inherit"] }
    )
    child.on("close", (code) => {
      console.log("exit", code)
      resolve()
    })
  })
await runOnce()
await runOnce()
await server.close()
process.exit(0)
