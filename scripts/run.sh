#!/usr/bin/env bash
# scripts/run.sh -- the main job on a fresh machine: build switchboard and run
# the gateway on the embedded default configuration (Switchboard's own demo
# server), serving Streamable HTTP on 127.0.0.1:8939 until Ctrl-C. It prints
# the endpoint, the token and ready-to-paste commands for MCP clients.
#
# Extra arguments go to `switchboard serve` (e.g. --stdio, --http ADDR).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/switchboard ./cmd/switchboard
# An empty home, so the embedded default applies whatever ~/.switchboard holds.
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
bin/switchboard serve --home "$home" "$@"
