// The interactive UI: launch to an editor ready for input (the built CLI on a pseudo-terminal,
// next to `node -e 0`, with where the time goes from the UI's own marks), frame time while 5 000
// deltas stream, CPU per 1 000 deltas through the UI.
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { RunView } from "../packages/cli/src/tui/RunView.js"
import type { Terminal } from "../packages/cli/src/tui/Screen.js"
import { Screen } from "../packages/cli/src/tui/Screen.js"
import { makeTheme } from "../packages/cli/src/tui/Theme.js"
import { ToolCard } from "../packages/cli/src/tui/ToolCard.js"
import { startOpenAiServer } from "../test/support/openaiServer.js"
import { measureNode, median, row } from "./measure.js"

const bin = fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))

/** A terminal that keeps nothing: what is measured is the UI's work, not a terminal emulator's. */
class NullTerminal implements Terminal {
  bytes = 0
  start(): void {}
  stop(): void {}
  async drainInput(): Promise<void> {}
  write(data: string): void {
    this.bytes += data.length
  }
  get columns(): number {
    return 100
  }
  get rows(): number {
    return 40
  }
  get kittyProtocolActive(): boolean {
    return false
  }
  moveBy(): void {}
  hideCursor(): void {}
  showCursor(): void {}
  clearLine(): void {}
  clearFromCursor(): void {}
  clearScreen(): void {}
  setTitle(): void {}
  setProgress(): void {}
  setProgramStatus(): void {}
}

