// A package registry on 127.0.0.1 speaking as much of npm's protocol as `npm install` uses: a
// package document at `/<name>`, its tarball at `/<name>/-/<file>.tgz`. Tarballs are made with
// `npm pack` from folders written the way an author publishes them (no node_modules).
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface PublishedPackage {
  /** package.json as published; `name` and `version` are required. */
  readonly manifest: { readonly name: string; readonly version: string } & Record<string, unknown>
  readonly files: Readonly<Record<string, string>>
}

export interface NpmRegistry {
  /** For `npm_config_registry`. */
  readonly url: string
  /** The paths npm asked for, in order. */
  readonly requests: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const startNpmRegistry = async (packages: ReadonlyArray<PublishedPackage>): Promise<NpmRegistry> => {
  const root = mkdtempSync(join(tmpdir(), "alisio-registry-"))
  const tarballs = new Map<string, Buffer>()
  const documents = new Map<string, (url: string) => unknown>()
  for (const { manifest, files } of packages) {
    const dir = join(root, manifest.name.replace("/", "+"))
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2))
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text)
    const packed = execFileSync("npm", ["pack", "--silent", "--pack-destination", root], { cwd: dir, encoding: "utf8" })
    const bytes = readFileSync(join(root, packed.trim().split("\n").at(-1)!))
    const file = `${manifest.name.split("/").at(-1)}-${manifest.version}.tgz`
    tarballs.set(`/${manifest.name}/-/${file}`, bytes)
    documents.set(manifest.name, (url) => ({
      name: manifest.name,
      "dist-tags": { latest: manifest.version },
      versions: {
        [manifest.version]: {
          ...manifest,
          dist: {
            tarball: `${url}${manifest.name}/-/${file}`,
            shasum: createHash("sha1").update(bytes).digest("hex"),
            integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`
          }
        }
      }
    }))
  }
  const requests: Array<string> = []
  const server = createServer((req, res) => {
    const path = decodeURIComponent(req.url ?? "/")
    requests.push(path)
    const tarball = tarballs.get(path)
    const document = documents.get(path.slice(1))
    if (tarball !== undefined) {
      res.writeHead(200, { "content-type": "application/octet-stream" })
      res.end(tarball)
    } else if (document !== undefined) {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(document(url)))
    } else {
      res.writeHead(404, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: "Not found" }))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  return {
    url,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          rmSync(root, { recursive: true, force: true })
          resolve()
        })
      })
  }
}

/** The environment that makes npm use the registry alone, fail fast, and keep quiet. */
export const npmEnvironment = (registry: NpmRegistry): NodeJS.ProcessEnv => ({
  npm_config_registry: registry.url,
  npm_config_fetch_retries: "0",
  npm_config_update_notifier: "false",
  npm_config_loglevel: "error"
})
