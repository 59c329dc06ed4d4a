import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
const src = readFileSync(new URL("../../bench/provider.bench.ts", import.meta.url), "utf8")
const script = eval(src.slice(src.indexOf("const serverScript = ") + "const serverScript = ".length, src.indexOf("\n\nconst startServer")).replace("${deltas}", "1000"))
const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
const port = await new Promise<number>((r) => child.stdout.once("data", (d) => r(Number(String(d).trim()))))
for (let k = 0; k < 5; k++) {
const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, { method: "POST", body: "{}" })
const reader = res.body!.getReader(); let n = 0, bytes = 0
while (true) { const r = await reader.read(); if (r.done) break; n++; bytes += r.value.length }
console.log("reads", n, "bytes", bytes)
}
child.kill()
