// What a child session may do (CH-1): what it asks for, narrowed to what its parent has.
import type { ApprovalPolicy, SpawnOptions } from "@alisio/domain/ChildSession"
import type { Limits, ResolvedLimits } from "@alisio/domain/Limits"
import type { ToolEffect } from "@alisio/domain/Tool"
import { type Approvals, narrowPolicy } from "../Tools.js"

const effects: ReadonlyArray<ToolEffect> = ["read", "write", "external", "internal"]

/** Narrows what a child asks for to what its parent has; returns the grant and what was narrowed away. */
export const narrowPermissions = (
  parent: {
    readonly toolNames: ReadonlySet<string>
    readonly capabilities: ReadonlySet<string>
    readonly approvals: Approvals
    readonly readOnly: boolean
  },
  asked: SpawnOptions
) => {
  const narrowed: Array<string> = []
  const excluded = new Set(asked.excludeTools ?? [])
  const tools = (
    asked.tools === undefined ? [...parent.toolNames] : asked.tools.filter((name) => parent.toolNames.has(name))
  ).filter((name) => !excluded.has(name))
  for (const name of asked.tools ?? []) if (!parent.toolNames.has(name)) narrowed.push(`tool:${name}`)
  const capabilities =
    asked.capabilities === undefined
      ? [...parent.capabilities]
      : asked.capabilities.filter((c) => parent.capabilities.has(c))
  for (const c of asked.capabilities ?? []) if (!parent.capabilities.has(c)) narrowed.push(`capability:${c}`)
  const askedFor = (effect: ToolEffect): ApprovalPolicy | undefined =>
    typeof asked.approvals === "string" ? asked.approvals : asked.approvals?.[effect]
  const approvals = Object.fromEntries(
    effects.map((effect) => {
      const mine = parent.approvals[effect]
      const wanted = askedFor(effect)
      if (wanted === undefined) return [effect, mine]
      const granted = narrowPolicy(mine, wanted)
      if (granted !== wanted) narrowed.push(`approvals.${effect}:${wanted}`)
      return [effect, granted]
    })
  ) as unknown as Approvals
  if (parent.readOnly && asked.readOnly === false) narrowed.push("readOnly:false")
  return { tools, capabilities, approvals, readOnly: parent.readOnly || asked.readOnly === true, narrowed }
}

/**
 * A child's limits: what it asks for over its parent's, but never more turns than the parent has.
 * Its active time needs no cap: the parent's clock runs while it waits for the child, and a
 * parent that times out stops the child (CH-2).
 */
export const narrowLimits = (parent: ResolvedLimits, asked: Limits | undefined): Limits => ({
  ...parent,
  ...asked,
  maxTurns: Math.min(parent.maxTurns, asked?.maxTurns ?? parent.maxTurns)
})
