// Decisions a plugin reports (EV-6): events of the run that is calling it, checked against their
// Schema (keys beyond it, such as the state a decision provider was sent, are dropped), stored
// unless `decisions.telemetry` is false, in which case only the run's observers see them.

import { type PluginApiService, PluginError } from "@alisio/domain/Plugin"
import { RunEventData, type RunEventDataMap } from "@alisio/domain/RunEvent"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { CurrentRun } from "../../CurrentRun.js"

type DecisionType = "decision_completed" | "decision_fallback"

export const decisionsApi = (pluginId: string, telemetry: boolean): PluginApiService["decisions"] => {
  const report = <K extends DecisionType>(type: K, data: unknown): Effect.Effect<void, PluginError> =>
    Effect.gen(function* () {
      const failure = (message: string) => new PluginError({ pluginId, message: `${type}: ${message}` })
      const schema = RunEventData[type] as unknown as Schema.Schema<RunEventDataMap[K]>
      const checked = yield* Schema.decodeUnknown(schema)(data).pipe(
        Effect.mapError((error) => failure(ParseResult.TreeFormatter.formatErrorSync(error)))
      )
      const run = yield* Effect.serviceOption(CurrentRun)
      if (Option.isNone(run)) {
        return yield* failure("reported outside a run; report a decision from a tool while a run calls it")
      }
      const { events } = run.value
      yield* telemetry
        ? Effect.mapError(events.emit(type, checked), (error) => failure(`not stored: ${error.message}`))
        : events.emitUnstored(type, checked)
    })
  return {
    completed: (data) => report("decision_completed", data),
    fallback: (data) => report("decision_fallback", data)
  }
}
