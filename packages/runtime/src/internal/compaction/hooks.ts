// The compaction hooks of plugins (`api.compaction.before` / `after`), each bounded in time; a
// failing, dying or slow hook is reported to its owner and never fails a compaction.

import type { AfterCompactInput, BeforeCompactInput } from "@alisio/domain/Plugin"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { causeMessage } from "../plugins/definition.js"

/** A hook as registered: its owner (a plugin id), what it does, and where its failures go. */
export interface CompactionHook {
  readonly owner: string
  readonly before?: ((input: BeforeCompactInput) => Effect.Effect<string | undefined, unknown>) | undefined
  readonly after?: ((input: AfterCompactInput) => Effect.Effect<void, unknown>) | undefined
  /** Told when the hook failed, died, returned no Effect or ran out of time. */
  readonly onFailure: (message: string) => Effect.Effect<void>
}

export interface CompactionHooksService {
  /** Adds a hook for the life of the scope. */
  readonly add: (hook: CompactionHook) => Effect.Effect<void, never, Scope.Scope>
  /** Runs every `before` hook at once; the instructions they returned, in registration order. */
  readonly before: (input: BeforeCompactInput) => Effect.Effect<ReadonlyArray<string>>
  /** Runs every `after` hook at once and waits for them (each within the bound). */
  readonly after: (input: AfterCompactInput) => Effect.Effect<void>
}

/** How long one hook may take. */
export const HOOK_TIMEOUT_MS = 5_000
/** The most text one `before` hook may add to the summary's instructions. */
export const HOOK_TEXT_LIMIT = 4_000

/** Runs one hook guarded: a value, or `undefined` after reporting why not. */
const guarded = <A>(
  hook: CompactionHook,
  stage: "before" | "after",
  run: () => unknown
): Effect.Effect<A | undefined> =>
  Effect.suspend(() => {
    const effect = run()
    return Effect.isEffect(effect)
      ? (effect as Effect.Effect<A, unknown>)
      : Effect.dieMessage(`its ${stage} hook returned ${typeof effect}, not an Effect`)
  }).pipe(
    Effect.timeoutFail({
      duration: Duration.millis(HOOK_TIMEOUT_MS),
      onTimeout: () => new Error(`its compaction ${stage} hook took longer than ${HOOK_TIMEOUT_MS} ms and was stopped`)
    }),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Effect.as(hook.onFailure(`its compaction ${stage} hook failed: ${causeMessage(cause)}`), undefined)
    )
  )

export const makeHooks: Effect.Effect<CompactionHooksService> = Effect.gen(function* () {
  const hooks = yield* Ref.make<ReadonlyArray<CompactionHook>>([])

  const add = (hook: CompactionHook) =>
    Effect.acquireRelease(
      Ref.update(hooks, (all) => [...all, hook]),
      () => Ref.update(hooks, (all) => all.filter((item) => item !== hook))
    )

  const before = (input: BeforeCompactInput) =>
    Effect.flatMap(Ref.get(hooks), (all) =>
      Effect.forEach(
        all.filter((hook) => hook.before !== undefined),
        (hook) =>
          Effect.map(
            guarded<unknown>(hook, "before", () => hook.before!(input)),
            (text) =>
              typeof text === "string" && text.trim() !== "" ? text.trim().slice(0, HOOK_TEXT_LIMIT) : undefined
          ),
        { concurrency: "unbounded" }
      )
    ).pipe(Effect.map((texts) => texts.filter((text): text is string => text !== undefined)))

  const after = (input: AfterCompactInput) =>
    Effect.flatMap(Ref.get(hooks), (all) =>
      Effect.forEach(
        all.filter((hook) => hook.after !== undefined),
        (hook) => guarded<void>(hook, "after", () => hook.after!(input)),
        { concurrency: "unbounded", discard: true }
      )
    )

  return { add, before, after }
})
