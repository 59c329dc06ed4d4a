import { measureInterleaved } from "/work/wt-perf/bench/measure.js"

const d = "/work/wt-perf/packages/providers"
const r = await measureInterleaved(11, [
  { args: ["-e", "0"] },
  { args: ["--input-type=module", "-e", `await import("${d}/node_modules/openai/index.mjs")`] },
  {
    args: [
      "--input-type=module",
      "-e",
      `await import("/work/wt-perf/packages/runtime/node_modules/yaml/dist/index.js")`
    ]
  }
])
for (const [i, n] of ["node", "openai", "yaml"].entries())
  console.log(n, r[i]!.cpuMs.toFixed(1), r[i]!.maxRssMb.toFixed(1))
