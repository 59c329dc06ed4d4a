import type { RunId, SessionId } from "@alisio/domain/Ids"
import type { LanguageModelService, ModelInfo } from "@alisio/domain/LanguageModel"
import type { ResolvedLimits } from "@alisio/domain/Limits"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as FiberMap from "effect/FiberMap"
import type * as Option from "effect/Option"
import type { RunEmitter } from "./RunEvents.js"
import type { Approvals } from "./Tools.js"

/**
 * The run a tool call belongs to, provided by the Runner while it executes tools. Child sessions
 * read it to link, narrow and fork a child into this run's scope, so the Runner knows nothing of
 * children (DESIGN "No cycle between Runner and ChildSessions").
 */
export class CurrentRun extends Context.Tag("@alisio/runtime/CurrentRun")<
  CurrentRun,
  {
    readonly runId: RunId
    readonly sessionId: SessionId
    /** The root session of the tree this run belongs to. */
    readonly rootSessionId: SessionId
    /** 0 for a root session, 1 for its children, … */
    readonly depth: number
    readonly cwd: string
    readonly model: string
    readonly provider: LanguageModelService
    readonly modelInfo?: ModelInfo
    readonly readOnly: boolean
    /** The tools this run may use (after narrowing). */
    readonly toolNames: ReadonlySet<string>
    readonly capabilities: ReadonlySet<string>
    readonly approvals: Approvals
    readonly limits: ResolvedLimits
    readonly events: RunEmitter
    /** Child runs forked in this run's scope: interrupted when the run ends (CH-2). */
    readonly children: FiberMap.FiberMap<string, unknown, unknown>
    /** A child's path of labels ("general › explore"), shown with its approvals. */
    readonly label?: string
    /**
     * Runs `register` (a child's spawn) while the run is not ending, `None` once it began to end:
     * the run's ending waits for a registration under way, so every child it starts is in
     * `children` when they are interrupted, before the terminal event.
     */
    readonly whileRunning: <A, E>(register: Effect.Effect<A, E>) => Effect.Effect<Option.Option<A>, E>
  }
>() {}
