#!/usr/bin/env bash
# scripts/test.sh -- the whole test suite, as CI runs it, from a clean clone.
#
# 1. installs the pinned npm MCP servers used as real peers, and the
#    conformance suite with a Node 22 to run it (.cache/peers); and
#    Debian's chromium for the status page's browser test, when it is
#    missing and this runs as root;
# 2. checks formatting, go vet, that the module builds for macOS and that
#    go.mod is tidy, and runs the Go examples, modules of their own
#    (examples/library: the host; examples/server: a server over stdio and
#    HTTP);
# 3. runs each fuzz target briefly (FUZZTIME, default 10s each, one worker
#    each, FUZZJOBS targets at a time, default 2), and meanwhile
# 4. the official MCP conformance suite against the fixture, through the
#    gateway, and through the gateway in front of go-sdk's conformance
#    server (scripts/conformance-all.sh; 0 failures required);
# 5. runs every test under the race detector (last, so its summary closes
#    the log).
#
# PostgreSQL's initdb and postgres must be installed (on $PATH or under
# /usr/lib/postgresql/*/bin): the PostgreSQL store's tests fail without them.
# HAProxy (Debian's package) runs in front of the replicas of the cluster
# test: installed here with apt-get when missing and run as root, else the
# script stops saying so.
#
# Set SWITCHBOARD_SKIP_FUZZ=1 to skip step 3 while iterating.
set -euo pipefail
cd "$(dirname "$0")/.."

