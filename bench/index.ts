// `pnpm bench`: runs every bench/*.bench.ts in turn (or those named on the command line).
import { readdirSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"

const dir = fileURLToPath(new URL(".", import.meta.url))
const wanted = process.argv.slice(2)
const files = readdirSync(dir)
  .filter((name) => name.endsWith(".bench.ts"))
  .filter((name) => wanted.length === 0 || wanted.some((w) => name.includes(w)))
  .sort()

for (const file of files) {
  console.log(`\n## ${file.replace(".bench.ts", "")}`)
  const module = (await import(pathToFileURL(dir + file).href)) as { run: () => Promise<void> }
  await module.run()
}
