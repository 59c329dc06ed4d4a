import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import * as OpenAiCompatible from "./src/OpenAiCompatible.js"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
const src = readFileSync(new URL("../../bench/provider.bench.ts", import.meta.url), "utf8")
const script = eval(src.slice(src.indexOf("const serverScript = ") + "const serverScript = ".length, src.indexOf("\n\nconst startServer")).replace("${deltas}", "1000"))
const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
const port = await new Promise<number>((r) => child.stdout.once("data", (d) => r(Number(String(d).trim()))))
const baseURL = `http://127.0.0.1:${port}/v1`
const req = { model: "m", messages: [{ role: "user" as const, content: [{ _tag: "text" as const, text: "hi" }] }], tools: [], maxOutputTokens: 100 }
const model = OpenAiCompatible.make({ baseURL })
let n = 0
const adapter = () => Effect.runPromise(Stream.runForEachChunk(model.stream(req), (c) => Effect.sync(() => void (n += Chunk.size(c)))))
for (let i = 0; i < 50; i++) await adapter()
const { Session } = await import("node:inspector/promises")
const session = new Session(); session.connect()
await session.post("Profiler.enable"); await session.post("Profiler.setSamplingInterval", { interval: 50 }); await session.post("Profiler.start")
const s = process.cpuUsage()
for (let i = 0; i < 300; i++) await adapter()
const u = process.cpuUsage(s)
const { profile } = await session.post("Profiler.stop")
console.log("cpu per stream", ((u.user + u.system) / 1000 / 300).toFixed(2))
const fs = await import("node:fs"); fs.writeFileSync("/tmp/scratch/adapter.cpuprofile", JSON.stringify(profile))
child.kill()
