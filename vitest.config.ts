import { defineConfig } from "vitest/config"

// Workspace packages resolve to their TypeScript sources through the `alisio-source` condition.
// The rest are Vite's default server conditions.
const conditions = ["alisio-source", "module", "node", "development|production"]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ["alisio-source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "packages/plugins/*/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The JSON report is what .ci/run counts for its closing line.
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-results.json" }
  }
})
