import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import { OpenAI } from "openai/client"
import { PartReader } from "./src/internal/PartReader.js"
import { ChatAssembler } from "./src/internal/ChatStream.js"
import { normalizingFetch } from "./src/internal/ErrorMapping.js"
import { chatBody } from "./src/internal/Requests.js"
import * as OpenAiCompatible from "./src/OpenAiCompatible.js"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { median } from "../../bench/measure.js"
const src = readFileSync(new URL("../../bench/provider.bench.ts", import.meta.url), "utf8")
const script = eval(src.slice(src.indexOf("const serverScript = ") + "const serverScript = ".length, src.indexOf("\n\nconst startServer")).replace("${deltas}", "1000"))
const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
const port = await new Promise<number>((r) => child.stdout.once("data", (d) => r(Number(String(d).trim()))))
const baseURL = `http://127.0.0.1:${port}/v1`
const cpu = async (fn: () => Promise<unknown>) => { const s = process.cpuUsage(); await fn(); const u = process.cpuUsage(s); return (u.user + u.system) / 1000 }
const req = { model: "m", messages: [{ role: "user" as const, content: [{ _tag: "text" as const, text: "hi" }] }], tools: [], maxOutputTokens: 100 }
const floor = async () => { const r = await fetch(`${baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }); const reader = r.body!.getReader(); while (!(await reader.read()).done) {} }
const client = new OpenAI({ baseURL, apiKey: "x", maxRetries: 0, logLevel: "off", fetch: normalizingFetch((i, n) => globalThis.fetch(i, n)) })
const sdk = async (parse: boolean) => {
  const res = await client.chat.completions.create(chatBody(req, { outputTokensParam: "max_completion_tokens", sendEffort: false }), { signal: new AbortController().signal }).asResponse()
  if (!parse) { const reader = res.body!.getReader(); while (!(await reader.read()).done) {} ; return }
  const pr = new PartReader(res.body!.getReader(), new ChatAssembler("p", () => "x"))
  while ((await pr.next())._tag === "Parts") {}
}
const model = OpenAiCompatible.make({ baseURL })
let n = 0
const adapter = () => Effect.runPromise(Stream.runForEachChunk(model.stream(req), (c) => Effect.sync(() => void (n += Chunk.size(c)))))
const cases: Record<string, () => Promise<unknown>> = { floor, sdk: () => sdk(false), sdkParse: () => sdk(true), adapter }
for (const f of Object.values(cases)) for (let i = 0; i < 10; i++) await f()
const res: Record<string, number[]> = {}
for (let i = 0; i < 80; i++) for (const [k, f] of Object.entries(cases)) (res[k] ??= []).push(await cpu(f))
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(10), median(v).toFixed(2))

let nexts = 0, reads = 0
const orig = PartReader.prototype.next
PartReader.prototype.next = function () { nexts++; return orig.call(this) }
const runs = 20
for (let i = 0; i < runs; i++) await adapter()
console.log("nexts per stream", nexts / runs)
nexts = 0
for (let i = 0; i < runs; i++) await sdk(true)
console.log("nexts per sdkParse", nexts / runs)
child.kill()
