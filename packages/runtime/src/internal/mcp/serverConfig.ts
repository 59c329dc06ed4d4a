// How a configured MCP server's settings read: its timeouts and what it runs.
import { parseDuration } from "@alisio/domain/Durations"
import type { DurationSetting, McpServer, McpTimeout } from "../../ConfigSchema.js"

const millis = (value: DurationSetting): number => (typeof value === "number" ? value : (parseDuration(value) ?? 0))

/** The start-up and call timeouts of a server: one `timeout` for both, or each apart. */
export const timeoutsOf = (
  timeout: McpTimeout | undefined,
  defaults: { readonly startupMs: number; readonly callMs: number }
): { readonly startupMs: number; readonly callMs: number } => {
  if (timeout === undefined) return defaults
  if (typeof timeout === "object") {
    return {
      startupMs: timeout.startup === undefined ? defaults.startupMs : millis(timeout.startup),
      callMs: timeout.call === undefined ? defaults.callMs : millis(timeout.call)
    }
  }
  return { startupMs: millis(timeout), callMs: millis(timeout) }
}

/** The command line or URL as configured (references unexpanded, so no secret shows). */
export const targetOf = (config: McpServer): string =>
  config.type === "stdio" ? [config.command, ...(config.args ?? [])].join(" ") : config.url
