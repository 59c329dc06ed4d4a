// V8's allocation-site pretenuring, turned off once a process connects to an MCP server. V8
// watches where object and array literals are made; when nearly everything a site made outlived a
// scavenge, it makes that site's later objects in the old generation. On the call path that
// decision is wrong and it feeds itself: a call's objects (the Effect runtime's, the SDK's) made
// old keep the young ones they point to alive until the next full collection, those survive, more
// sites are pretenured. A process of 4 000 calls promoted about 2 MB per scavenge (the SDK called
// directly: 0.2 MB) and its scavenges took 7–30 ms instead of 2–4. Without it, objects are made
// young and promoted only when they live. Figures: `pnpm bench mcp`, bench/README.md.
import { setFlagsFromString } from "node:v8"

let done = false

/** Idempotent. V8 reads the flag as it goes (at each collection, as it compiles), so setting it when the first server starts is in time. */
export const stopPretenuring = (): void => {
  if (done) return
  done = true
  // Every V8 Node 20 to 24 ships has the flag (an unknown one would print a line on stderr).
  setFlagsFromString("--no-allocation-site-pretenuring")
}
