// /stats: what a session has cost so far, from the store (turns, tokens, time).

import { formatDuration } from "@alisio/domain/Durations"
import type { StoreError } from "@alisio/domain/Errors"
import { addUsage, emptyUsage } from "@alisio/domain/Usage"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { SessionStore } from "../../../SessionStore.js"
import type { CoreCommand } from "../entry.js"
import { age, describeSession, formatCount, requireSession, storeFailure, text } from "./shared.js"

export const stats: CoreCommand = {
  name: "stats",
  description: "Turns, tokens and time of the session, from what is stored",
  run: (invocation) =>
    Effect.gen(function* () {
      const session = yield* requireSession(invocation)
      const store = yield* SessionStore
      const left: Array<string> = []
      const stored = <A>(effect: Effect.Effect<A, StoreError>) => Effect.mapError(effect, storeFailure(invocation.name))
      const [runs, events, messages, calls] = yield* Effect.all([
        store.runs === undefined ? Effect.succeed([]) : stored(store.runs(session.id)),
        stored(store.events(session.id, undefined, { onUnreadable: (row) => Effect.sync(() => left.push(row.id)) })),
        stored(store.messages(session.id)),
        stored(store.toolCalls(session.id))
      ])
      const now = yield* Clock.currentTimeMillis
      const turns = events.filter((event) => event.type === "turn_completed").length
      const usage = runs.reduce((sum, run) => addUsage(sum, run.usage ?? emptyUsage), emptyUsage)
      const runTime = runs.reduce(
        (sum, run) => sum + (run.startedAt === undefined ? 0 : Math.max(0, (run.endedAt ?? now) - run.startedAt)),
        0
      )
      const byStatus = new Map<string, number>()
      for (const run of runs) byStatus.set(run.status, (byStatus.get(run.status) ?? 0) + 1)
      const statuses = [...byStatus].map(([status, n]) => `${n} ${status.replace("_", " ")}`).join(", ")
      const extra = [
        usage.cachedInputTokens === undefined ? undefined : `${formatCount(usage.cachedInputTokens)} cached`,
        usage.reasoningTokens === undefined ? undefined : `${formatCount(usage.reasoningTokens)} reasoning`
      ].filter((part) => part !== undefined)
      const last = runs.at(-1)
      const lines = [
        `Session ${describeSession(session)}`,
        `  runs:       ${runs.length}${statuses === "" ? "" : ` (${statuses})`}`,
        `  turns:      ${turns}`,
        `  tokens:     ${formatCount(usage.inputTokens)} in, ${formatCount(usage.outputTokens)} out${extra.length === 0 ? "" : ` (${extra.join(", ")})`}`,
        `  tool calls: ${calls.length}`,
        `  messages:   ${messages.length}`,
        `  time:       ${formatDuration(runTime)} in runs; started ${age(now, session.createdAt)}, last active ${age(now, session.updatedAt)}`,
        ...(last === undefined ? [] : [`  model:      ${last.provider}/${last.model} (last run)`]),
        ...(left.length === 0
          ? []
          : [
              `  (${left.length === 1 ? "event" : "events"} ${left.join(", ")} could not be read, so left out of the count)`
            ])
      ]
      return text(lines.join("\n"))
    })
}
