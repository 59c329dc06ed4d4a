// Spawns the built CLI as a user would, in a temp ALISIO_HOME and workspace.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const cliBin = fileURLToPath(new URL("../../packages/cli/dist/bundle/bin.js", import.meta.url))

export interface CliResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface CliSandbox {
  readonly home: string
  readonly workspace: string
  readonly env: NodeJS.ProcessEnv
  /** `nodeArgs` go to Node before the CLI's file (a V8 trace, say). */
  readonly run: (
    args: ReadonlyArray<string>,
    options?: RunOptions & { readonly input?: string | Uint8Array }
  ) => Promise<CliResult>
  readonly start: (args: ReadonlyArray<string>, options?: RunOptions) => RunningCli
  readonly cleanup: () => void
}

export interface RunOptions {
  readonly env?: NodeJS.ProcessEnv
  readonly nodeArgs?: ReadonlyArray<string>
  /** `start` ends stdin at once, as a shell's `< /dev/null` would, unless asked to leave it open. */
  readonly stdinOpen?: boolean
}

export interface RunningCli {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves when stdout or stderr contains `text`. */
  readonly waitFor: (text: string, timeoutMs?: number) => Promise<void>
  readonly done: Promise<CliResult>
}

export const makeSandbox = (baseURL: string): CliSandbox => {
  const root = mkdtempSync(join(tmpdir(), "alisio-e2e-"))
  const home = join(root, "home")
  const workspace = join(root, "workspace")
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: root,
    ALISIO_HOME: home,
    OPENAI_BASE_URL: baseURL,
    OPENAI_API_KEY: "test-key",
    NO_COLOR: "1",
    // CI on Node 24 preloads the better-sqlite3 built for it (.ci/node24-sqlite.cjs).
    ...(process.env.NODE_OPTIONS === undefined ? {} : { NODE_OPTIONS: process.env.NODE_OPTIONS })
  }
  const start = (args: ReadonlyArray<string>, options: RunOptions = {}): RunningCli => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), cliBin, ...args], {
      cwd: workspace,
      env: { ...env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    if (options.stdinOpen !== true) child.stdin!.end()
    let stdout = ""
    let stderr = ""
    const waiters: Array<{ text: string; resolve: () => void }> = []
    const check = () => {
      for (const waiter of [...waiters]) {
        if (stdout.includes(waiter.text) || stderr.includes(waiter.text)) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve()
        }
      }
    }
    child.stdout!.on("data", (data: Buffer) => {
      stdout += data.toString("utf8")
      check()
    })
    child.stderr!.on("data", (data: Buffer) => {
      stderr += data.toString("utf8")
      check()
    })
    const done = new Promise<CliResult>((resolve) =>
      child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
    )
    return {
      child,
      stdout: () => stdout,
      stderr: () => stderr,
      waitFor: (text, timeoutMs = 20_000) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () =>
              reject(new Error(`timed out waiting for ${JSON.stringify(text)}\nstdout: ${stdout}\nstderr: ${stderr}`)),
            timeoutMs
          )
          waiters.push({
            text,
            resolve: () => {
              clearTimeout(timer)
              resolve()
            }
          })
          check()
        }),
      done
    }
  }
  const run = (args: ReadonlyArray<string>, options: RunOptions & { readonly input?: string | Uint8Array } = {}) => {
    const running = start(args, { ...options, stdinOpen: true })
    running.child.stdin!.end(options.input ?? "")
    return running.done
  }
  mkdirSync(workspace, { recursive: true })
  return { home, workspace, env, run, start, cleanup: () => rmSync(root, { recursive: true, force: true }) }
}
