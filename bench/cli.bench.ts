// Whole-process figures of the built CLI against a local OpenAI-protocol server, next to
// `node -e 0` measured in the same run: a two-turn task (one bash call, then N text deltas).

import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startOpenAiServer } from "../test/support/openaiServer.js"
import { measureNode, row } from "./measure.js"

const bin = fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))

const twoTurnTask = async (deltas: number) => {
  const server = await startOpenAiServer({
    replyFor: (_, index) =>
      index % 2 === 0
        ? { kind: "tool", id: `call_${index}`, name: "bash", args: { command: "echo hi" } }
        : { kind: "text", text: "word ".repeat(deltas), chunks: deltas }
  })
  const home = mkdtempSync(join(tmpdir(), "alisio-bench-home-"))
  try {
    const env = {
      ...process.env,
      ALISIO_HOME: home,
      OPENAI_BASE_URL: server.baseURL,
      OPENAI_API_KEY: "k",
      NO_COLOR: "1"
    }
    return await measureNode(7, [bin, "run", "--yes", "-m", "openai/test-model", "say hi"], { env })
  } finally {
    await server.close()
    rmSync(home, { recursive: true, force: true })
  }
}

export const run = async (): Promise<void> => {
  const floor = await measureNode(7, ["-e", "0"])
  row("node -e 0 (floor): wall", floor.wallMs, "ms")
  row("node -e 0 (floor): CPU", floor.cpuMs, "ms")
  const small = await twoTurnTask(200)
  row("two-turn task, 200 deltas: wall", small.wallMs, "ms", floor.wallMs)
  row("two-turn task, 200 deltas: CPU", small.cpuMs, "ms", floor.cpuMs)
  row("two-turn task, 200 deltas: peak RSS", small.maxRssMb, "MB", floor.maxRssMb)
  const large = await twoTurnTask(5000)
  row("two-turn task, 5 000 deltas: wall", large.wallMs, "ms", floor.wallMs)
  row("two-turn task, 5 000 deltas: CPU", large.cpuMs, "ms", floor.cpuMs)
  row("two-turn task, 5 000 deltas: peak RSS", large.maxRssMb, "MB", floor.maxRssMb)
  row("CPU per extra 1 000 deltas", (large.cpuMs - small.cpuMs) / 4.8, "ms")
}
