import { SessionId } from "@alisio/domain/Ids"
import { sleepActive, timeoutActive } from "@alisio/runtime/ActiveClock"
import * as HumanWaits from "@alisio/runtime/HumanWaits"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"

const root = SessionId.make("root")
const child = SessionId.make("child")
const grandchild = SessionId.make("grandchild")

describe("HumanWaits and the active clock", () => {
  it.effect("LIM-1 a wait counts in its session and is released when it ends, even on interruption", () =>
    Effect.gen(function* () {
      const waits = yield* HumanWaits.HumanWaits
      const open = yield* waits.openBelow(root)
      const gate = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(waits.around(root, "tool_approval", Deferred.await(gate)))
      yield* Effect.yieldNow()
      assert.strictEqual(yield* SubscriptionRef.get(open), 1)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* SubscriptionRef.get(open), 0)
    }).pipe(Effect.provide(HumanWaits.layer))
  )

  it.effect("LIM-2 a grandchild's open wait counts for the child and the root, not for siblings", () =>
    Effect.gen(function* () {
      const waits = yield* HumanWaits.HumanWaits
      yield* waits.link(child, root)
      yield* waits.link(grandchild, child)
      const sibling = SessionId.make("sibling")
      yield* waits.link(sibling, root)
      const gate = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(waits.around(grandchild, "question", Deferred.await(gate)))
      yield* Effect.yieldNow()
      const counts = yield* Effect.forEach([root, child, grandchild, sibling], (s) =>
        Effect.flatMap(waits.openBelow(s), SubscriptionRef.get)
      )
      assert.deepStrictEqual(counts, [1, 1, 1, 0])
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(fiber)
      assert.strictEqual(yield* Effect.flatMap(waits.openBelow(root), SubscriptionRef.get), 0)
    }).pipe(Effect.provide(HumanWaits.layer))
  )

  it.effect("LIM-1 sleepActive does not count time while a wait is open", () =>
    Effect.gen(function* () {
      const waits = yield* HumanWaits.HumanWaits
      const open = yield* waits.openBelow(root)
      const sleeper = yield* Effect.fork(sleepActive(open, 10_000))
      yield* TestClock.adjust(4_000)
      const gate = yield* Deferred.make<void>()
      const wait = yield* Effect.fork(waits.around(root, "tool_approval", Deferred.await(gate)))
      yield* TestClock.adjust(100_000)
      assert.isTrue(Option.isNone(yield* Fiber.poll(sleeper)), "paused while the person is awaited")
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(wait)
      yield* TestClock.adjust(5_999)
      assert.isTrue(Option.isNone(yield* Fiber.poll(sleeper)))
      yield* TestClock.adjust(1)
      yield* Fiber.join(sleeper)
    }).pipe(Effect.provide(HumanWaits.layer))
  )

  it.effect("LIM-2 a grandchild's open approval pauses the root's and the child's budgets", () =>
    Effect.gen(function* () {
      const waits = yield* HumanWaits.HumanWaits
      yield* waits.link(child, root)
      yield* waits.link(grandchild, child)
      const budget = (session: SessionId) =>
        Effect.flatMap(waits.openBelow(session), (open) => Effect.fork(timeoutActive(open, 10_000, Effect.never)))
      const rootRun = yield* budget(root)
      const childRun = yield* budget(child)
      yield* Effect.fork(waits.around(grandchild, "tool_approval", Effect.sleep(60_000)))
      yield* TestClock.adjust(60_000)
      assert.isTrue(Option.isNone(yield* Fiber.poll(rootRun)))
      assert.isTrue(Option.isNone(yield* Fiber.poll(childRun)))
      yield* TestClock.adjust(10_000)
      assert.isTrue(
        Option.isNone(yield* Fiber.join(rootRun)),
        "the root times out once the wait is over and 10 s passed"
      )
      assert.isTrue(Option.isNone(yield* Fiber.join(childRun)))
    }).pipe(Effect.provide(HumanWaits.layer))
  )

  it.effect("LIM-2 a parent awaiting its child keeps counting and times out", () =>
    Effect.gen(function* () {
      const waits = yield* HumanWaits.HumanWaits
      yield* waits.link(child, root)
      const childWork = yield* Deferred.make<string>()
      const rootOpen = yield* waits.openBelow(root)
      const parent = yield* Effect.fork(timeoutActive(rootOpen, 10_000, Deferred.await(childWork)))
      yield* TestClock.adjust(10_000)
      assert.isTrue(Option.isNone(yield* Fiber.join(parent)))
    }).pipe(Effect.provide(HumanWaits.layer))
  )

  it.effect(
    "EV-1 timeoutActive returns only after the effect's finalizers ran: interrupted from outside or timed out",
    () =>
      Effect.gen(function* () {
        const open = yield* SubscriptionRef.make(0)
        const order: Array<string> = []
        const gate = yield* Deferred.make<void>()
        const work = Effect.never.pipe(
          Effect.onInterrupt(() =>
            Effect.zipRight(
              Deferred.await(gate),
              Effect.sync(() => order.push("work cleaned up"))
            )
          )
        )
        const run = (ms: number) =>
          Effect.fork(Effect.onExit(timeoutActive(open, ms, work), () => Effect.sync(() => order.push("ended"))))

        const outside = yield* run(60_000)
        yield* Effect.yieldNow()
        const interrupting = yield* Effect.fork(Fiber.interrupt(outside))
        yield* Effect.yieldNow()
        yield* Deferred.succeed(gate, undefined)
        assert.isTrue(Exit.isInterrupted(yield* Fiber.join(interrupting)))
        assert.deepStrictEqual(order, ["work cleaned up", "ended"])

        order.length = 0
        const timed = yield* run(10_000)
        yield* TestClock.adjust(10_000)
        assert.isTrue(Option.isNone(yield* Fiber.join(timed)))
        assert.deepStrictEqual(order, ["work cleaned up", "ended"])
      })
  )

  it.scoped("LIM-1 a tracked session's entry lives while a run tracks it, and is released when the last one ends", () =>
    Effect.gen(function* () {
      const waits = yield* HumanWaits.HumanWaits
      const rootRun = yield* Scope.make()
      const childRun = yield* Scope.make()
      const open = yield* Scope.extend(waits.track(root), rootRun)
      yield* Scope.extend(waits.track(child, root), childRun)
      assert.strictEqual(yield* waits.size, 2)
      const wait = yield* Effect.fork(waits.around(child, "tool_approval", Effect.never))
      yield* Effect.yieldNow()
      assert.strictEqual(yield* SubscriptionRef.get(open), 1, "the child's wait counts for the tracked root")
      yield* Fiber.interrupt(wait)
      yield* Scope.close(childRun, Exit.void)
      assert.strictEqual(yield* waits.size, 1)
      const again = yield* Scope.make()
      yield* Scope.extend(waits.track(root), again)
      yield* Scope.close(rootRun, Exit.void)
      assert.strictEqual(yield* waits.size, 1, "still tracked by a second run")
      yield* Scope.close(again, Exit.void)
      assert.strictEqual(yield* waits.size, 0)
    }).pipe(Effect.provide(HumanWaits.layer))
  )
})
