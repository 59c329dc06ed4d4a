// V8 flags set at start through `v8.setFlagsFromString` (an npm bin cannot pass Node options). Each
// is read by V8 when it is next needed, so setting it before the program loads is in time. An
// unknown flag would print a line on stderr: each is set only where the V8 in use has it (tests run
// on Node 20 and 24; Node 22 checked by hand). Figures: bench/README.md.
//
// Every command that loads the program sets the same flags: V8 checks a hash of all its flags
// before it accepts compiled code from Node's compile cache (Node 22+), so a command with other
// flags than the last one would throw the cache away and write it again (measured on Node 24:
// `sessions list` after a `run` cost ~90 ms more than after another `sessions list`).
import { setFlagsFromString } from "node:v8"

const turbofanAfterMs = 1000

export const tuneV8 = (args: ReadonlyArray<string>): void => {
  // fetch parses HTTP with undici's llhttp, compiled to WebAssembly. V8 starts it on its baseline
  // compiler (Liftoff) and, once it is hot, compiles it again with TurboFan on a worker thread: for
  // llhttp's one huge function that costs ~30 MB of peak memory and ~250 ms of CPU, more than all
  // the parsing a session does (issue 17: a run's peak RSS 110 → 81 MB, its CPU −20 %).
  // `--liftoff-only` is enough on Node 20 (V8 11). Later V8s apply its implications only when it is
  // given on the command line, so set at run time it left dynamic tiering on and Node 24 still
  // compiled llhttp with TurboFan (a run: peak RSS −7 MB once the two flags below are set too).
  setFlagsFromString("--liftoff-only")
  setFlagsFromString("--no-wasm-dynamic-tiering")
  setFlagsFromString("--no-wasm-tier-up")
  // V8's young generation keeps its first size instead of growing to 16 MB a half (a run: 12 MB
  // less peak RSS, the same CPU). V8 reads the factor whenever it would grow the young generation
  // (`--max-semi-space-size` is read once, at start: too late here).
  setFlagsFromString("--semi-space-growth-factor=1")
  // Maglev (V8's mid-tier compiler, on from Node 22) compiles what a short command makes warm and
  // is done with it when the command ends: on Node 24 a run's peak RSS −10 MB, its CPU −4 %
  // without it. Hot code is still optimized by TurboFan.
  setFlagsFromString("--no-maglev")
  // On Node 20 (V8 11) TurboFan optimizes what a short run makes warm, and compiling costs more
  // than it saves before the run ends: with 8 times the interrupt budget, CPU −9 % at 200 deltas
  // and −14 % at 10 200 (same run). Hot code is still optimized, later. Later V8s tier up by
  // invocation counts and have no such flag; Node 20 has no compile cache to keep in step.
  if (args[0] === "run" && process.versions.v8.startsWith("11.")) setFlagsFromString("--interrupt-budget=540672")
  // TurboFan waits for the command's first second. Most commands, and a run of a short task, end
  // before it would pay off: what it compiled was optimized for a few hundred calls, and its compile
  // jobs' memory stays in the worker threads' heaps (Node 24, the two-turn task: peak RSS −7.5 MB,
  // CPU −4 %; Node 20 the same CPU). A longer command then optimizes its hot code as before: V8
  // kept counting calls meanwhile. Not a `--no-opt`: that would leave a long session unoptimized.
  setFlagsFromString("--no-turbofan")
  setTimeout(() => setFlagsFromString("--turbofan"), turbofanAfterMs).unref()
}

/**
 * Node ships its own modules compiled, and V8 takes that code only under the flags it was compiled
 * with: a built-in module first loaded after `tuneV8` is parsed and compiled from its source again.
 * A run loads 71 of them so on Node 20 and 74 on Node 24 (`NODE_DEBUG_NATIVE=CODE_CACHE`): fetch's
 * undici and all it brings, child processes for the tools. On Node 20 a run loads them before the
 * flags change (the two-turn task, 15 runs in turns: CPU −23 to −31 ms, peak RSS −1 MB). Not on
 * later Nodes: on Node 24 undici's shipped code, whole, cost 3.4 MB of peak RSS for −6 to −13 ms.
 */
export const loadRunBuiltins = (): void => {
  if (!process.versions.v8.startsWith("11.")) return
  // Node loads undici, and with it what it needs, on the first use of one of fetch's globals.
  void globalThis.Headers
  process.getBuiltinModule("node:child_process")
  process.getBuiltinModule("node:fs/promises")
}

/**
 * Puts back the flags the program may change while it runs (TurboFan, turned on after the first
 * second; `runtime/src/internal/mcp/heap.ts` turns allocation-site pretenuring off once an MCP
 * server connects), so that a code cache made at the exit (CodeCache.ts) carries the flags the next
 * start sets: V8 refuses code cached under others, and every run that lasted a second or used an
 * MCP server would write the cache again.
 */
export const restoreStartFlags = (): void => {
  setFlagsFromString("--allocation-site-pretenuring")
  setFlagsFromString("--no-turbofan")
}
