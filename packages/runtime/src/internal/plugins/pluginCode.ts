// Whether the code running now is an external plugin's (PL-6), for what it prints and process.exit.
// A frame of a plugin's file on the stack says so at once; code without one still is the plugin's
// when it runs in a fiber the host started for the plugin (its setup, tools, commands, context,
// observers, and every fiber these fork: a `Console.log` of the host's Effect), or in a callback
// the plugin scheduled (a timer, an immediate, a promise) from its import or from such a fiber.
// Callbacks are followed with async_hooks, installed only once an external plugin is loaded. Only
// what the plugin's own code schedules (a frame of its files on the stack) is followed: a render
// or a buffered write the host schedules while serving the plugin's fiber stays the host's.

import { AsyncLocalStorage, createHook, executionAsyncId } from "node:async_hooks"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"

/** Set in the fibers that run an external plugin's code; forked fibers inherit it. */
const externalCode = FiberRef.unsafeMake(false)

/** Code run for an import of external plugins: what it schedules stays theirs. */
const importing = new AsyncLocalStorage<true>()

/** The async resources (timers, immediates, promises) created while a plugin's code ran. */
const owned = new Set<number>()

/** Runs a plugin's effect as the plugin's code (builtin plugins are Alisio's own). */
export const asPluginCode = <A, E, R>(builtin: boolean, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  builtin ? effect : Effect.locally(effect, externalCode, true)

/** Runs the host's effect a plugin called through its API as the host's code: only the plugin's own code is redirected. */
export const asHostCode = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, externalCode, false)

/** Runs the import of external plugins as their code. */
export const importingPluginCode = <A>(load: () => Promise<A>): Promise<A> => importing.run(true, load)

/** Whether the code running now is an external plugin's, by its fiber or by what scheduled it. */
export const runningPluginCode = (): boolean => {
  const fiber = Fiber.getCurrentFiber()
  // A fiber decides for itself: the scheduler's callback that runs it may have been queued by a plugin's fiber.
  if (fiber._tag === "Some") return fiber.value.getFiberRef(externalCode)
  return importing.getStore() === true || owned.has(executionAsyncId())
}

let following = false

/** Follows what plugin code schedules, from now on (once per process); `fromPlugin` reads the stack. */
export const followPluginCallbacks = (fromPlugin: () => boolean): void => {
  if (following) return
  following = true
  createHook({
    init: (asyncId) => {
      try {
        if (runningPluginCode() && fromPlugin()) owned.add(asyncId)
      } catch {
        // A throw inside an async hook ends the process; not following one callback is the lesser harm.
      }
    },
    destroy: (asyncId) => {
      owned.delete(asyncId)
    },
    promiseResolve: () => {}
  }).enable()
}
