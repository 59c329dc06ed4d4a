// Running one subject process and reading what its whole process tree cost: CPU (user + system)
// and peak RSS from wait4's rusage, taken by a tiny wrapper (Python's os.wait4, microseconds;
// else GNU time, 10 ms steps). The wrapper's own start-up is outside the figures.
import { execFileSync, spawn } from "node:child_process"
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const pythonWrapper = `import json, os, sys, time
start = time.monotonic()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], dict(os.environ))
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - start
with open(sys.argv[1], "w") as f:
    json.dump({"wallMs": wall * 1000, "cpuMs": (ru.ru_utime + ru.ru_stime) * 1000, "rssMb": ru.ru_maxrss / 1024}, f)
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
`

/** Chooses the rusage wrapper; throws with the remedy when neither is there. */
export const makeRusage = (dir) => {
  // BENCH_RUSAGE=time forces GNU time.
  try {
    if (process.env.BENCH_RUSAGE === "time") throw new Error("GNU time asked for")
    const python = execFileSync("python3", ["-c", "import os, sys; os.wait4; os.posix_spawn; print(sys.executable)"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"]
    }).trim()
    if (python !== "" && existsSync(python)) {
      const script = join(dir, "rusage.py")
      writeFileSync(script, pythonWrapper)
      return {
        name: "python3 os.wait4",
        argv: (out, command) => [python, script, out, ...command],
        read: (out) => JSON.parse(readFileSync(out, "utf8"))
      }
    }
  } catch {
    // no usable python3: try GNU time
  }
  const time = process.env.TIME_BIN ?? "/usr/bin/time"
  if (existsSync(time)) {
    return {
      name: `${time} -f (GNU time)`,
      argv: (out, command) => [time, "-f", "%e %U %S %M", "-o", out, "--", ...command],
      read: (out) => {
        const line = readFileSync(out, "utf8").trim().split("\n").pop() ?? ""
        const [wall, user, sys, rss] = line.split(" ").map(Number)
        return { wallMs: wall * 1000, cpuMs: (user + sys) * 1000, rssMb: rss / 1024 }
      }
    }
  }
  throw new Error("neither python3 (3.8+) nor GNU time found: install one (apt-get install time) or set TIME_BIN")
}

/** Spawns `argv`, collects its output, kills its process group after `timeoutMs`. */
export const runProcess = (argv, { env, cwd, timeoutMs }) =>
  new Promise((resolve) => {
    const start = performance.now()
    const child = spawn(argv[0], argv.slice(1), { env, cwd, stdio: ["ignore", "pipe", "pipe"], detached: true })
    let stdout = ""
    let stderr = ""
    let timedOut = false
    child.stdout.on("data", (data) => {
      stdout += data
    })
    child.stderr.on("data", (data) => {
      stderr += data
    })
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-child.pid, "SIGKILL")
      } catch {
        // already gone
      }
    }, timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      resolve({ code: -1, wallMs: performance.now() - start, stdout, stderr: String(error), timedOut })
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, wallMs: performance.now() - start, stdout, stderr, timedOut })
    })
  })

let serial = 0

/** Runs `command` under the rusage wrapper: the process figures plus its output. */
export const measureTree = async (rusage, dir, command, options) => {
  const out = join(dir, `rusage-${serial++}.txt`)
  const result = await runProcess(rusage.argv(out, command), options)
  let figures
  try {
    figures = rusage.read(out)
  } catch {
    figures = undefined
  }
  rmSync(out, { force: true })
  return { ...result, figures }
}

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
