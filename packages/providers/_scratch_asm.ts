import { SseDecoder } from "./src/internal/Sse.js"
import { ChatAssembler } from "./src/internal/ChatStream.js"
import { readFileSync } from "node:fs"
const src = readFileSync(new URL("../../bench/provider.bench.ts", import.meta.url), "utf8")
const script = eval(src.slice(src.indexOf("const serverScript = ") + "const serverScript = ".length, src.indexOf("\n\nconst startServer")).replace("${deltas}", "1000"))
const events: string[] = new Function("require", "console", script.replace("const server = http", "return events; const server = http"))(() => ({}), console)
const body = Buffer.from(events.join(""))
const pieces: Buffer[] = []; for (let i = 0; i < body.length; i += 8192) pieces.push(body.subarray(i, i + 8192))
const time = (name: string, f: () => void) => { for (let i = 0; i < 200; i++) f(); const s = process.cpuUsage(); const N = 1000; for (let i = 0; i < N; i++) f(); const u = process.cpuUsage(s); console.log(name.padEnd(12), ((u.user + u.system) / 1000 / N).toFixed(3), "ms") }
time("decode", () => { const d = new SseDecoder(); const ev: any[] = []; for (const p of pieces) { d.push(p, ev); ev.length = 0 } })
time("decode+parse", () => { const d = new SseDecoder(); const ev: any[] = []; for (const p of pieces) { d.push(p, ev); for (const e of ev) if (e.data[0] === "{") JSON.parse(e.data); ev.length = 0 } })
time("full", () => { const d = new SseDecoder(); const a = new ChatAssembler("p", () => "x"); const ev: any[] = []; const out: any[] = []; for (const p of pieces) { d.push(p, ev); for (const e of ev) a.onEvent(e, out); ev.length = 0; out.length = 0 } })
time("textdecode", () => { const t = new TextDecoder(); for (const p of pieces) t.decode(p, { stream: true }) })
