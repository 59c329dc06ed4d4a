// Compaction (CTX-1): building a turn's request from a 10 000-message session that has a
// compaction (the history step and the token estimate the runner runs before every request; goal
// < 20 ms), the same without one, and planning a compaction's cut and transcript over the whole
// session; next to a floor that only slices the kept messages, in the same run.

import type { ModelRequest } from "@alisio/domain/LanguageModel"
import type { ToolSpec } from "@alisio/domain/Tool"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import { estimateTokens, messageChars } from "../packages/runtime/src/internal/compaction/estimate.js"
import { estimateRequest, makeContextState } from "../packages/runtime/src/internal/compaction/inRun.js"
import {
  budgetOf,
  type CompactionSnapshot,
  type HistoryEntry,
  indexAfter,
  planCut
} from "../packages/runtime/src/internal/compaction/plan.js"
import { transcriptChunks } from "../packages/runtime/src/internal/compaction/summary.js"
import { toRequestMessages } from "../packages/runtime/src/internal/history.js"
import { median, row } from "./measure.js"

const MESSAGES = 10_000

/** A session as a coding agent writes it: prompts, tool calls with their results, answers. */
const session = (): ReadonlyArray<HistoryEntry> => {
  const out: Array<HistoryEntry> = []
  let turn = 0
  while (out.length < MESSAGES) {
    const position = () => out.length + 1
    out.push({
      position: position(),
      message: { role: "user", content: [{ _tag: "text", text: `task ${turn}: fix the parser` }] }
    })
    for (let call = 0; call < 4 && out.length < MESSAGES - 1; call++) {
      const id = `call-${turn}-${call}` as never
      out.push({
        position: position(),
        message: {
          role: "assistant",
          content: [
            { _tag: "reasoning", text: "Looking at the file first." },
            { _tag: "tool_call", id, name: "read", arguments: JSON.stringify({ path: `src/file${call}.ts` }) }
          ]
        }
      })
      out.push({
        position: position(),
        message: {
          role: "tool",
          toolCallId: id,
          toolName: "read",
          content: [{ _tag: "text", text: `export const value${call} = ${"x".repeat(600)}` }],
          isError: false
        }
      })
    }
    if (out.length < MESSAGES) {
      out.push({
        position: position(),
        message: { role: "assistant", content: [{ _tag: "text", text: `Done with ${turn}.` }] }
      })
    }
    turn += 1
  }
  return out
}

const tools: ReadonlyArray<ToolSpec> = ["read", "write", "edit", "bash", "grep", "glob", "ls"].map((name) => ({
  name,
  description: `The ${name} tool. `.repeat(20),
  parameters: { type: "object", properties: { path: { type: "string" } } }
}))

const limits = {
  maxTurns: 100,
  firstTokenTimeoutMs: 1,
  firstTokenRetries: 0,
  streamIdleTimeoutMs: 1,
  truncationRecoveries: 0,
  toolConcurrency: 1,
  maxContextTokens: 128_000
}

const time = (runs: number, work: () => unknown): number => {
  const samples: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    work()
    samples.push(performance.now() - start)
  }
  return median(samples)
}

export const run = async (): Promise<void> => {
  const history = session()
  const context = makeContextState({ limits, compaction: undefined, hooks: undefined })
  const budget = budgetOf(context.window, 16_384)
  const tokensOf = (entry: HistoryEntry) => estimateTokens(messageChars(entry.message), context.calibration)
  // The compaction a long session has: everything but the recent turns within the kept share.
  const cut = planCut(history, 0, budget.keep, tokensOf)!
  const compaction: CompactionSnapshot = {
    summary: "The person asked to fix the parser, file by file. ".repeat(80),
    firstPosition: 1,
    lastPosition: history[cut - 1]!.position,
    messagesCompacted: cut
  }
  const build = (entries: ReadonlyArray<HistoryEntry>, snapshot: CompactionSnapshot | undefined): ModelRequest => ({
    model: "m",
    system: "You are Alisio.",
    messages: toRequestMessages(entries, snapshot),
    tools,
    maxOutputTokens: 16_384
  })
  const turnRequest = (entries: ReadonlyArray<HistoryEntry>, snapshot: CompactionSnapshot | undefined) => {
    const request = build(entries, snapshot)
    return estimateRequest(context, request)
  }
  const fresh = () => session()
  console.log(`${MESSAGES} messages, ${history.length - cut} kept after the compaction (${cut} compacted)`)

  // Warm up every path.
  for (let i = 0; i < 20; i++) {
    turnRequest(history, compaction)
    turnRequest(history, undefined)
  }
  const floor = time(200, () => history.slice(indexAfter(history, compaction.lastPosition)).map((e) => e.message))
  row("floor: slice the kept messages", floor, "ms")
  row(
    "turn request, compacted session (warm)",
    time(200, () => turnRequest(history, compaction)),
    "ms",
    floor
  )
  const colds = Array.from({ length: 20 }, fresh)
  let next = 0
  row(
    "turn request, compacted session (first of a run)",
    time(20, () => turnRequest(colds[next++]!, compaction)),
    "ms",
    floor
  )
  row(
    "turn request, uncompacted session (warm)",
    time(50, () => turnRequest(history, undefined)),
    "ms",
    floor
  )
  const planning = Array.from({ length: 10 }, fresh)
  next = 0
  row(
    "plan a compaction: cut + transcript of 10 000",
    time(10, () => {
      const entries = planning[next++]!
      const at = planCut(entries, 0, budget.keep, tokensOf)!
      transcriptChunks(
        entries.slice(0, at),
        (budget.window.tokens - budget.summaryTokens) * 3.6,
        budget.summaryTokens * 4
      )
    }),
    "ms",
    floor
  )
  // What a run does once before its first request: read the session and its latest compaction.
  const loadMs = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* SessionStore.make({ filename: ":memory:" })
        const created = yield* store.createSession({ cwd: "/bench" })
        for (let i = 0; i < history.length; i += 500) {
          yield* store.appendMessages(
            created.id,
            history.slice(i, i + 500).map((e) => e.message)
          )
        }
        yield* store.compactions!.add({
          sessionId: created.id,
          firstPosition: 1,
          lastPosition: compaction.lastPosition,
          summary: compaction.summary,
          tokensBefore: 1,
          tokensAfter: 1,
          messagesCompacted: cut
        })
        const samples: Array<number> = []
        for (let i = 0; i < 5; i++) {
          const start = performance.now()
          const latest = yield* store.compactions!.latest(created.id)
          const snapshot = latest._tag === "Some" ? latest.value : undefined
          const stored = yield* store.messages(created.id, { afterPosition: snapshot?.lastPosition })
          turnRequest(
            stored.map(({ message, position }) => ({ position, message })),
            snapshot
          )
          samples.push(performance.now() - start)
        }
        return median(samples)
      })
    )
  )
  row("run start: read after the summary + build", loadMs, "ms", floor)
  console.log("goal: a turn request from a 10 000-message compacted session < 20 ms")
}
