#!/usr/bin/env bash
# scripts/test.sh -- the whole test suite, as CI runs it, from a clean clone.
#
# 1. installs the pinned npm MCP servers used as real peers (.cache/peers);
# 2. checks formatting, go vet and that go.mod is tidy;
# 3. runs every test under the race detector;
# 4. runs each fuzz target briefly (FUZZTIME, default 10s each).
#
# Set SWITCHBOARD_SKIP_FUZZ=1 to skip step 4 while iterating.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s\n' "$*" >&2; }

step "peers"
SWITCHBOARD_PEERS="$(scripts/peers-install.sh)"
export SWITCHBOARD_PEERS
# In CI a missing peer is a failure, never a skip (see internal/testkit/peers).
export SWITCHBOARD_REQUIRE_PEERS=1

step "gofmt"
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2; echo "$unformatted" >&2; exit 1
fi

step "go vet"
go vet ./...

step "go mod tidy"
cp go.mod /tmp/switchboard-go.mod.$$ && cp go.sum /tmp/switchboard-go.sum.$$
go mod tidy
if ! cmp -s go.mod /tmp/switchboard-go.mod.$$ || ! cmp -s go.sum /tmp/switchboard-go.sum.$$; then
  echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit" >&2
  cp /tmp/switchboard-go.mod.$$ go.mod; cp /tmp/switchboard-go.sum.$$ go.sum
  rm -f /tmp/switchboard-go.*.$$; exit 1
fi
rm -f /tmp/switchboard-go.*.$$

step "go test -race"
go test -race -count=1 -timeout 20m ./...

if [ "${SWITCHBOARD_SKIP_FUZZ:-0}" != 1 ]; then
  step "fuzz (${FUZZTIME:-10s} each)"
  # Every Fuzz* function in the module, one at a time (go test -fuzz takes one).
  for pkg in $(go list ./...); do
    dir="$(go list -f '{{.Dir}}' "$pkg")"
    for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
      echo "fuzz $pkg $f" >&2
      go test -run '^$' -fuzz "^$f\$" -fuzztime "${FUZZTIME:-10s}" "$pkg" >/dev/null
    done
  done
fi
step "all tests passed"