const shellQuote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`

/**
 * Runs `command` on a pseudo-terminal (util-linux `script`) until its output shows `marks`, in
 * order, and `settled` holds (polled for up to 2 s: the process's own trace marks); the times.
 */
const onTerminal = (
  command: string,
  env: NodeJS.ProcessEnv,
  marks: ReadonlyArray<string>,
  settled: () => boolean = () => true
) =>
  new Promise<ReadonlyArray<number>>((resolve, reject) => {
    const start = performance.now()
    const child = spawn("script", ["-qfec", command, "/dev/null"], { env, stdio: ["pipe", "pipe", "pipe"] })
    let output = ""
    const times: Array<number> = []
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`no ${marks[times.length]} within 20 s:\n${output.slice(-2000)}`))
    }, 20_000)
    child.stdout.on("data", (data: Buffer) => {
      output += data.toString("utf8")
      const seen = times.length
      while (times.length < marks.length && output.includes(marks[times.length]!)) times.push(performance.now() - start)
      if (times.length === marks.length && seen < marks.length) {
        const deadline = performance.now() + 2_000
        const exit = () => {
          if (settled() || performance.now() > deadline) child.stdin.write("\x04")
          else setTimeout(exit, 10)
        }
        exit()
      }
    })
    child.on("close", () => {
      clearTimeout(timer)
      if (times.length === marks.length) resolve(times)
      else reject(new Error(`ended before ${marks[times.length]}:\n${output.slice(-2000)}`))
    })
  })

const launch = async () => {
  const server = await startOpenAiServer({ replies: [] })
  const root = mkdtempSync(join(tmpdir(), "alisio-bench-tui-"))
  const env = {
    PATH: process.env.PATH,
    HOME: root,
    ALISIO_HOME: join(root, "home"),
    OPENAI_BASE_URL: server.baseURL,
    OPENAI_API_KEY: "k",
    TERM: "xterm-256color",
    NO_COLOR: "1"
  }
  try {
    const floor = await measureNode(7, ["-e", "0"])
    row("node -e 0 (floor), wall", floor.wallMs, "ms")
    const ready: Array<number> = []
    const composed: Array<number> = []
    const cli = `cd ${shellQuote(root)} && exec ${shellQuote(process.execPath)} ${shellQuote(bin)}`
    await onTerminal(cli, env, ["ctrl-d exit"]) // warms the disk cache and makes the state home
    // ALISIO_TUI_TRACE: the process's own times (since it started) at the marks of tui/LaunchTrace.ts.
    const marks = new Map<string, Array<number>>()
    for (let i = 0; i < 7; i++) {
      const trace = join(root, `trace-${i}`)
      const [editor, model] = await onTerminal(
        cli,
        { ...env, ALISIO_TUI_TRACE: trace },
        ["ctrl-d exit", "openai/test-model"],
        () => existsSync(trace) && readFileSync(trace, "utf8").includes("runtime-ready")
      )
      ready.push(editor!)
      composed.push(model!)
      if (!existsSync(trace)) continue
      for (const line of readFileSync(trace, "utf8").trim().split("\n")) {
        const [name, ms] = line.split(" ")
        marks.set(name!, [...(marks.get(name!) ?? []), Number(ms)])
      }
    }
    const ptyFloor: Array<number> = []
    for (let i = 0; i < 5; i++) {
      const start = performance.now()
      await new Promise((resolve) =>
        spawn("script", ["-qfec", `${shellQuote(process.execPath)} -e 0`, "/dev/null"], { stdio: "ignore" }).on(
          "close",
          resolve
        )
      )
      ptyFloor.push(performance.now() - start)
    }
    row("node -e 0 on a pseudo-terminal (floor), wall", median(ptyFloor), "ms")
    row("alisio: launch to the editor ready, wall", median(ready), "ms", median(ptyFloor))
    row("alisio: launch to the runtime composed, wall", median(composed), "ms", median(ptyFloor))
    const at = (name: string) => median(marks.get(name) ?? [Number.NaN])
    row("  in-process: start to the UI's code running", at("ui-loaded"), "ms")
    row("  in-process: the UI's code to the first frame", at("editor-ready") - at("ui-loaded"), "ms")
    row("  in-process: start to the editor ready", at("editor-ready"), "ms")
    row("  in-process: the editor to the runtime ready", at("runtime-ready") - at("editor-ready"), "ms")
  } finally {
    await server.close()
    rmSync(root, { recursive: true, force: true })
  }
}

const event = <T extends KnownRunEvent["type"]>(type: T, data: Extract<KnownRunEvent, { type: T }>["data"]) =>
  ({ type, data, schemaVersion: 1, runId: "r", seq: 0, sessionId: "s", time: "" }) as unknown as KnownRunEvent

/** An answer of ~5 000 deltas: prose, lists and code blocks, as models write them. */
const deltas = (count: number): ReadonlyArray<string> => {
  const blocks = [
    "Here is what the change does, step by step, with the reasons behind each part of it. ",
    "\n\n- the parser reads the header first\n- then each record, one a line\n\n",
    "```ts\nexport const parse = (text: string) => text.split('\\n').map((line) => line.trim())\n```\n\n",
    "**Note**: the `records` are checked before they are stored, so a bad one never lands. "
  ]
  const text = Array.from({ length: 200 }, (_, i) => blocks[i % blocks.length]!).join("")
  const size = Math.max(1, Math.floor(text.length / count))
  return Array.from({ length: count }, (_, i) => text.slice(i * size, (i + 1) * size))
}

export const streaming = () => {
  const terminal = new NullTerminal()
  const screen = new Screen(terminal, makeTheme({ color: true }))
  const view = new RunView(screen, () => 0)
  screen.tui.start()
  // An earlier conversation on screen, as after an hour of work.
  for (let i = 0; i < 60; i++) {
    const card = new ToolCard(`c${i}`, "bash", JSON.stringify({ command: `make test-${i}` }), screen.theme)
    card.complete("completed", "ok\n".repeat(20), 1200)
    screen.add(card)
  }
  screen.tui.renderNow()
  const parts = deltas(5_000)
  const frames: Array<number> = []
  const frameCpu: Array<number> = []
  // A model streams about one delta a millisecond; the UI draws at most one frame every 16 ms.
  const perFrame = 16
  const cpu = process.cpuUsage()
  view.apply(event("run_started", { provider: "p", model: "m", readOnly: false }))
  for (let i = 0; i < parts.length; i++) {
    view.apply(event("text_delta", { text: parts[i]! }))
    if (i % perFrame === perFrame - 1 || i === parts.length - 1) {
      const start = performance.now()
      const startCpu = process.cpuUsage()
      screen.tui.renderNow()
      frames.push(performance.now() - start)
      const spent = process.cpuUsage(startCpu)
      frameCpu.push((spent.user + spent.system) / 1000)
    }
  }
  const used = process.cpuUsage(cpu)
  screen.tui.stop()
  const percentile = (values: ReadonlyArray<number>, q: number) => {
    const sorted = [...values].sort((a, b) => a - b)
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
  }
  row(`frames while streaming ${parts.length} deltas`, frames.length, "frames")
  row("frame time p50, wall", percentile(frames, 0.5), "ms")
  row("frame time p99, wall (goal < 16 ms)", percentile(frames, 0.99), "ms")
  row("frame time max, wall", percentile(frames, 1), "ms")
  // Wall time counts the moments the OS gives the core to another process; CPU time does not.
  row("frame time p99, CPU", percentile(frameCpu, 0.99), "ms")
  row("CPU per 1 000 deltas through the UI", (used.user + used.system) / 1000 / (parts.length / 1000), "ms")
  row("bytes written to the terminal per delta", terminal.bytes / parts.length, "B")
  row("full redraws while streaming", screen.tui.fullRedraws, "")
}

export const run = async (): Promise<void> => {
  await launch()
  streaming()
}
