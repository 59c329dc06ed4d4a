// Start-up: `alisio --version` and `--help` from the built CLI, next to `node -e 0`.
import { fileURLToPath } from "node:url"
import { measureNode, row } from "./measure.js"

const bin = fileURLToPath(new URL("../packages/cli/dist/bundle/bin.js", import.meta.url))

export const run = async (): Promise<void> => {
  const floor = await measureNode(7, ["-e", "0"])
  row("node -e 0 (floor), wall", floor.wallMs, "ms")
  const version = await measureNode(7, [bin, "--version"])
  row("alisio --version, wall", version.wallMs, "ms", floor.wallMs)
  row("alisio --version, peak RSS", version.maxRssMb, "MB", floor.maxRssMb)
  const help = await measureNode(5, [bin, "--help"])
  row("alisio --help, wall", help.wallMs, "ms", floor.wallMs)
}
