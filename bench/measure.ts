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
  readonly cpuMs: number
  readonly maxRssMb: number
}

const preload = fileURLToPath(new URL("./rusage-preload.cjs", import.meta.url))

/**
 * Runs `node <args>` to completion `runs` times; medians of wall time, and of the CPU time
 * (user + system) and peak RSS the process reports for itself on exit. Asynchronous, so a server
 * in this process keeps answering the measured one.
 */
export const measureNode = async (
  runs: number,
  args: ReadonlyArray<string>,
  options: { readonly env?: NodeJS.ProcessEnv } = {}
): Promise<ProcessFigures> => {
  const dir = mkdtempSync(join(tmpdir(), "alisio-bench-"))
  const file = join(dir, "rusage.jsonl")
  const walls: Array<number> = []
  try {
    for (let i = 0; i < runs; i++) {
      const start = performance.now()
      const child = spawn(process.execPath, ["--require", preload, ...args], {
        env: { ...(options.env ?? process.env), BENCH_RUSAGE_FILE: file },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (data: Buffer) => (stderr += data.toString()))
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
      walls.push(performance.now() - start)
      if (code !== 0) throw new Error(`node ${args.join(" ")} exited ${code}: ${stderr.slice(0, 500)}`)
    }
    const usages = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { cpuMs: number; maxRssMb: number })
    return {
      wallMs: median(walls),
      cpuMs: median(usages.map((u) => u.cpuMs)),
      maxRssMb: median(usages.map((u) => u.maxRssMb))
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const ratio = (value: number, floor: number): string => `${(value / floor).toFixed(2)}×`

export const row = (label: string, value: number, unit: string, floor?: number): void => {
  const figure = `${value.toFixed(value < 10 ? 3 : 1)} ${unit}`
  console.log(
    `${label.padEnd(48)} ${figure.padStart(14)}${floor === undefined ? "" : `   ${ratio(value, floor)} floor`}`
  )
}
