#!/usr/bin/env bash
# floor.sh: identityd's REST read path against the net/http floor, side by
# side in one run.
#
# It builds identityd (from SRC, default this tree) and scripts/floor (from
# this tree), creates a bbolt database in a temporary directory with the
# workspace "bench", a key with users:read and user_attributes:read, and
# USERS users with three attributes each (JSON Lines, all sharing one
# precomputed argon2id hash), starts `identityd serve` on loopback, then
# starts floor: a bare net/http handler that answers with the very status,
# headers and body identityd answered a sample of each case with (see
# scripts/floor/main.go). wrk then runs each case against the floor and
# against identityd in turn, ROUNDS times:
#
#   user        GET /t/bench/api/v1/users/{id}             id random in 1..USERS
#   attributes  GET /t/bench/api/v1/users/{id}/attributes  id random in 1..USERS
#   search      GET /t/bench/api/v1/users?search=$SEARCH&limit=20 (user00012: 10 matches of 100,000)
#
# Both servers get the same requests (the same Lua script and bearer key)
# and share the CPUs with wrk, one at a time. It prints, for each case and
# round, requests/s, p50/p99 and the CPU time the server process spent a
# request (its user and system time over the run, from /proc/PID/stat,
# over wrk's requests) of each, and identityd's share of the floor, then
# stops both servers and removes the temporary directory. Everything
# listens on 127.0.0.1 only, and every step is bounded in time.
#
# At the end it prints identityd's resident memory after the runs (VmRSS,
# its peak VmHWM, and its parts: RssAnon, the process's own memory, and
# RssFile, the pages of the mapped bbolt file, which are the kernel's page
# cache, shared and reclaimable).
#
# Usage: scripts/floor.sh
# Environment (defaults): SRC (this tree: where identityd is built from),
# USERS (100000), DURATION (10s, in seconds), ROUNDS (2), THREADS (2),
# CONNECTIONS (32), CASES (user attributes search: the cases to run),
# ACCESS_LOG (true: identityd logs each request, to a
# file, as it does by default), SEARCH (user00012: the search case's
# prefix), DB (none: a bbolt file with the workspace "bench" and ids
# 1..USERS to serve instead of a new one, such as the 10,000,000-user
# file of scripts/bench10m.sh; a key named floor is added to it).
#
# wrk is installed from Debian's packages when missing (needs root).
set -euo pipefail
cd "$(dirname "$0")/.."
HERE=$PWD

SRC=${SRC:-$HERE}
USERS=${USERS:-100000}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-2}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
ACCESS_LOG=${ACCESS_LOG:-true}
CASES=${CASES:-user attributes search}
SEARCH=${SEARCH:-user00012}
# A valid argon2id PHC string (m=19 MiB, t=2, p=1) that every user shares.
HASH='$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo'

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'floor: %s\n' "$*" >&2; exit 1; }

# shellcheck source=ensure_wrk.sh
. scripts/ensure_wrk.sh

WORK=$(mktemp -d "${TMPDIR:-/tmp}/identityd-floor.XXXXXX")
PIDS=()
# stop PID: TERM, up to 10 s, then KILL.
stop() {
  local pid=$1
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  for pid in "${PIDS[@]}"; do stop "$pid"; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for FILE PATTERN [SECONDS]: prints the first match of the sed
# PATTERN in FILE within SECONDS (default 10).
wait_for() {
  local file=$1 pattern=$2 secs=${3:-10} got
  for _ in $(seq $((secs * 10))); do
    got=$(sed -n "$pattern" "$file" | head -n1)
    [ -n "$got" ] && { echo "$got"; return; }
    sleep 0.1
  done
  die "nothing in $file after $secs s: $(cat "$file")"
}

for kind in $CASES; do
  case $kind in user | attributes | search) ;; *) die "CASES: no case $kind (user, attributes, search)" ;; esac
