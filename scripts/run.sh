#!/usr/bin/env bash
# scripts/run.sh -- the main job on a fresh machine: build switchboard and run
# the gateway on the embedded default configuration (Switchboard's own demo
# server), serving Streamable HTTP on 127.0.0.1:8939 until Ctrl-C. It prints
# the endpoint, the token and ready-to-paste commands for MCP clients.
#
# The gateway's home (its token, its state) is .cache/demo-home, or
# $SWITCHBOARD_DEMO_HOME: kept, so the next run serves with the same token
# and the pasted client configurations keep working. Remove it to start
# afresh. Whatever ~/.switchboard holds does not apply.
#
# Extra arguments go to `switchboard serve` (e.g. --stdio, --http ADDR).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/switchboard ./cmd/switchboard
home="${SWITCHBOARD_DEMO_HOME:-$PWD/.cache/demo-home}"
mkdir -p "$home"
chmod 700 "$home"
exec bin/switchboard serve --home "$home" "$@"
