import type { ApprovalPolicy } from "@alisio/domain/ChildSession"
import type { Tool, ToolEffect } from "@alisio/domain/Tool"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type { ToolOrigin } from "./ToolOrigins.js"

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

/** A registered tool and where it comes from. */
export interface ToolEntry {
  readonly tool: Tool
  readonly origin: ToolOrigin
}

const core: ToolOrigin = { _tag: "Core" }

/** The registry of tools a run may offer the model; names are unique, a later registration replaces. */
export class Tools extends Context.Tag("@alisio/runtime/Tools")<
  Tools,
  {
    /** Registers a core tool, replacing one of the same name. */
    readonly register: (tool: Tool) => Effect.Effect<void>
    readonly unregister: (name: string) => Effect.Effect<void>
    readonly all: Effect.Effect<ReadonlyArray<Tool>>
    /** Registers `tool` only if its name is free; `false` when it is taken (see `ToolOrigins.register`). */
    readonly add: (tool: Tool, origin: ToolOrigin) => Effect.Effect<boolean>
    /** Removes `tool` if it still holds its name (a later replacement stays). */
    readonly remove: (tool: Tool) => Effect.Effect<void>
    /** Every tool with its origin, for listings (`plugins list`, `/tools`). */
    readonly entries: Effect.Effect<ReadonlyArray<ToolEntry>>
  }
>() {}

export const make = (initial: ReadonlyArray<Tool> = []) =>
  Effect.gen(function* () {
    const tools = yield* Ref.make<ReadonlyMap<string, ToolEntry>>(
      new Map(initial.map((tool) => [tool.name, { tool, origin: core }]))
    )
    const without = (map: ReadonlyMap<string, ToolEntry>, name: string) => {
      const next = new Map(map)
      next.delete(name)
      return next
    }
    return Tools.of({
      register: (tool) => Ref.update(tools, (map) => new Map(map).set(tool.name, { tool, origin: core })),
      unregister: (name) => Ref.update(tools, (map) => without(map, name)),
      all: Effect.map(Ref.get(tools), (map) => [...map.values()].map((entry) => entry.tool)),
      add: (tool, origin) =>
        Ref.modify(tools, (map) =>
          map.has(tool.name) ? [false, map] : [true, new Map(map).set(tool.name, { tool, origin })]
        ),
      remove: (tool) => Ref.update(tools, (map) => (map.get(tool.name)?.tool === tool ? without(map, tool.name) : map)),
      entries: Effect.map(Ref.get(tools), (map) => [...map.values()])
    })
  })

export const layer = (initial: ReadonlyArray<Tool> = []): Layer.Layer<Tools> => Layer.effect(Tools, make(initial))
