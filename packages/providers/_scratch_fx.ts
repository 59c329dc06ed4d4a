import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import * as Option from "effect/Option"
import { SseDecoder } from "./src/internal/Sse.js"
import { ChatAssembler } from "./src/internal/ChatStream.js"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { median } from "../../bench/measure.js"
import * as OpenAiCompatible from "./src/OpenAiCompatible.js"
const src = readFileSync(new URL("../../bench/provider.bench.ts", import.meta.url), "utf8")
const script = eval(src.slice(src.indexOf("const serverScript = ") + "const serverScript = ".length, src.indexOf("\n\nconst startServer")).replace("${deltas}", "1000"))
const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
const port = await new Promise<number>((r) => child.stdout.once("data", (d) => r(Number(String(d).trim()))))
const url = `http://127.0.0.1:${port}/v1/chat/completions`
const cpu = async (fn: () => Promise<unknown>) => { const s = process.cpuUsage(); await fn(); const u = process.cpuUsage(s); return (u.user + u.system) / 1000 }
const raw = async () => {
  const res = await fetch(url, { method: "POST", body: "{}" })
  const reader = res.body!.getReader(); const d = new SseDecoder(); const a = new ChatAssembler("p", () => "x"); const ev: any[] = []; const out: any[] = []
  while (true) { const r = await reader.read(); if (r.done) break; d.push(r.value, ev); for (const e of ev) a.onEvent(e, out); ev.length = 0; out.length = 0 }
}
const fx = (mode: number) => () => Effect.runPromise(Stream.runDrain(Stream.unwrap(Effect.promise(async () => {
  const res = await fetch(url, { method: "POST", body: "{}" })
  const reader = res.body!.getReader(); const d = new SseDecoder(); const a = new ChatAssembler("p", () => "x"); const ev: any[] = []
  let done = false
  const pull = Effect.suspend(() => done ? Effect.fail(Option.none()) : Effect.flatMap(Effect.promise(() => reader.read()), (r) => {
    const out: any[] = []
    if (r.done) { done = true; return Effect.fail(Option.none()) }
    d.push(r.value, ev); for (const e of ev) a.onEvent(e, out); ev.length = 0
    return Effect.succeed(mode === 1 ? Chunk.of(out.length) : Chunk.unsafeFromArray(out))
  }))
  return Stream.repeatEffectChunkOption(pull)
}))))
const loop = (mode: number) => () => Effect.runPromise(Effect.promise(async () => {
  const res = await fetch(url, { method: "POST", body: "{}" }); return res.body!.getReader() }).pipe(Effect.flatMap((reader) => {
  const d = new SseDecoder(); const a = new ChatAssembler("p", () => "x"); const ev: any[] = []
  const step: Effect.Effect<void> = Effect.flatMap(Effect.promise(() => reader.read()), (r) => { if (r.done) return Effect.void; const out: any[] = []; d.push(r.value, ev); for (const e of ev) a.onEvent(e, out); ev.length = 0; return step })
  return step
})))
const model = OpenAiCompatible.make({ baseURL: `http://127.0.0.1:${port}/v1` })
const req = { model: "m", messages: [{ role: "user" as const, content: [{ _tag: "text" as const, text: "hi" }] }], tools: [], maxOutputTokens: 100 }
const drain = () => Effect.runPromise(Stream.runDrain(model.stream(req)))
const cases: Record<string, () => Promise<unknown>> = process.env.ONLY ? { [process.env.ONLY]: ({ raw, fx: fx(0), loop: loop(0), drain } as any)[process.env.ONLY] } : { raw, fx: fx(0), loop: loop(0), drain }
for (const f of Object.values(cases)) for (let i = 0; i < 5; i++) await f()
const res: Record<string, number[]> = {}
for (let i = 0; i < Number(process.env.N ?? 60); i++) for (const [k, f] of Object.entries(cases)) (res[k] ??= []).push(await cpu(f))
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(10), median(v).toFixed(2))
child.kill()
