// What the side-by-side bench runs: `node -e 0`, the floor, Alisio's bundle and the peers, each
// with its own temporary HOME and configuration pointing at the fake server, nothing else.
import { closeSync, existsSync, mkdirSync, openSync, readSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"

export const PROMPT = "Run `echo hi` with the bash tool, then answer."

/** True when the file is a script for `node` (then it runs on this bench's Node, like Alisio). */
const isNodeScript = (file) => {
  const fd = openSync(file, "r")
  try {
    const head = Buffer.alloc(128)
    const n = readSync(fd, head, 0, head.length, 0)
    const text = head.subarray(0, n).toString("latin1")
    return /\.(c|m)?js$/.test(file) || (text.startsWith("#!") && text.split("\n")[0].includes("node"))
  } finally {
    closeSync(fd)
  }
}

const commandFor = (file) => (isNodeScript(file) ? [process.execPath, file] : [file])

const firstExisting = (candidates) => candidates.find((file) => file !== undefined && existsSync(file))

/** The Rust binary the npm `codex` launcher execs, so the figures are Codex's and not the launcher's. */
const codexNative = (peersDir) => {
  const triples = {
    "linux-x64": ["codex-linux-x64", "x86_64-unknown-linux-musl"],
    "linux-arm64": ["codex-linux-arm64", "aarch64-unknown-linux-musl"],
    "darwin-x64": ["codex-darwin-x64", "x86_64-apple-darwin"],
    "darwin-arm64": ["codex-darwin-arm64", "aarch64-apple-darwin"]
  }
  const entry = triples[`${process.platform}-${process.arch}`]
  if (entry === undefined) return undefined
  return join(peersDir, "node_modules", "@openai", entry[0], "vendor", entry[1], "bin", "codex")
}

/** The environment every subject starts from: no variable of the user's but PATH and locale. */
export const baseEnv = (home, proxy) => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  LANG: process.env.LANG ?? "C.UTF-8",
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_DATA_HOME: join(home, ".local", "share"),
  XDG_STATE_HOME: join(home, ".local", "state"),
  XDG_CACHE_HOME: join(home, ".cache"),
  TMPDIR: process.env.TMPDIR ?? "/tmp",
  TERM: "dumb",
  NO_COLOR: "1",
  // Anything that honours the proxy variables and aims past 127.0.0.1 is refused at once (and logged).
  HTTPS_PROXY: proxy,
  HTTP_PROXY: proxy,
  ALL_PROXY: proxy,
  https_proxy: proxy,
  http_proxy: proxy,
  all_proxy: proxy,
  NO_PROXY: "127.0.0.1,localhost",
  no_proxy: "127.0.0.1,localhost"
})

/**
 * The subjects in table order. `resolve` finds the executable (or says why it is skipped);
 * `setup(home, origin)` writes the subject's configuration under its HOME and returns the
 * environment additions and the arguments of the two-turn task.
 */
