#!/usr/bin/env bash
# peers-install.sh [DIR] -- install the pinned npm MCP servers that the tests
# use as real peers into DIR (default .cache/peers under the repository).
# Idempotent: with everything in place it only checks versions (~0.1 s).
# Only the npm registry is used. Prints the directory on stdout.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${1:-$root/.cache/peers}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"

# Pins. server-everything negotiates at most 2025-11-25 (TS SDK 1.x).
PEERS=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
)

log() { printf 'peers-install: %s\n' "$*" >&2; }

installed_version() { # DIR PKG
  local f="$1/node_modules/$2/package.json"
  [ -f "$f" ] || return 0
  node -p "require('$f').version" 2>/dev/null || true
}

command -v node >/dev/null || { log "node is not installed: the npm peers need Node.js >= 20"; exit 1; }
command -v npm >/dev/null || { log "npm is not installed"; exit 1; }

need=0
for spec in "${PEERS[@]}"; do
  name="${spec%@*}"; ver="${spec##*@}"
  [ "$(installed_version "$DIR" "$name")" = "$ver" ] || need=1
done

if [ "$need" = 1 ]; then
  {
    printf '{\n  "name": "switchboard-test-peers",\n  "private": true,\n  "version": "0.0.0",\n  "dependencies": {\n'
    first=1
    for spec in "${PEERS[@]}"; do
      name="${spec%@*}"; ver="${spec##*@}"
      [ "$first" = 1 ] || printf ',\n'
      first=0
      printf '    "%s": "%s"' "$name" "$ver"
    done
    printf '\n  }\n}\n'
  } > "$DIR/package.json"
  log "npm install into $DIR"
  (cd "$DIR" && npm install --no-audit --no-fund --loglevel=error >&2)
  for spec in "${PEERS[@]}"; do
    name="${spec%@*}"; ver="${spec##*@}"
    got="$(installed_version "$DIR" "$name")"
    [ "$got" = "$ver" ] || { log "FAILED: $name is at '$got', want $ver"; exit 1; }
  done
fi
log "ok: $DIR"
echo "$DIR"