done
ensure_wrk
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
BIN=$WORK/identityd
FLOOR=$WORK/floor
REUSE=${DB:-}
DB=${REUSE:-$WORK/identity.db}
log "go build identityd (from $SRC) and scripts/floor"
(cd "$SRC" && timeout 300 go build -o "$BIN" ./examples/identityd)
timeout 300 go build -o "$FLOOR" ./scripts/floor
SRC_REV=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$SRC" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  SRC_REV="$SRC_REV + uncommitted changes"
fi

if [ -n "$REUSE" ]; then
  log "reusing $DB ($USERS users): a key"
  KEY=$("$BIN" -db "$DB" key create -workspace bench -scopes users:read,user_attributes:read -name floor)
else
  log "workspace, key, $USERS users with 3 attributes each"
  "$BIN" -db "$DB" workspace create bench >/dev/null
  KEY=$("$BIN" -db "$DB" key create -workspace bench -scopes users:read,user_attributes:read -name floor)
  awk -v n="$USERS" -v hash="$HASH" 'BEGIN {
    for (i = 1; i <= n; i++)
      printf "{\"username\":\"user%06d\",\"email\":\"user%06d@example.com\",\"fullName\":\"User %06d\",\"passwordHash\":\"%s\",\"emailVerified\":true,\"attributes\":{\"department\":\"dept%d\",\"tier\":\"gold\",\"employee_id\":\"%d\"}}\n", i, i, i, hash, i % 50, i
  }' >"$WORK/users.jsonl"
  timeout 120 "$BIN" -db "$DB" user import -workspace bench -file "$WORK/users.jsonl" >/dev/null
fi

log "identityd serve"
STARTED=$(date +%s.%N)
"$BIN" -db "$DB" serve -addr 127.0.0.1:0 -admin-socket off -access-log="$ACCESS_LOG" 2>"$WORK/server.log" &
PIDS+=($!)
ADDR=$(wait_for "$WORK/server.log" 's/.*msg=listening addr=\([^ ]*\).*/\1/p' 300)
STARTUP=$(awk -v a="$STARTED" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }')
for _ in $(seq 100); do
  curl -fsS -m 2 "http://$ADDR/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
IDENTITYD=http://$ADDR

MID=$((USERS / 2))
USER_PATH=/t/bench/api/v1/users/$MID
ATTRIBUTES_PATH=/t/bench/api/v1/users/$MID/attributes
SEARCH_PATH="/t/bench/api/v1/users?search=$SEARCH&limit=20"

log "floor"
FLOOR_KEY=$KEY "$FLOOR" -upstream "$IDENTITYD" -user "$USER_PATH" -attributes "$ATTRIBUTES_PATH" \
  -search "$SEARCH_PATH" >"$WORK/floor.out" 2>"$WORK/floor.log" &
PIDS+=($!)
FLOOR_URL=http://$(wait_for "$WORK/floor.out" 's/^listening \(.*\)/\1/p')

# Both answer each case alike, byte for byte but for the Date header.
for path in "$USER_PATH" "$ATTRIBUTES_PATH" "$SEARCH_PATH"; do
  a=$(curl -sS -m 5 -i -H "Authorization: Bearer $KEY" "$IDENTITYD$path" | grep -iv '^date:')
  b=$(curl -sS -m 5 -i -H "Authorization: Bearer $KEY" "$FLOOR_URL$path" | grep -iv '^date:')
  [ "$a" = "$b" ] || die "floor and identityd answer GET $path differently:
$a
--
$b"
  case $a in "HTTP/1.1 200"*) ;; *) die "GET $path: $a" ;; esac
done

# Each wrk thread has its own Lua state; seed each differently.
for kind in user attributes; do
  suffix=""
  [ "$kind" = attributes ] && suffix="/attributes"
  cat >"$WORK/$kind.lua" <<EOF
local n = $USERS
local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
end
function init(args)
  math.randomseed(os.time() * 1000 + (seed or 0))
end
function request()
  return wrk.format("GET", "/t/bench/api/v1/users/" .. math.random(1, n) .. "$suffix")
end
EOF
done

