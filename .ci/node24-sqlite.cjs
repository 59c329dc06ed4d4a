// Preloaded into Node 24 (`--require`, or NODE_OPTIONS for a whole test run): better-sqlite3 loads
// the native binding .ci/node24.sh built for Node 24 instead of the workspace's, which is built for
// this machine's Node. Every other module resolves as usual.
const Module = require("node:module")
const path = require("node:path")

const binding = path.join(
  __dirname,
  "node24",
  "sqlite",
  "node_modules",
  "better-sqlite3",
  "build",
  "Release",
  "better_sqlite3.node"
)
const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  return request.endsWith(`${path.sep}better_sqlite3.node`) ? binding : resolve.call(this, request, ...rest)
}
