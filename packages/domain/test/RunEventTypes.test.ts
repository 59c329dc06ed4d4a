import type { KnownRunEvent, RunEventDataMap, RunEventOf, RunEventType } from "@alisio/domain/RunEvent"
import { describe, expectTypeOf, it } from "@effect/vitest"

describe("RunEvent types", () => {
  it("EV-5 RunEventDataMap and KnownRunEvent agree", () => {
    type FromMap = { [K in RunEventType]: RunEventOf<K> }[RunEventType]
    expectTypeOf<KnownRunEvent>().toEqualTypeOf<FromMap>()
    expectTypeOf<KnownRunEvent["type"]>().toEqualTypeOf<keyof RunEventDataMap>()
    expectTypeOf<Extract<KnownRunEvent, { type: "turn_completed" }>["data"]>().toEqualTypeOf<
      RunEventDataMap["turn_completed"]
    >()
  })
})
