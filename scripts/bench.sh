#!/usr/bin/env bash
# Gateway overhead benchmarks: an echo tool call through the gateway versus
# the same call made directly to the upstream (internal/gateway/bench_test.go),
# and through a bare forwarder that does no MCP work (path=floor,
# internal/gateway/floor_test.go): what the extra hop alone costs; and
# through the gateway by a client pinned to protocol 2025-11-25
# (path=gateway-legacy), as today's editors and desktop clients connect.
# BenchmarkEchoApart (internal/gateway/apart_test.go) is the same with the
# HTTP upstream, the gateway and the forwarder each in its own process, as
# they are deployed: BENCH='^BenchmarkEchoApart$' runs it, and
# BENCH='^BenchmarkEcho(Apart)?$' both. See docs/PERFORMANCE.md.
#
# Usage: scripts/bench.sh [out.txt]
#   COUNT      rounds (default 6; benchstat wants >= 6 for its intervals)
#   BENCHTIME  -benchtime per sub-benchmark and round (default 2s)
#   BENCH      -bench pattern (default ^BenchmarkEcho$)
#   BENCHSTAT  benchstat binary (default: benchstat on PATH, else $GOPATH/bin)
#
# The test binary is built once and run COUNT times with -count 1, so that
# direct and gateway sub-benchmarks interleave across rounds instead of
# each running COUNT times in a row (drift then hits both paths alike).
# It is the same measurement as
#   go test -run '^$' -bench '^BenchmarkEcho$' -benchtime 2s -count 6 ./internal/gateway
# Raw results go to out.txt (default bench-<date>.txt under $TMPDIR), then
# benchstat compares the paths (-col /path) and the ratios gateway/direct
# are printed.
#
# Benchstat is a measuring tool only, never a dependency of the module:
#   go install golang.org/x/perf/cmd/benchstat@latest
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
count=${COUNT:-6}
benchtime=${BENCHTIME:-2s}
pattern=${BENCH:-^BenchmarkEcho\$}
out=${1:-${TMPDIR:-/tmp}/bench-$(date +%Y%m%d-%H%M%S).txt}
benchstat=${BENCHSTAT:-$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/gateway.test
(cd "$root" && go test -c -o "$bin" ./internal/gateway)

: >"$out"
{
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(go version)"
	echo "# nproc=$(nproc) cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "# count=$count benchtime=$benchtime bench=$pattern"
} >>"$out"
for i in $(seq "$count"); do
	echo "== round $i/$count" >&2
	# Run from the package directory, as go test does.
	(cd "$root/internal/gateway" && "$bin" -test.run '^$' -test.bench "$pattern" \
		-test.benchtime "$benchtime" -test.count 1) | tee -a "$out"
done

echo
echo "raw results: $out"
if [ ! -x "$benchstat" ]; then
	echo "benchstat not found; go install golang.org/x/perf/cmd/benchstat@latest" >&2
	exit 0
fi
"$benchstat" -col /path "$out"

# Ratios of the medians to path=direct (p50 and p99 at conc=1 and 16,
# calls/s, allocs/op); in brackets the bare forwarder's (path=floor).
echo
echo "ratios gateway/direct (medians) [in brackets: floor/direct, the bare forwarder of internal/gateway/floor_test.go]"
"$benchstat" -col /path -format csv "$out" 2>/dev/null | awk -F, '
	/^,direct,/ { next }
	/^,/ { unit = $2; next }
	$1 ~ /^Echo(Apart)?\// && $2 != "" && $4 != "" {
		name = $1; sub(/^Echo\//, "", name); sub(/^EchoApart\//, "apart ", name); sub(/-[0-9]+$/, "", name)
		if (!(name in seen)) { seen[name] = 1; order[++n] = name }
		r[name, unit] = $4 / $2
		if ($8 != "") f[name, unit] = $8 / $2
		if ($12 != "") l[name, unit] = $12 / $2
	}
	function cell(name, unit) {
		if (!((name, unit) in r)) return sprintf("%-16s", "-")
		return sprintf("%5.2f%s", r[name, unit], ((name, unit) in f) ? sprintf(" [%4.2f]", f[name, unit]) : "       ")
	}
	function lcell(name, unit) {
		if (!((name, unit) in l)) return sprintf("%-16s", "-")
		return sprintf("%5.2f       ", l[name, unit])
	}
	END {
		printf "%-44s %-29s %-29s %-29s %s\n", "benchmark", "p50", "p99", "calls/s", "allocs/op"
		for (i = 1; i <= n; i++) {
			name = order[i]
			printf "%-44s %-29s %-29s %-29s %5.2f\n", name, cell(name, "p50-µs"), cell(name, "p99-µs"), cell(name, "calls/s"), r[name, "allocs/op"]
		}
		print ""
		print "ratios gateway-legacy/direct: a client pinned to 2025-11-25 (initialize, a session) through the gateway,"
		print "as Claude Code and Claude Desktop connect; for up=http-legacy the direct client speaks 2025-11-25 too"
		printf "%-44s %-29s %-29s %-29s %s\n", "benchmark", "p50", "p99", "calls/s", "allocs/op"
		for (i = 1; i <= n; i++) {
			name = order[i]
			if (!((name, "p50-µs") in l)) continue
			printf "%-44s %-29s %-29s %-29s %5.2f\n", name, lcell(name, "p50-µs"), lcell(name, "p99-µs"), lcell(name, "calls/s"), l[name, "allocs/op"]
		}
	}'
