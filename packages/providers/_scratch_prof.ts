import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { OpenAI } from "openai/client"
import { SseDecoder } from "./src/internal/Sse.js"
import { ChatAssembler } from "./src/internal/ChatStream.js"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { median } from "../../bench/measure.js"
const src = readFileSync(new URL("../../bench/provider.bench.ts", import.meta.url), "utf8")
const script = eval(src.slice(src.indexOf("const serverScript = ") + "const serverScript = ".length, src.indexOf("\n\nconst startServer")).replace("${deltas}", "1000"))
const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
const port = await new Promise<number>((r) => child.stdout.once("data", (d) => r(Number(String(d).trim()))))
const baseURL = `http://127.0.0.1:${port}/v1`
const cpu = async (fn: () => Promise<unknown>) => { const s = process.cpuUsage(); await fn(); const u = process.cpuUsage(s); return (u.user + u.system) / 1000 }
const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true })
const raw = async (decode: number) => {
  const res = await fetch(`${baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body })
  const reader = res.body!.getReader(); const d = new SseDecoder(); const a = new ChatAssembler("p", () => "x"); const ev: any[] = []; const out: any[] = []
  while (true) { const r = await reader.read(); if (r.done) break; if (decode >= 1) { d.push(r.value, ev); if (decode >= 2) for (const e of ev) a.onEvent(e, out); ev.length = 0; out.length = 0 } }
}
const client = new OpenAI({ baseURL, apiKey: "x", maxRetries: 0, logLevel: "off" })
const sdk = async () => { const res = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true }).asResponse(); const reader = res.body!.getReader(); while (!(await reader.read()).done) {} }
const model = OpenAiCompatible.make({ baseURL })
const req = { model: "m", messages: [{ role: "user" as const, content: [{ _tag: "text" as const, text: "hi" }] }], tools: [], maxOutputTokens: 100 }
const drain = () => Effect.runPromise(Stream.runDrain(model.stream(req)))
const each = () => Effect.runPromise(Stream.runForEach(model.stream(req), () => Effect.void))
const cases: Record<string, () => Promise<unknown>> = { drain }
for (const f of Object.values(cases)) for (let i = 0; i < 5; i++) await f()
const res: Record<string, number[]> = {}
for (let i = 0; i < 200; i++) for (const [k, f] of Object.entries(cases)) (res[k] ??= []).push(await cpu(f))
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(10), median(v).toFixed(2))
child.kill()
