// Small helpers shared by the benchmarks: timing, medians and the floor ratio.
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export interface ProcessFigures {
  readonly wallMs: number
  /** The fastest run: on a shared machine, the one least slowed by others. */
  readonly minWallMs: number
  readonly cpuMs: number
  readonly maxRssMb: number
}

const preload = fileURLToPath(new URL("./rusage-preload.cjs", import.meta.url))

/** One process to measure: `node <args>`, with another Node binary when `node` is given. */
export interface NodeCommand {
  readonly args: ReadonlyArray<string>
  readonly env?: NodeJS.ProcessEnv | undefined
  readonly node?: string | undefined
}

const runOnce = async (command: NodeCommand, file: string): Promise<number> => {
  const start = performance.now()
  const child = spawn(command.node ?? process.execPath, ["--require", preload, ...command.args], {
    env: { ...(command.env ?? process.env), BENCH_RUSAGE_FILE: file },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (data: Buffer) => (stderr += data.toString()))
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
  const wall = performance.now() - start
  if (code !== 0) throw new Error(`node ${command.args.join(" ")} exited ${code}: ${stderr.slice(0, 500)}`)
  return wall
}

const usagesIn = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { cpuMs: number; maxRssMb: number })

/**
 * Runs every command `runs` times, taking turns (A B C A B C …) so that a busy machine weighs on
 * all of them alike; for each, medians of wall time, and of the CPU time (user + system) and peak
 * RSS the process reports for itself on exit. Asynchronous, so a server in this process keeps
 * answering the measured ones.
 */
export const measureInterleaved = async (
  runs: number,
  commands: ReadonlyArray<NodeCommand>
): Promise<Array<ProcessFigures>> => {
  const dir = mkdtempSync(join(tmpdir(), "alisio-bench-"))
  const files = commands.map((_, i) => join(dir, `rusage-${i}.jsonl`))
  const walls = commands.map((): Array<number> => [])
  try {
    for (let round = 0; round < runs; round++) {
      for (const [i, command] of commands.entries()) walls[i]!.push(await runOnce(command, files[i]!))
    }
    return commands.map((_, i) => {
      const usages = usagesIn(files[i]!)
      return {
        wallMs: median(walls[i]!),
        minWallMs: Math.min(...walls[i]!),
        cpuMs: median(usages.map((u) => u.cpuMs)),
        maxRssMb: median(usages.map((u) => u.maxRssMb))
      }
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Runs `node <args>` to completion `runs` times: medians of wall time, CPU time and peak RSS. */
export const measureNode = async (
  runs: number,
  args: ReadonlyArray<string>,
  options: { readonly env?: NodeJS.ProcessEnv; readonly node?: string } = {}
): Promise<ProcessFigures> => (await measureInterleaved(runs, [{ args, ...options }]))[0]!

export const ratio = (value: number, floor: number): string => `${(value / floor).toFixed(2)}×`

export const row = (label: string, value: number, unit: string, floor?: number): void => {
  const figure = `${value.toFixed(value < 10 ? 3 : 1)} ${unit}`
  console.log(
    `${label.padEnd(48)} ${figure.padStart(14)}${floor === undefined ? "" : `   ${ratio(value, floor)} floor`}`
  )
}
