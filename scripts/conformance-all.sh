#!/usr/bin/env bash
# scripts/conformance-all.sh -- the official MCP conformance suite, server
# side, against Switchboard's conformance fixture served directly, and
# against the gateway (switchboard serve) fronting that fixture over stdio
# with pass-through names. A failure through the gateway but not directly
# is the gateway's fault; one in both is the fixture's.
#
# Runs, each against both targets:
#   stable   0.1.16 default active suite (protocol up to 2025-11-25)
#   next     0.2.0-alpha.12 default (the 2025-11-25 requirements)
#   modern   0.2.0-alpha.12 --requirements 2026-07-28 (scored set; the
#            tasks extension is reported as not scored)
# Then, against the gateway fronting go-sdk's own conformance server
# (conformance/everything-server of the go-sdk version in go.mod) over
# stdio, trusted, pass-through names: stable, and modern. Its tools ask the
# legacy way for the legacy suite and the multi-round-trip way for the
# 2026-07-28 one, so both eras of client must be served by both eras of
# upstream (see "Eras" in docs/ARCHITECTURE.md).
# Then the client side (stable and next, --suite all) against
# `switchboard conformance-client`, a client built on the host package.
# Targets: 0 failures everywhere. Exits non-zero on any failure and prints
# one line per run and a closing "conformance: N passed, M failed".
# Needs scripts/peers-install.sh to have run; builds bin/switchboard.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
export PEERS="${PEERS:-$root/.cache/peers}"

mkdir -p bin
go build -o bin/switchboard ./cmd/switchboard || exit 1
go build -o bin/go-sdk-everything github.com/modelcontextprotocol/go-sdk/conformance/everything-server || exit 1
sb="$root/bin/switchboard"

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -n "${CONFORMANCE_KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

wait_ready() { # url-base
  for _ in $(seq 1 100); do
    curl -fsS "$1/healthz" >/dev/null 2>&1 && return 0
    # the fixture has no /healthz: any HTTP answer means it listens
    curl -s -o /dev/null "$1/mcp" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "conformance-all: nothing listening at $1" >&2
  return 1
}

fport="$(free_port)"
"$sb" conformance-fixture --http "127.0.0.1:$fport" 2>"$work/fixture.log" &
pids+=($!)
# The fixture is ours, so trusted: the suite checks that the gateway
# forwards its sampling requests (refused for untrusted servers by default).
cat > "$work/config.json" <<JSON
{"mcpServers": {"fixture": {"command": "$sb", "args": ["conformance-fixture"], "prefix": "", "trust": "trusted"}}}
JSON
gport="$(free_port)"
# The suite sends no token; the run is on loopback only. Each gateway has a
# throwaway home: what an earlier run approved or pinned (in
# ~/.switchboard) does not apply to this one.
"$sb" serve --config "$work/config.json" --home "$work/home-fixture" --http "127.0.0.1:$gport" --no-auth 2>"$work/gateway.log" &
pids+=($!)
cat > "$work/gosdk.json" <<JSON
{"mcpServers": {"everything": {"command": "$root/bin/go-sdk-everything", "prefix": "", "trust": "trusted"}}}
JSON
eport="$(free_port)"
"$sb" serve --config "$work/gosdk.json" --home "$work/home-gosdk" --http "127.0.0.1:$eport" --no-auth 2>"$work/gosdk-gateway.log" &
pids+=($!)
wait_ready "http://127.0.0.1:$fport" || exit 1
wait_ready "http://127.0.0.1:$gport" || { cat "$work/gateway.log" >&2; exit 1; }
wait_ready "http://127.0.0.1:$eport" || { cat "$work/gosdk-gateway.log" >&2; exit 1; }

total_pass=0; total_fail=0; status=0
run() { # label target-url line args...
  local label="$1" url="$2" line="$3"; shift 3
  local out
  out="$(CONFORMANCE_LINE="$line" CONFORMANCE_OUT="$work/$label" scripts/conformance.sh server "$url" "$@" 2>"$work/$label.err")"
  local rc=$?
  local last; last="$(printf '%s\n' "$out" | tail -n 1)"
  printf '%-18s %s\n' "$label" "$last"
  if [ "$rc" != 0 ]; then
    status=1
    grep -E '^[✗]' "$work/$label/suite.log" 2>/dev/null | grep -v ' tasks-' >&2
  fi
  local p f
  p="$(printf '%s' "$last" | sed -n 's/.*conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')"
  f="$(printf '%s' "$last" | sed -n 's/.*conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')"
  total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-1}))
}

for target in fixture gateway; do
  port="$fport"; [ "$target" = gateway ] && port="$gport"
  url="http://127.0.0.1:$port/mcp"
  run "$target-stable" "$url" stable
  run "$target-next" "$url" next
  run "$target-modern" "$url" next --requirements 2026-07-28
done
run "go-sdk-stable" "http://127.0.0.1:$eport/mcp" stable
run "go-sdk-modern" "http://127.0.0.1:$eport/mcp" next --requirements 2026-07-28
# Client side: the suite's mock servers against a client built on the host
# package. OAuth scenarios are baselined (conformance/client-baseline-*.yml)
# until Switchboard has an OAuth client; the suite fails on stale entries.
client_run() { # label line
  local label="$1" line="$2"
  local out
  out="$(CONFORMANCE_LINE="$line" CONFORMANCE_OUT="$work/$label" scripts/conformance.sh client "$sb conformance-client" \
    --suite all --expected-failures "$root/conformance/client-baseline-$line.yml" 2>"$work/$label.err")"
  local rc=$?
  local last; last="$(printf '%s\n' "$out" | tail -n 1)"
  printf '%-18s %s\n' "$label" "$last"
  if [ "$rc" != 0 ]; then
    status=1
    grep -E '^[✗]' "$work/$label/suite.log" 2>/dev/null >&2
  fi
  local p f
  p="$(printf '%s' "$last" | sed -n 's/.*conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')"
  f="$(printf '%s' "$last" | sed -n 's/.*conformance: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')"
  total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-1}))
}
client_run client-stable stable
client_run client-next next

echo "conformance: $total_pass passed, $total_fail failed"
exit "$status"