# step names a stage, and how long the run has taken so far (the time each
# stage takes is the difference between two of these lines).
step() { printf '\n=== %s (at %dm%02ds)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)) >&2; }

step "peers"
SWITCHBOARD_PEERS="$(scripts/peers-install.sh)"
export SWITCHBOARD_PEERS
# In CI a missing peer is a failure, never a skip (see internal/testkit/peers).
export SWITCHBOARD_REQUIRE_PEERS=1
# Likewise PostgreSQL: the store tests start a throwaway cluster with the
# machine's initdb and postgres, and fail without them (see
# internal/testkit/pgtest).
export SWITCHBOARD_REQUIRE_POSTGRES=1
# Likewise the browser: internal/ui drives the status page in headless
# Chromium (Debian's chromium package), installed here when missing.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium (apt-get) for the status page's browser test" >&2
    apt-get install -y chromium >&2 || { apt-get update >&2 && apt-get install -y chromium >&2; }
  else
    echo "chromium is missing and this is not root: install Debian's chromium package" >&2
  fi
fi
export SWITCHBOARD_REQUIRE_BROWSER=1

step "haproxy"
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "haproxy is not installed: apt-get install haproxy (as root), then run this again" >&2; exit 1
  fi
  apt-get install -y haproxy || { apt-get update && apt-get install -y haproxy; }
fi
# The cluster test (internal/cli, TestCluster) fails without it, never skips.
export SWITCHBOARD_REQUIRE_HAPROXY=1

step "gofmt"
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2; echo "$unformatted" >&2; exit 1
fi

step "go vet"
go vet ./...

step "build for macOS (GOOS=darwin)"
GOOS=darwin GOARCH=arm64 go build ./...

step "examples (examples/library and examples/server: modules of their own, the public API only)"
(cd examples/library && go vet ./... && go test -count=1 ./...)
(cd examples/server && go vet ./... && go test -count=1 ./...)

step "go mod tidy"
cp go.mod /tmp/switchboard-go.mod.$$ && cp go.sum /tmp/switchboard-go.sum.$$
go mod tidy
if ! cmp -s go.mod /tmp/switchboard-go.mod.$$ || ! cmp -s go.sum /tmp/switchboard-go.sum.$$; then
  echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit" >&2
  cp /tmp/switchboard-go.mod.$$ go.mod; cp /tmp/switchboard-go.sum.$$ go.sum
  rm -f /tmp/switchboard-go.*.$$; exit 1
fi
rm -f /tmp/switchboard-go.*.$$

# fuzz_one PKG DIR FUNC: fuzz one target for FUZZTIME with one worker, with
# the package's fuzzing test binary (built once per package, by whichever
# target of it comes first, under a lock; go test -fuzz would link it again
# for each target), run in the package's directory as go test runs it.
# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline
# exceeded" as -fuzztime expires on a loaded machine, with no failing input
# (go.dev/issue/75804, fixed in Go 1.27). That, and only that, is run once
# more; anything else fails at once.
fuzz_one() {
  local pkg="$1" dir="$2" f="$3" out attempt begin="$EPOCHREALTIME"
  local bin="$FUZZBIN/$(printf '%s' "$pkg" | tr '/' '_').test"
  out="$(mktemp)"
  (
    flock 9
    [ -x "$bin" ] || go test -c -fuzz . -o "$bin" "$pkg"
  ) 9>"$bin.lock" || { rm -f "$out"; echo "fuzz $pkg: the test binary did not build" >&2; return 1; }
  for attempt in 1 2; do
    if (cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^$f\$" -test.fuzztime "${FUZZTIME:-10s}" -test.parallel 1 \
      -test.fuzzcachedir "$FUZZCACHE/$pkg" -test.paniconexit0 -test.timeout 10m) >"$out" 2>&1; then
      rm -f "$out"
      awk -v p="$pkg" -v f="$f" -v a="$begin" -v b="$EPOCHREALTIME" 'BEGIN { printf "fuzz %s %s: %.1fs\n", p, f, b - a }' >&2
      return 0
    fi
    if [ "$attempt" = 2 ] || ! grep -qx '    context deadline exceeded' "$out" ||
      grep -q 'Failing input written\|panic:\|_test\.go:[0-9]' "$out"; then
      break
    fi
    echo "fuzz $pkg $f: 'context deadline exceeded' with no failing input (go.dev/issue/75804); running it again" >&2
  done
  cat "$out" >&2; rm -f "$out"
  echo "fuzz target $f in $pkg failed; the failing input is under its testdata/fuzz" >&2
  return 1
}
export -f fuzz_one
export FUZZTIME

# The conformance suite runs alongside the fuzz targets: it spends most of
# its time waiting on its clients, and the fuzz targets run for a fixed time
# however busy the machine is.
conformance_log="$(mktemp)"
conformance() {
  local begin=$SECONDS rc=0
  scripts/conformance-all.sh || rc=$?
  echo "conformance-all took $((SECONDS - begin))s" >&2
  return "$rc"
}
step "conformance (official MCP suite: fixture direct, through the gateway, and go-sdk's server through the gateway), in the background"
conformance >"$conformance_log" 2>&1 &
conformance_pid=$!

if [ "${SWITCHBOARD_SKIP_FUZZ:-0}" != 1 ]; then
  step "fuzz (${FUZZTIME:-10s} each, one worker each, ${FUZZJOBS:-2} targets at a time)"
  FUZZBIN="$(mktemp -d)"
  FUZZCACHE="$(go env GOCACHE)/fuzz" # where go test -fuzz keeps what it found
  export FUZZBIN FUZZCACHE
  # Every Fuzz* function in the module, the first of each package first
  # (so that the two at a time rarely wait on one package's build). Each
  # target gets one worker and FUZZJOBS run at once: on a 2-core machine,
  # as much fuzzing per target as one target at a time with a worker per
  # core, in half the time.
  for pkg in $(go list ./...); do
    dir="$(go list -f '{{.Dir}}' "$pkg")"
    n=0
    for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
      printf '%d %s %s %s\n' "$n" "$pkg" "$dir" "$f"
      n=$((n + 1))
    done
  done | sort -s -n -k1,1 | cut -d' ' -f2- | xargs -P "${FUZZJOBS:-2}" -n 3 bash -c 'fuzz_one "$0" "$1" "$2"' || {
    rm -rf "$FUZZBIN"; kill "$conformance_pid" 2>/dev/null
    echo "a fuzz target failed (above)" >&2; exit 1
  }
  rm -rf "$FUZZBIN"
fi

step "conformance (its output)"
conformance_rc=0
wait "$conformance_pid" || conformance_rc=$?
cat "$conformance_log" >&2; rm -f "$conformance_log"
[ "$conformance_rc" = 0 ] || { echo "the conformance suite failed (above)" >&2; exit 1; }

step "go test -race"
# Three packages at a time on two cores (go test's default is one per
# CPU): the tests of the big packages mostly wait on the processes and
# connections they start. On a quiet 2-core machine this stage takes about
# 240 s so, at 180% CPU, against 300 s two at a time.
go test -race -count=1 -p 3 -timeout 20m ./...

step "done"