# cputicks PID prints the user and system time PID has spent, in clock
# ticks (fields 14 and 15 of /proc/PID/stat; the command name before them
# has no spaces here).
cputicks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# bench BASE PID CASE prints requests/s, p50, p99, the CPU time in µs the
# server PID spent a request and the non-2xx answers of wrk's run.
bench() {
  local base=$1 pid=$2 kind=$3 out=$WORK/wrk.txt secs=${DURATION%s} before
  local args=("$base$USER_PATH")
  case $kind in
    user | attributes) args=(-s "$WORK/$kind.lua" "$base$USER_PATH") ;;
    search) args=("$base$SEARCH_PATH") ;;
  esac
  before=$(cputicks "$pid")
  timeout $((secs + 30)) wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency \
    -H "Authorization: Bearer $KEY" "${args[@]}" >"$out"
  awk -v ticks=$(($(cputicks "$pid") - before)) -v hz="$(getconf CLK_TCK)" '
    /requests in/ { n = $1 }
    /Requests\/sec:/ { rps = $2 }
    /^ +50%/ { p50 = $2 }
    /^ +99%/ { p99 = $2 }
    /Non-2xx or 3xx responses:/ { bad = $NF }
    END { printf "%s %s %s %.1f %s\n", rps, p50, p99, (n > 0 ? ticks * 1e6 / hz / n : 0), (bad == "" ? 0 : bad) }
  ' "$out"
}

results=()
for round in $(seq "$ROUNDS"); do
  for kind in $CASES; do
    log "round $round: $kind (floor, then identityd)"
    read -r frps fp50 fp99 fcpu fbad < <(bench "$FLOOR_URL" "${PIDS[1]}" "$kind")
    read -r irps ip50 ip99 icpu ibad < <(bench "$IDENTITYD" "${PIDS[0]}" "$kind")
    [ "$fbad$ibad" = 00 ] || die "non-2xx answers in round $round, $kind: floor $fbad, identityd $ibad"
    share=$(awk -v a="$irps" -v b="$frps" 'BEGIN { printf "%.0f%%", 100 * a / b }')
    results+=("$(printf "%-11s %5s %12s %9s %9s %8s %12s %9s %9s %8s %7s" "$kind" "$round" "$frps" "$fp50" "$fp99" "$fcpu" "$irps" "$ip50" "$ip99" "$icpu" "$share")")
  done
done

echo
echo "identityd ($SRC_REV) against the net/http floor over loopback: $USERS users,"
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency, $ROUNDS rounds, access log $ACCESS_LOG"
echo "machine: $(nproc) CPUs, $(go version | cut -d' ' -f3-), $(wrk --version 2>&1 | head -n1 | cut -d' ' -f1-2), load average before: $LOAD_BEFORE"
echo
printf "%-11s %5s %12s %9s %9s %8s %12s %9s %9s %8s %7s\n" case round "floor req/s" p50 p99 "µs/req" "identityd" p50 p99 "µs/req" share
printf '%s\n' "${results[@]}"
echo
echo "user:       GET /t/bench/api/v1/users/{id}, id random in 1..$USERS"
echo "attributes: GET /t/bench/api/v1/users/{id}/attributes, id random in 1..$USERS"
echo "search:     GET $SEARCH_PATH"
echo "µs/req:     the server process's CPU time (user and system) over the run, a request"
rss=$(awk '/^VmRSS:/ { rss = $2 } /^VmHWM:/ { hwm = $2 } /^RssAnon:/ { anon = $2 } /^RssFile:/ { file = $2 }
  END { printf "%.0f MiB (peak %.0f MiB): %.0f MiB of the process'"'"'s own memory, %.0f MiB of the mapped file'"'"'s pages (page cache)", rss / 1024, hwm / 1024, anon / 1024, file / 1024 }' "/proc/${PIDS[0]}/status")
echo "identityd resident memory after the runs: $rss, serving $(du -m "$DB" | cut -f1) MiB on disk"
echo "identityd start to listening (opening the file): $STARTUP"