export const subjects = ({ repo, peersDir, floor }) => [
  {
    id: "node",
    label: () => "`node -e 0`",
    resolve: () => ({ command: [process.execPath] }),
    versionArgs: ["-e", "0"],
    task: false
  },
  {
    id: "floor",
    label: () => "floor",
    resolve: () => {
      const file = firstExisting([
        floor,
        process.env.FLOOR_AGENT,
        join(repo, "bench", "floor-agent.mjs"),
        join(dirname(repo), "shared", "bench", "floor-agent.mjs")
      ])
      return file === undefined
        ? { skip: "floor-agent.mjs not found: pass --floor <path> or set FLOOR_AGENT" }
        : { command: [process.execPath, file] }
    },
    setup: (_home, origin) => ({ env: { OPENAI_BASE_URL: `${origin}/v1`, MODEL: "test-model" }, args: [PROMPT] })
  },
  {
    id: "alisio",
    label: (version) => `**Alisio ${version.replace(/^alisio\s*/, "")}**`,
    resolve: () => {
      const file = firstExisting([process.env.ALISIO_BIN, join(repo, "packages", "cli", "dist", "bundle", "bin.js")])
      return file === undefined
        ? { skip: "packages/cli/dist/bundle/bin.js not built: run `pnpm build` first" }
        : { command: commandFor(file) }
    },
    versionArgs: ["--version"],
    setup: (home, origin) => ({
      env: { ALISIO_HOME: join(home, ".alisio"), OPENAI_BASE_URL: `${origin}/v1`, OPENAI_API_KEY: "bench-key" },
      args: ["run", "--yes", "-m", "openai/test-model", PROMPT]
    })
  },
  {
    id: "codex",
    label: (version) => `Codex ${version.replace(/^codex-cli\s*/, "")} (Rust)`,
    resolve: () => {
      const file = firstExisting([
        process.env.CODEX_BIN,
        peersDir && codexNative(peersDir),
        peersDir && join(peersDir, "node_modules", ".bin", "codex")
      ])
      return file === undefined
        ? { skip: "not installed: set CODEX_BIN or pass --peers-dir" }
        : { command: commandFor(file) }
    },
    versionArgs: ["--version"],
    setup: (home, origin) => {
      const codexHome = join(home, ".codex")
      mkdirSync(codexHome, { recursive: true })
      // The Responses API is the only wire protocol Codex speaks; analytics (OTel to
      // ab.chatgpt.com) and the curated-plugins sync (github.com, chatgpt.com) are the traffic
      // that is not the task, turned off as Claude Code's is.
      writeFileSync(
        join(codexHome, "config.toml"),
        [
          'model = "test-model"',
          'model_provider = "bench"',
          'approval_policy = "never"',
          'sandbox_mode = "danger-full-access"',
          "",
          "[model_providers.bench]",
          'name = "bench"',
          `base_url = "${origin}/v1"`,
          'env_key = "BENCH_API_KEY"',
          'wire_api = "responses"',
          "",
          "[analytics]",
          "enabled = false",
          "",
          "[features]",
          "plugins = false",
          ""
        ].join("\n")
      )
      return {
        env: { CODEX_HOME: codexHome, BENCH_API_KEY: "bench-key" },
        args: ["exec", "--skip-git-repo-check", "--color", "never", PROMPT]
      }
    }
  },
  {
    id: "claude",
    label: (version) => `Claude Code ${version.replace(/\s*\(Claude Code\)\s*$/, "")}`,
    resolve: () => {
      const file = firstExisting([process.env.CLAUDE_BIN, peersDir && join(peersDir, "node_modules", ".bin", "claude")])
      return file === undefined
        ? { skip: "not installed: set CLAUDE_BIN or pass --peers-dir" }
        : { command: commandFor(file) }
    },
    versionArgs: ["--version"],
    setup: (home, origin) => ({
      env: {
        CLAUDE_CONFIG_DIR: join(home, ".claude"),
        ANTHROPIC_BASE_URL: origin,
        ANTHROPIC_API_KEY: "bench-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1"
      },
      // --dangerously-skip-permissions is refused as root; allowing Bash is enough for the task.
      args: ["-p", PROMPT, "--allowedTools", "Bash"]
    })
  },
  {
    id: "pi",
    label: (version) => `pi ${version}`,
    resolve: () => {
      const file = firstExisting([process.env.PI_BIN, peersDir && join(peersDir, "node_modules", ".bin", "pi")])
      return file === undefined
        ? { skip: "not installed: set PI_BIN or pass --peers-dir" }
        : { command: commandFor(file) }
    },
    versionArgs: ["--version"],
    setup: (home, origin) => {
      const agentDir = join(home, ".pi", "agent")
      mkdirSync(agentDir, { recursive: true })
      writeFileSync(
        join(agentDir, "models.json"),
        JSON.stringify({
          providers: {
            bench: {
              baseUrl: `${origin}/v1`,
              api: "openai-completions",
              apiKey: "bench-key",
              compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
              models: [{ id: "test-model", reasoning: false }]
            }
          }
        })
      )
      return {
        env: { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" },
        args: ["-p", "--model", "bench/test-model", PROMPT]
      }
    }
  }
]
