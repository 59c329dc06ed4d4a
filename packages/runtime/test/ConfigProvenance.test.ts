import type * as Config from "@alisio/runtime/Config"
import { explain } from "@alisio/runtime/ConfigProvenance"
import { assert, describe, it } from "@effect/vitest"
import * as Redacted from "effect/Redacted"

const layer = (kind: Config.SourceKind, config: Config.ConfigFile, detail?: string): Config.ConfigLayer => ({
  kind,
  ...(detail === undefined ? {} : { detail }),
  config
})

describe("ConfigProvenance", () => {
  it("CFG-1 each setting is credited to the strongest layer that sets it, in the file's key order, secrets redacted", () => {
    const settings = explain([
      layer("default", { limits: { maxTurns: 100, firstTokenRetries: 1 }, approvals: { write: "ask" } }),
      layer("global", { limits: { maxTurns: 40 }, providers: { openai: { apiKey: Redacted.make("sk-file") } } }, "/g"),
      layer("project", { approvals: { write: "approve" } }, "/p"),
      layer("environment", { providers: { openai: { baseURL: "http://127.0.0.1:1/v1" } } }, "OPENAI_BASE_URL"),
      layer("flag", { limits: { firstTokenRetries: 3 } }, "--first-token-retries")
    ])
    assert.deepStrictEqual(settings, [
      { path: "providers.openai.apiKey", value: "<redacted>", source: "global", detail: "/g" },
      {
        path: "providers.openai.baseURL",
        value: "http://127.0.0.1:1/v1",
        source: "environment",
        detail: "OPENAI_BASE_URL"
      },
      { path: "limits.maxTurns", value: 40, source: "global", detail: "/g" },
      { path: "limits.firstTokenRetries", value: 3, source: "flag", detail: "--first-token-retries" },
      { path: "approvals.write", value: "approve", source: "project", detail: "/p" }
    ])
    assert.notInclude(JSON.stringify(settings), "sk-file")
  })

  it("CFG-1 plugins add up, each credited to the layer that named it first; an MCP server is replaced whole", () => {
    const settings = explain([
      layer("global", {
        plugins: ["a", "b"],
        mcpServers: { files: { type: "stdio", command: "one", args: ["x"] } }
      }),
      layer("project", {
        plugins: ["b", { source: "c", enabled: true }],
        mcpServers: { files: { type: "stdio", command: "two" }, web: { type: "http", url: "http://127.0.0.1:2" } }
      })
    ])
    assert.deepStrictEqual(settings, [
      { path: "plugins[0]", value: "a", source: "global" },
      { path: "plugins[1]", value: "b", source: "global" },
      { path: "plugins[2]", value: { source: "c", enabled: true }, source: "project" },
      { path: "mcpServers.files", value: { type: "stdio", command: "two" }, source: "project" },
      { path: "mcpServers.web", value: { type: "http", url: "http://127.0.0.1:2" }, source: "project" }
    ])
  })
})
