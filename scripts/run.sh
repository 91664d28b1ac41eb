#!/usr/bin/env bash
# scripts/run.sh -- the main job on a fresh machine: build switchboard, then
# use it on the embedded default configuration (Switchboard's own demo
# server): list the tools, call two of them, list the servers.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/switchboard ./cmd/switchboard
# An empty home, so the embedded default applies whatever ~/.switchboard holds.
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
sb() { echo "\$ switchboard $*" >&2; bin/switchboard --home "$home" "$@"; }
sb servers
sb tools
sb call demo__echo text="hello from switchboard"
sb call demo__add a=2 b=40
