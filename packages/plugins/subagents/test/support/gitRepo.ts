// Real git repositories for the worktree tests.
import { execFileSync, spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

export const gitIn = (cwd: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } })

/** A repository at `dir` with one commit holding `notes.txt` ("original"). */
export const initRepo = (dir: string): string => {
  gitIn(dir, "init", "-q", "-b", "main")
  gitIn(dir, "config", "user.email", "person@example.com")
  gitIn(dir, "config", "user.name", "A Person")
  writeFileSync(path.join(dir, "notes.txt"), "original\n")
  gitIn(dir, "add", "-A")
  gitIn(dir, "commit", "-q", "-m", "first")
  return gitIn(dir, "rev-parse", "HEAD").trim()
}

export const branches = (dir: string): ReadonlyArray<string> =>
  gitIn(dir, "branch", "--format=%(refname:short)")
    .split("\n")
    .filter((line) => line !== "")
    .sort()

/** Runs a fixture script of this package under Node from the sources; its first JSON line, or its stderr. */
export const startFixture = (name: string, args: ReadonlyArray<string>) => {
  const script = fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))
  const root = fileURLToPath(new URL("../../../../../", import.meta.url))
  const child = spawn(process.execPath, ["--conditions=alisio-source", "--import", "tsx", script, ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const firstLine = new Promise<unknown>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", (line) => resolve(JSON.parse(line)))
    child.once("close", (code) => reject(new Error(`${name} exited with ${code}:\n${stderr}`)))
  })
  const kill9 = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once("close", () => resolve())
      child.kill("SIGKILL")
    })
  return { firstLine, kill9 }
}
