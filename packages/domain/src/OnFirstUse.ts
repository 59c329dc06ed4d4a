// Things made when first needed rather than at load or setup (issue 17). A plugin's working parts: a
// run that never calls the plugin's tools or commands never imports, builds or forks them (the
// builtin plugins use it). Parsers and Schemas: a module that makes them at load makes every
// process that imports it pay for them, used or not.
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as Scope from "effect/Scope"
import type { Tool, ToolSpec } from "./Tool.js"

/**
 * `make`, run once when the returned effect is first run, every caller awaiting the same outcome.
 * It runs in a fiber of `scope` (the plugin's), interruptible as a setup is, so what it forks or
 * acquires belongs to the plugin and stops when the plugin's scope closes; a caller interrupted
 * while waiting leaves it going. It runs with the services of the `onFirstUse` call (the setup's),
 * not those of its first caller, and callers get only its outcome: joining the fiber would also
 * hand every later caller the first caller's services (its run's `CurrentRun`, say).
 */
export const onFirstUse = <A, E>(
  make: Effect.Effect<A, E, Scope.Scope>,
  scope: Scope.Scope
): Effect.Effect<Effect.Effect<A, E>> =>
  Effect.flatMap(Effect.context<never>(), (services) =>
    Effect.map(Effect.makeSemaphore(1), (lock) => {
      let fiber: Fiber.RuntimeFiber<A, E> | undefined
      const made = Effect.provide(Effect.interruptible(Scope.extend(make, scope)), services)
      const start = lock.withPermits(1)(
        Effect.suspend(() =>
          fiber !== undefined
            ? Effect.succeed(fiber)
            : Effect.tap(Effect.forkIn(made, scope), (forked) => {
                fiber = forked
              })
        )
      )
      const outcome = (forked: Fiber.RuntimeFiber<A, E>) => Effect.flatten(Fiber.await(forked))
      return Effect.suspend(() => (fiber !== undefined ? outcome(fiber) : Effect.flatMap(start, outcome)))
    })
  )

/**
 * Tools offered at once from their specs, whose handlers come with `parts` (an `onFirstUse`): the
 * first call makes the parts, and every call goes to the part's tool of the same name.
 */
export const deferredTools = <E>(
  specs: ReadonlyArray<ToolSpec>,
  parts: Effect.Effect<{ readonly tools: ReadonlyMap<string, Tool<never, unknown>> }, E>
): ReadonlyArray<Tool<never, unknown>> =>
  specs.map((spec) => ({
    ...spec,
    effect: "internal",
    execute: (args, context) =>
      Effect.flatMap(parts, (ready) => {
        const tool = ready.tools.get(spec.name)
        return tool === undefined ? Effect.dieMessage(`no handler for ${spec.name}`) : tool.execute(args, context)
      })
  }))

/**
 * A function made by `make` on its first call, not before: a parser Schema compiles when it is
 * made, and a module that makes one at load makes every process that imports it pay for it.
 */
// biome-ignore lint/suspicious/noExplicitAny: any function
export const onFirstCall = <F extends (...args: Array<any>) => unknown>(make: () => F): F => {
  let made: F | undefined
  return ((...args: Parameters<F>) => {
    made ??= make()
    return made(...args)
  }) as F
}

/**
 * An object whose properties are made on first read, each once: the same keys, enumerable, in the
 * same order as `make`'s.
 */
export const onFirstRead = <M extends Record<string, () => unknown>>(
  make: M
): { readonly [K in keyof M]: ReturnType<M[K]> } => {
  const made = {} as { [K in keyof M]: ReturnType<M[K]> }
  for (const key of Object.keys(make) as Array<keyof M>) {
    let value: ReturnType<M[typeof key]> | undefined
    Object.defineProperty(made, key, {
      enumerable: true,
      get: () => (value ??= make[key]!() as ReturnType<M[typeof key]>)
    })
  }
  return made
}

/**
 * The Schema `make` makes, made when its AST is first read (to decode, encode, check, derive a JSON
 * Schema or combine it): the same AST, so the same behaviour, as the Schema made at once. Only the
 * `Schema` interface is served: a constructor's extras (`fields`, `members`, `make`) are not.
 */
export const schemaOnFirstRead = <S extends Schema.Schema.Any>(make: () => S): S => {
  let built: S | undefined
  const made = (): S => {
    if (built === undefined) built = make()
    return built
  }
  const schema = Schema.make(AST.neverKeyword) as unknown as S
  Object.defineProperty(schema, "ast", { get: () => made().ast })
  Object.defineProperty(schema, "toString", { value: () => String(made().ast) })
  return schema
}
