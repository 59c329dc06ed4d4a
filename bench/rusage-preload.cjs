// Preloaded into a measured Node process: on exit, append its own CPU time and peak RSS as JSON
// to the file named by BENCH_RUSAGE_FILE.
const file = process.env.BENCH_RUSAGE_FILE
if (file) {
  process.on("exit", () => {
    const usage = process.resourceUsage()
    require("node:fs").appendFileSync(
      file,
      `${JSON.stringify({ cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, maxRssMb: usage.maxRSS / 1024 })}\n`
    )
  })
}
