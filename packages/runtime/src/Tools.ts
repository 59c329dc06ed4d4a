import type { ApprovalPolicy } from "@alisio/domain/ChildSession"
import type { Tool, ToolEffect } from "@alisio/domain/Tool"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"

/** Approval policy per tool effect (TL-2). */
export type Approvals = { readonly [K in ToolEffect]: ApprovalPolicy }

/** Reading and the host's own tools run freely; changing the workspace or the world asks first. */
export const defaultApprovals: Approvals = { read: "approve", internal: "approve", write: "ask", external: "ask" }

/** Approving everything that asks: what `--yes` means. */
export const approveAll: Approvals = { read: "approve", internal: "approve", write: "approve", external: "approve" }

/** Read-only mode keeps only what cannot change the workspace or the world (TL-2). */
export const allowedInReadOnly = (effect: ToolEffect): boolean => effect === "read" || effect === "internal"

/** The most permissive policy both sides allow. */
export const narrowPolicy = (a: ApprovalPolicy, b: ApprovalPolicy): ApprovalPolicy => {
  const rank: Record<ApprovalPolicy, number> = { deny: 0, ask: 1, approve: 2 }
  return rank[a] <= rank[b] ? a : b
}

/** The registry of tools a run may offer the model; names are unique, a later registration replaces. */
export class Tools extends Context.Tag("@alisio/runtime/Tools")<
  Tools,
  {
    readonly register: (tool: Tool) => Effect.Effect<void>
    readonly unregister: (name: string) => Effect.Effect<void>
    readonly all: Effect.Effect<ReadonlyArray<Tool>>
  }
>() {}

export const make = (initial: ReadonlyArray<Tool> = []) =>
  Effect.gen(function* () {
    const tools = yield* Ref.make<ReadonlyMap<string, Tool>>(new Map(initial.map((tool) => [tool.name, tool])))
    return Tools.of({
      register: (tool) => Ref.update(tools, (map) => new Map(map).set(tool.name, tool)),
      unregister: (name) =>
        Ref.update(tools, (map) => {
          const next = new Map(map)
          next.delete(name)
          return next
        }),
      all: Effect.map(Ref.get(tools), (map) => [...map.values()])
    })
  })

export const layer = (initial: ReadonlyArray<Tool> = []): Layer.Layer<Tools> => Layer.effect(Tools, make(initial))
