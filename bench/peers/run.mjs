#!/usr/bin/env node
// Side-by-side bench (issue 17): `node -e 0`, the floor, Alisio, Codex, Claude Code and pi on the
// same machine in the same run, against one fake model server on 127.0.0.1. Prints the issue's
// Markdown table (medians, ratios to the floor) and what each subject did on the wire.
//
//   node bench/peers/run.mjs [--runs 5] [--deltas 5000] [--base-deltas 200] [--peers-dir DIR]
//                            [--floor FILE] [--only a,b] [--timeout 120] [--json FILE] [--no-netns]
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { makeRusage, measureTree, median, runProcess } from "./measure.mjs"
import { FINAL_MARK, startServer } from "./server.mjs"
import { baseEnv, subjects } from "./subjects.mjs"

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")

const parseArgs = (argv) => {
  const options = {
    runs: 5,
    deltas: 5000,
    baseDeltas: 200,
    peersDir: process.env.PEERS_DIR,
    floor: undefined,
    only: undefined,
    timeoutMs: 120_000,
    json: undefined,
    netns: true
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    const value = () => {
      const next = argv[++i]
      if (next === undefined) throw new Error(`${flag} needs a value`)
      return next
    }
    const count = () => {
      const n = Number(value())
      if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes a positive integer`)
      return n
    }
    if (flag === "--runs") options.runs = count()
    else if (flag === "--deltas") options.deltas = count()
    else if (flag === "--base-deltas") options.baseDeltas = count()
    else if (flag === "--peers-dir") options.peersDir = resolve(value())
    else if (flag === "--floor") options.floor = resolve(value())
    else if (flag === "--only") options.only = value().split(",")
    else if (flag === "--timeout") options.timeoutMs = count() * 1000
    else if (flag === "--json") options.json = resolve(value())
    else if (flag === "--no-netns") options.netns = false
    else throw new Error(`unknown option ${flag}; see the usage at the top of bench/peers/run.mjs`)
  }
  if (options.deltas <= options.baseDeltas) throw new Error("--deltas must be larger than --base-deltas")
  return options
}

/**
 * On Linux, runs the whole bench again inside a fresh network namespace holding only loopback:
 * the server and every subject share 127.0.0.1 and nothing can reach further. Returns the exit
 * code, or undefined to run here (not Linux, --no-netns, already inside, or unshare refused).
 */
const inNetworkNamespace = (options) => {
  if (process.platform !== "linux" || !options.netns || process.env.BENCH_PEERS_NETNS === "1") return undefined
  const flags = process.getuid?.() === 0 ? ["--net"] : ["--net", "--map-root-user"]
  const probe = spawnSync("unshare", [...flags, "sh", "-c", "ip link set lo up"], { stdio: "ignore" })
  if (probe.status !== 0) {
    console.log("note: no network namespace (unshare or ip unavailable); relying on the refusing proxy")
    return undefined
  }
  const script = 'ip link set lo up && exec "$0" "$@"'
  const child = spawnSync("unshare", [...flags, "sh", "-c", script, process.execPath, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, BENCH_PEERS_NETNS: "1" }
  })
  return child.status ?? 1
}

/** Why a task run does not count as done, or undefined when bash ran and the answer was printed. */
const failure = (result, log, deltas) => {
  if (result.timedOut) return "timed out"
  if (result.code !== 0) {
    const last = result.stderr.trim().split("\n").pop() ?? ""
    return `exit ${result.code}${last === "" ? "" : `: ${last.slice(0, 160)}`}`
  }
  const errors = log.filter((entry) => entry.kind === "error")
  if (errors.length > 0) return `server error: ${errors[0].error}`
  if (!log.some((entry) => entry.kind === "tool")) return "never asked for the task (no request offering a shell tool)"
  const answer = log.find((entry) => entry.kind === "answer")
  if (answer === undefined) return "never sent the tool result back"
  if (!/\bhi\b/.test(answer.toolOutput ?? "")) return `bash output missing from the tool result: ${answer.toolOutput}`
  if (!result.stdout.includes(FINAL_MARK)) return "final answer not printed"
  const words = result.stdout.match(/word/g)?.length ?? 0
  if (words < deltas - 1) return `final answer cut short: ${words + 1} of ${deltas} deltas printed`
  if (result.figures === undefined) return "no rusage figures"
  return undefined
}

const ms = (value) => `${Math.round(value).toLocaleString("en-US").replaceAll(",", " ")} ms`
const mb = (value) => `${value < 100 ? value.toFixed(1) : Math.round(value)} MB`
const times = (value, base) => (base === undefined || base <= 0 ? "" : ` (${(value / base).toFixed(2)}×)`)

const main = async () => {
  const started = performance.now()
  const options = parseArgs(process.argv.slice(2))
  const code = inNetworkNamespace(options)
  if (code !== undefined) process.exit(code)

  const root = mkdtempSync(join(tmpdir(), "alisio-peers-"))
  const rusage = makeRusage(root)
  const server = await startServer()
  const all = subjects({ repo, peersDir: options.peersDir, floor: options.floor }).filter(
    (s) => options.only === undefined || s.id === "node" || s.id === "floor" || options.only.includes(s.id)
  )
  const live = []
  const notes = []
  try {
    for (const subject of all) {
      const found = subject.resolve()
      if (found.skip !== undefined) {
        console.log(`skip ${subject.id}: ${found.skip}`)
        notes.push(`${subject.id}: skipped, ${found.skip}`)
        continue
      }
      const home = join(root, subject.id, "home")
      const cwd = join(root, subject.id, "work")
      mkdirSync(home, { recursive: true })
      mkdirSync(cwd, { recursive: true })
      const env = { ...baseEnv(home, server.proxy) }
      const version = await runProcess([...found.command, ...(subject.versionArgs ?? [])], {
        env,
        cwd,
        timeoutMs: options.timeoutMs
      })
      const entry = {
        subject,
        command: found.command,
        cwd,
        env,
        // pi prints its version on stderr.
        label: subject.label((version.stdout.trim() || version.stderr.trim()).split("\n")[0] ?? ""),
        versionWalls: [],
        base: [],
        large: [],
        escapes: new Set(),
        requests: new Set(),
        failed: undefined
      }
      if (subject.task !== false) {
        const setup = subject.setup(home, server.origin)
        entry.taskArgs = setup.args
        Object.assign(env, setup.env)
        // One unmeasured run: checks the task really completes and leaves the subject warm
        // (first-run set-up such as databases and installed skills is not what is measured).
        server.reset(options.baseDeltas)
        const result = await measureTree(rusage, root, [...found.command, ...setup.args], {
          env,
          cwd,
          timeoutMs: options.timeoutMs
        })
        for (const attempt of server.escapes()) entry.escapes.add(attempt)
        entry.failed = failure(result, server.log(), options.baseDeltas)
        console.log(`${subject.id}: ${entry.failed === undefined ? "completes the task" : `FAILS: ${entry.failed}`}`)
      }
      live.push(entry)
    }

    const task = async (entry, deltas, into) => {
      server.reset(deltas)
      const result = await measureTree(rusage, root, [...entry.command, ...entry.taskArgs], {
        env: entry.env,
        cwd: entry.cwd,
        timeoutMs: options.timeoutMs
      })
      for (const attempt of server.escapes()) entry.escapes.add(attempt)
      entry.requests.add(
        server
          .log()
          .map((e) => `${e.method} ${e.path} (${e.kind})`)
          .join(", ")
      )
      const why = failure(result, server.log(), deltas)
      if (why !== undefined) {
        entry.failed = `${why} (${deltas} deltas)`
        console.log(`${entry.subject.id}: FAILS: ${entry.failed}`)
      } else into.push(result.figures)
    }

    // Round robin, so a change in the machine's load falls on every subject alike.
    for (let run = 0; run < options.runs; run++) {
      process.stdout.write(`run ${run + 1}/${options.runs}:`)
      for (const entry of live) {
        if (entry.failed !== undefined) continue
        process.stdout.write(` ${entry.subject.id}`)
        if (entry.subject.versionArgs !== undefined) {
          const result = await runProcess([...entry.command, ...entry.subject.versionArgs], {
            env: entry.env,
            cwd: entry.cwd,
            timeoutMs: options.timeoutMs
          })
          if (result.code === 0) entry.versionWalls.push(result.wallMs)
        }
        if (entry.subject.task === false) {
          const result = await measureTree(rusage, root, [...entry.command, ...entry.subject.versionArgs], {
            env: entry.env,
            cwd: entry.cwd,
            timeoutMs: options.timeoutMs
          })
          if (result.figures !== undefined) entry.base.push(result.figures)
          continue
        }
        await task(entry, options.baseDeltas, entry.base)
        if (entry.failed === undefined) await task(entry, options.deltas, entry.large)
      }
      process.stdout.write("\n")
    }
  } finally {
    await server.close()
    rmSync(root, { recursive: true, force: true })
  }

  const figures = live.map((entry) => {
    const of = (list, key) => (list.length === 0 ? undefined : median(list.map((f) => f[key])))
    const baseCpu = of(entry.base, "cpuMs")
    const largeCpu = of(entry.large, "cpuMs")
    return {
      id: entry.subject.id,
      label: entry.label,
      command: [...entry.command, ...(entry.taskArgs ?? entry.subject.versionArgs ?? [])],
      failed: entry.failed,
      versionWallMs: entry.versionWalls.length === 0 ? undefined : median(entry.versionWalls),
      taskCpuMs: baseCpu,
      taskWallMs: of(entry.base, "wallMs"),
      peakRssMb: of(entry.base, "rssMb"),
      largeCpuMs: largeCpu,
      largeRssMb: of(entry.large, "rssMb"),
      // Each round's long run minus its short run, taken seconds apart: load drift cancels better
      // than in a difference of two medians.
      cpuPer1000DeltasMs:
        entry.large.length === 0
          ? undefined
          : median(entry.large.map((f, i) => f.cpuMs - entry.base[i].cpuMs)) *
            (1000 / (options.deltas - options.baseDeltas)),
      samples: {
        versionWallMs: entry.versionWalls,
        taskCpuMs: entry.base.map((f) => f.cpuMs),
        largeCpuMs: entry.large.map((f) => f.cpuMs)
      },
      requests: [...entry.requests],
      escapes: [...entry.escapes]
    }
  })
  const node = figures.find((f) => f.id === "node")
  const floor = figures.find((f) => f.id === "floor" && f.failed === undefined)
  const cell = (value, format, base) => (value === undefined ? "–" : `${format(value)}${times(value, base)}`)

  console.log(
    `\nMedians of ${options.runs} on Node ${process.version}, ${options.baseDeltas}-delta task; per-delta cost: median of each round's ` +
      `${options.deltas}-delta run minus its ${options.baseDeltas}-delta run. Ratios: \`--version\` to \`node -e 0\`, the rest to the floor. ` +
      `CPU is user + system of the whole process tree (${rusage.name}); peak RSS is its largest process.\n`
  )
  console.log("| | `--version` wall | 2-turn task CPU | peak RSS | CPU per 1 000 extra deltas |")
  console.log("|---|---:|---:|---:|---:|")
  for (const f of figures) {
    const isNode = f.id === "node"
    const version = cell(f.versionWallMs, ms, isNode ? undefined : node?.versionWallMs)
    if (f.failed !== undefined) {
      console.log(`| ${f.label} | ${version} | fails: ${f.failed.replaceAll("|", "\\|")} | – | – |`)
      continue
    }
    const base = isNode ? undefined : floor
    console.log(
      `| ${f.label} | ${f.id === "floor" ? "–" : version} | ${cell(f.taskCpuMs, ms, base?.taskCpuMs)} | ` +
        `${cell(f.peakRssMb, mb, base?.peakRssMb)} | ${isNode ? "–" : cell(f.cpuPer1000DeltasMs, ms, base?.cpuPer1000DeltasMs)} |`
    )
  }
  console.log(`\n| | task wall (${options.baseDeltas}) | task CPU (${options.deltas}) | peak RSS (${options.deltas}) |`)
  console.log("|---|---:|---:|---:|")
  for (const f of figures.filter((f) => f.id !== "node" && f.failed === undefined))
    console.log(`| ${f.label} | ${cell(f.taskWallMs, ms)} | ${cell(f.largeCpuMs, ms)} | ${cell(f.largeRssMb, mb)} |`)

  console.log("\nWhat each subject ran and sent:")
  for (const f of figures) {
    console.log(`- ${f.id}: ${f.command.map((a) => (/[\s`]/.test(a) ? JSON.stringify(a) : a)).join(" ")}`)
    for (const r of f.requests) console.log(`  requests: ${r}`)
    if (f.escapes.length > 0) console.log(`  refused attempts to leave 127.0.0.1: ${f.escapes.join(", ")}`)
  }
  for (const note of notes) console.log(`- ${note}`)
  console.log(
    process.env.BENCH_PEERS_NETNS === "1"
      ? "Network: own namespace with loopback only; nothing could leave 127.0.0.1."
      : "Network: no namespace; proxy variables point at a refusing proxy (Node's fetch ignores them)."
  )
  console.log(`Bench time: ${Math.round((performance.now() - started) / 1000)} s.`)
  if (options.json !== undefined) {
    writeFileSync(options.json, `${JSON.stringify({ node: process.version, options, figures }, null, 2)}\n`)
  }
}

main().catch((error) => {
  console.error(`bench/peers: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
