#!/usr/bin/env bash
# Throughput of several replicas behind HAProxy: BenchmarkCluster
# (internal/cli/cluster_bench_test.go) runs 1, 2 and 3 `switchboard serve`
# replicas sharing one throwaway PostgreSQL, behind HAProxy with docs/REPLICAS.md's
# configuration, the demo server and the npm server-everything as upstreams,
# 16 callers of 2026-07-28 calls; it reports calls/s, p50/p99 and the CPU
# per call of each party. See docs/PERFORMANCE.md.
#
# Usage: scripts/bench-cluster.sh [out.txt]
#   ROUNDS     rounds (default 6); each starts the cluster afresh and runs
#              replicas=1, 2 and 3 side by side, so drift hits all three
#   BENCHTIME  calls per sub-benchmark and round (default 3000x)
#   SWITCHBOARD_BENCH_PPROF=ADDR  replica A serves its profiles on ADDR
#
# Needs haproxy, PostgreSQL's initdb and postgres, and the npm peers
# (scripts/peers-install.sh; SWITCHBOARD_PEERS names them).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${ROUNDS:-6}
benchtime=${BENCHTIME:-3000x}
out=${1:-${TMPDIR:-/tmp}/bench-cluster-$(date +%Y%m%d-%H%M%S).txt}
benchstat=${BENCHSTAT:-$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")}
export SWITCHBOARD_PEERS="${SWITCHBOARD_PEERS:-$root/.cache/peers}"
export SWITCHBOARD_REQUIRE_PEERS=1 SWITCHBOARD_REQUIRE_POSTGRES=1 SWITCHBOARD_REQUIRE_HAPROXY=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/cli.test
(cd "$root" && go test -c -o "$bin" ./internal/cli)

{
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(go version) $(git -C "$root" rev-parse --short HEAD)"
	echo "# nproc=$(nproc) load=$(cut -d' ' -f1-3 /proc/loadavg) $(PATH="$PATH:/usr/sbin" haproxy -v | sed -n 1p)"
	echo "# rounds=$rounds benchtime=$benchtime"
} >"$out"
for i in $(seq "$rounds"); do
	echo "== round $i/$rounds" >&2
	(cd "$root/internal/cli" && "$bin" -test.run '^$' -test.bench '^BenchmarkCluster$' \
		-test.benchtime "$benchtime" -test.count 1) | tee -a "$out"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out"

echo
echo "raw results: $out"
if [ -x "$benchstat" ]; then
	"$benchstat" -col /replicas "$out"
else
	echo "benchstat not found; go install golang.org/x/perf/cmd/benchstat@latest" >&2
fi
