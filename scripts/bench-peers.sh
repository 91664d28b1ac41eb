#!/usr/bin/env bash
# scripts/bench-peers.sh -- Switchboard side by side with its peers, each
# party in its own process as deployed: `switchboard serve` against
# TBXark/mcp-proxy (the fastest Go peer), direct go-sdk and the floors,
# through the peer harness in ../shared/bench (a go-sdk client speaking
# 2025-11-25, as Claude Code and Cursor connect). Interleaved rounds; the
# harness computes ratios within each round. See docs/PERFORMANCE.md.
#
# Usage: TBXARK_BIN=/path/to/mcp-proxy scripts/bench-peers.sh [-r ROUNDS] [-o OUT] [-s "SCENARIOS"]
#   -r  rounds (default 3)
#   -o  output directory (default a new one under $TMPDIR); summary.md there
#   -s  harness scenarios (default: the eight HTTP cells against TBXark,
#       stdio->stdio, and the direct runs they are compared with)
#   BENCH_DIR  the harness (default ../shared/bench beside the repository)
#
# TBXark/mcp-proxy is not on the Go module proxy: build it from a snapshot
# of its repository as ../shared/bench/README.md says; without TBXARK_BIN
# its scenarios are skipped. Runs in a private network namespace
# (unshare -n) when it can, so that nothing leaves loopback.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=3
out=""
scenarios="tbxark-http-stdio switchboard-http-stdio tbxark-http-http switchboard-http-http switchboard-stdio-stdio direct-stdio direct-http-stateless"
while getopts "r:o:s:" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	o) out=$OPTARG ;;
	s) scenarios=$OPTARG ;;
	*) exit 2 ;;
	esac
done
bench=${BENCH_DIR:-$root/../shared/bench}
[ -f "$bench/run.sh" ] || { echo "bench-peers: no harness at $bench (set BENCH_DIR)" >&2; exit 2; }
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/bench-peers.XXXX")}
mkdir -p "$out"
out=$(cd "$out" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The harness builds into its own directory, which may be read-only.
cp -r "$bench" "$work/bench"
(cd "$root" && go build -o "$work/switchboard" ./cmd/switchboard)
export SWITCHBOARD_BIN="$work/switchboard"

run="cd '$work/bench' && ./run.sh -r '$rounds' -o '$out' -s '$scenarios'"
if unshare -n true 2>/dev/null; then
	unshare -n bash -c "ip link set lo up && $run"
else
	echo "bench-peers: unshare -n is not permitted here; running on loopback" >&2
	bash -c "$run"
fi
echo "bench-peers: $out/summary.md"
