// The interactive UI in a real terminal: tmux servers of the tests' own, keys sent with send-keys,
// the screen read with capture-pane, and what alisio writes copied to a file.
import { spawnSync } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type CliSandbox, cliBin } from "./cli.js"

export const tmuxPath = (process.env.PATH ?? "")
  .split(":")
  .concat(["/usr/bin", "/usr/local/bin", "/bin"])
  .map((folder) => join(folder, "tmux"))
  .find((file) => existsSync(file))

export const shellQuote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`

/**
 * tmux servers of the test's own (their sockets), so nothing else a person runs is touched. Each
 * start gets a server of its own: a server being killed cannot take the next launch with it.
 */
export const makeTmux = (tmux: string, socket: string) => {
  let launches = 0
  let current = `${socket}-0`
  const run = (...args: ReadonlyArray<string>) => spawnSync(tmux, ["-L", current, ...args], { encoding: "utf8" })
  return {
    start: (command: string, cwd: string) => {
      current = `${socket}-${++launches}`
      const started = run("new-session", "-d", "-s", "ui", "-x", "100", "-y", "40", "-c", cwd, command)
      if (started.status !== 0) throw new Error(`tmux could not start: ${started.stderr}`)
    },
    keys: (...keys: ReadonlyArray<string>) => run("send-keys", "-t", "ui", ...keys),
    /** Copies what the program writes to the pane, escape sequences and all, to a shell command. */
    pipe: (command: string) => run("pipe-pane", "-t", "ui", "-O", command),
    text: (text: string) => run("send-keys", "-t", "ui", "-l", text),
    /** Pastes a file's text as a terminal delivers a paste (bracketed, when the program asked for it). */
    paste: (file: string) => {
      run("load-buffer", file)
      return run("paste-buffer", "-p", "-t", "ui")
    },
    /** The whole pane, its scrollback included. */
    screen: () => run("capture-pane", "-p", "-t", "ui", "-S", "-").stdout,
    /** The same, with the escape sequences of colours and attributes. */
    styled: () => run("capture-pane", "-p", "-e", "-t", "ui", "-S", "-").stdout,
    /** tmux's view of the pane's modes (`cursor_flag`: the cursor shows; `mouse_any_flag`…). */
    flag: (name: string) => run("display-message", "-p", "-t", "ui", `#{${name}}`).stdout.trim(),
    kill: () => run("kill-server")
  }
}

/** Run in the pane once alisio has ended: its exit code, and whether the terminal is back in its cooked mode. */
export const afterExit = `echo "ALISIO EXITED $?"; if stty -a | grep -q -- "-icanon"; then echo "TERMINAL RAW"; else echo "TERMINAL COOKED"; fi; sleep 60`

/** The sandbox's environment as `env -i` arguments of a pane's command line. */
export const paneEnv = (sandbox: CliSandbox, extra: Readonly<Record<string, string>> = {}) =>
  Object.entries({ ...sandbox.env, TERM: "xterm-256color", ...extra })
    .map(([key, value]) => `${key}=${shellQuote(value ?? "")}`)
    .join(" ")

/** Starts `alisio <args>` in a new pane, in the sandbox's workspace; `afterExit` runs when it ends. */
export const launch = (
  tmux: ReturnType<typeof makeTmux>,
  sandbox: CliSandbox,
  args = "",
  env: Readonly<Record<string, string>> = {}
): void =>
  tmux.start(
    `env -i ${paneEnv(sandbox, env)} ${shellQuote(process.execPath)} ${shellQuote(cliBin)}${args === "" ? "" : ` ${args}`}; ${afterExit}`,
    sandbox.workspace
  )

/**
 * Starts `alisio <args>` in a new pane with every byte it writes to the terminal copied to a file,
 * escape sequences and all; returns the file. The pane waits until the copy is set up.
 */
export const launchRecorded = (tmux: ReturnType<typeof makeTmux>, sandbox: CliSandbox, args: string): string => {
  const go = join(sandbox.workspace, "..", "go")
  const raw = join(sandbox.workspace, "..", "pane.raw")
  tmux.start(
    `until [ -e ${shellQuote(go)} ]; do sleep 0.02; done; env -i ${paneEnv(sandbox)} ${shellQuote(process.execPath)} ${shellQuote(cliBin)} ${args}; ${afterExit}`,
    sandbox.workspace
  )
  tmux.pipe(`cat > ${shellQuote(raw)}`)
  writeFileSync(go, "")
  return raw
}

export const occurrences = (text: string, part: string) => text.split(part).length - 1

/** Waits until the screen shows `text` (`times` times, counting the scrollback). */
export const waitFor = async (screen: () => string, text: string, timeoutMs = 30_000, times = 1): Promise<string> => {
  const started = Date.now()
  for (;;) {
    const shown = screen()
    if (occurrences(shown, text) >= times) return shown
    if (Date.now() - started > timeoutMs)
      throw new Error(`the screen never showed ${JSON.stringify(text)} ${times} time(s):\n${shown}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Waits until `done` holds. */
export const waitUntil = async (done: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => {
  const started = Date.now()
  while (!done()) {
    if (Date.now() - started > timeoutMs) throw new Error(`never happened: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * A person reads an approval or a question before answering it: keys typed as it opens still go to
 * the editor (`DIALOG_GRACE_MS` of TuiCommand.ts, 300 ms), so a test pauses longer than that first.
 */
export const readDialog = () => new Promise<void>((resolve) => setTimeout(resolve, 500))
