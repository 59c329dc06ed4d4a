import type { Tool } from "@alisio/domain/Tool"
import * as Layer from "effect/Layer"
import * as ChildSessions from "./ChildSessions.js"
import * as Compaction from "./Compaction.js"
import * as HumanWaits from "./HumanWaits.js"
import type * as Interaction from "./Interaction.js"
import * as RunEvents from "./RunEvents.js"
import * as Runner from "./Runner.js"
import * as SessionNotices from "./SessionNotices.js"
import * as Tools from "./Tools.js"

/**
 * The runtime composed once: Runner, Compaction and ChildSessions over RunEvents, HumanWaits,
 * SessionNotices, the compaction hooks, the Tools registry and the given Interaction. It needs a `SessionStore`, and a
 * `LanguageModel` for runs that name no provider of their own (the CLI's `main`, tests with the
 * FakeProvider); `/compact` finds a session's model among the `Providers` when they are there.
 */
export const layer = (options: {
  readonly tools: ReadonlyArray<Tool>
  readonly interaction: Layer.Layer<Interaction.Interaction>
  readonly childSessions?: Partial<ChildSessions.ChildSessionLimits>
}) =>
  ChildSessions.layer(options.childSessions).pipe(
    Layer.provideMerge(Layer.merge(Runner.layer, Compaction.layer)),
    Layer.provideMerge(
      Layer.mergeAll(
        RunEvents.layer,
        HumanWaits.layer,
        SessionNotices.layer,
        Tools.layer(options.tools),
        options.interaction,
        Compaction.layerHooks
      )
    )
  )
